package driver

import (
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Latency histograms record microseconds from 1 us to 60 s with 3
// significant digits (0.1% resolution); longer transactions are recorded
// as 60 s. The per-second histograms behind the series need only p50 and
// p99 and use 2 digits (1%), a seventh of the memory; so do the service
// time and the lateness of paced starts, secondary figures. Deferred
// Deliveries wait in a queue whose limit is 80 s: their histograms reach
// an hour.
const (
	latencyMinMicros   = 1
	latencyMaxMicros   = 60_000_000
	latencyDigits      = 3
	secondLatencyDigit = 2
	deferredMaxMicros  = 3_600_000_000
)

func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyMinMicros, latencyMaxMicros, latencyDigits)
}

func newSecondHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyMinMicros, latencyMaxMicros, secondLatencyDigit)
}

func newDeferredHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyMinMicros, deferredMaxMicros, latencyDigits)
}

// micros converts a latency to histogram units, clamped to the range.
func micros(d time.Duration) int64 {
	us := d.Microseconds()
	return min(max(us, latencyMinMicros), latencyMaxMicros)
}

// deferredMicros converts a deferred Delivery's wait to histogram units.
func deferredMicros(d time.Duration) int64 {
	return min(max(d.Microseconds(), latencyMinMicros), deferredMaxMicros)
}

// kindStats are the measured figures of one transaction kind for one
// virtual user. Only the owning virtual user writes them; they are read
// after it has ended.
type kindStats struct {
	completed  int64 // committed, or rolled back as the specification asks
	rolledBack int64 // New-Order rollbacks on the unused item (2.4.2.3)
	retried    int64 // retries after a retryable failure
	failed     [dialect.NumErrClasses]int64
	// latency is the response time, from the intended start (the end of
	// keying, the rate's schedule, or the actual start when unpaced);
	// service is from the moment the session was asked.
	latency *hdrhistogram.Histogram
	service *hdrhistogram.Histogram
}

// liveCounts are every transaction's outcome since the run started, for
// the live line. The owning virtual user adds; the schedule reads.
type liveCounts struct {
	done      atomic.Int64 // committed plus rolled back
	newOrders atomic.Int64 // committed New-Orders
	errors    atomic.Int64
}

// secondCounts is what a virtual user measured since the last per-second
// sample.
type secondCounts struct {
	done, newOrders, errors int64
}

// secondStats is a virtual user's share of the current second of the
// measured window. The virtual user and the schedule both touch it, under
// mu; nobody else does, so the lock is never contended beyond these two.
type secondStats struct {
	mu      sync.Mutex
	counts  secondCounts
	latency *hdrhistogram.Histogram
	spare   *hdrhistogram.Histogram
}

// record adds one measured outcome to the current second.
func (s *secondStats) record(done, newOrder, failed bool, us int64) {
	s.mu.Lock()
	if done {
		s.counts.done++
		_ = s.latency.RecordValue(us)
	}
	if newOrder {
		s.counts.newOrders++
	}
	if failed {
		s.counts.errors++
	}
	s.mu.Unlock()
}

// take returns the counts and latencies of the second and starts a new
// one. The returned histogram stays valid until the next take.
func (s *secondStats) take() (secondCounts, *hdrhistogram.Histogram) {
	s.spare.Reset()
	s.mu.Lock()
	c := s.counts
	s.counts = secondCounts{}
	h := s.latency
	s.latency, s.spare = s.spare, h
	s.mu.Unlock()
	return c, h
}

// vuStats is everything one virtual user (or pooled session) measures.
type vuStats struct {
	kinds  [tpcc.NumTxKinds]kindStats
	audit  tpcc.Audit
	live   liveCounts
	second secondStats

	// Paced modes: how late transactions started against their schedule
	// (startLag), and in the tpc-c pool, of that, how long a due terminal
	// waited for a session (sessionWait).
	startLag    *hdrhistogram.Histogram
	sessionWait *hdrhistogram.Histogram

	// deferred is what a deferred-Delivery session measures; nil otherwise.
	deferred *deferredStats
	// gaps: the user's completions inside the window, for the stalls.
	gaps gapLog
}

func newVUStats(warehouses int) *vuStats {
	s := &vuStats{audit: tpcc.NewAudit(warehouses)}
	for k := range s.kinds {
		s.kinds[k].latency = newLatencyHistogram()
		s.kinds[k].service = newSecondHistogram()
	}
	s.second.latency = newSecondHistogram()
	s.second.spare = newSecondHistogram()
	s.startLag = newSecondHistogram()
	s.sessionWait = newSecondHistogram()
	return s
}

// deferredStats are the deferred Deliveries (TPC-C 2.7.2) one delivery
// session executed inside the measured window.
type deferredStats struct {
	completed   int64
	retried     int64
	failed      [dialect.NumErrClasses]int64
	skipped     int64 // districts skipped: no undelivered order (2.7.4.2)
	withSkipped int64 // Deliveries that skipped at least one district
	late        int64 // completed more than tpcc.DeferredDeliveryLimit after queued
	// queue is from queued to the start of execution; completion from
	// queued to completed (the 80 s constraint).
	queue      *hdrhistogram.Histogram
	completion *hdrhistogram.Histogram
	records    []deliveryRecord
	dropped    int64 // records beyond maxDeliveryRecords
}

func newDeferredStats() *deferredStats {
	return &deferredStats{queue: newDeferredHistogram(), completion: newDeferredHistogram()}
}

// deliveryRecord is one deferred Delivery's line of the result file of
// TPC-C 2.7.2.3: when it was queued, its warehouse and carrier, when it
// started and completed, and how many districts it skipped.
type deliveryRecord struct {
	queued, started, ended time.Time
	wID, carrierID         int
	skipped                int
}

// maxDeliveryRecords bounds the deliveries kept one by one per session,
// so that a long run with many terminals keeps a result of sane size;
// the counts and histograms cover them all.
const maxDeliveryRecords = 100_000
