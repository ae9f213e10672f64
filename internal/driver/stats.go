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
// p99 and use 2 digits (1%), a seventh of the memory.
const (
	latencyMinMicros   = 1
	latencyMaxMicros   = 60_000_000
	latencyDigits      = 3
	secondLatencyDigit = 2
)

func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyMinMicros, latencyMaxMicros, latencyDigits)
}

func newSecondHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyMinMicros, latencyMaxMicros, secondLatencyDigit)
}

// micros converts a latency to histogram units, clamped to the range.
func micros(d time.Duration) int64 {
	us := d.Microseconds()
	return min(max(us, latencyMinMicros), latencyMaxMicros)
}

// kindStats are the measured figures of one transaction kind for one
// virtual user. Only the owning virtual user writes them; they are read
// after it has ended.
type kindStats struct {
	completed  int64 // committed, or rolled back as the specification asks
	rolledBack int64 // New-Order rollbacks on the unused item (2.4.2.3)
	retried    int64 // retries after a retryable failure
	failed     [dialect.NumErrClasses]int64
	latency    *hdrhistogram.Histogram
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

// vuStats is everything one virtual user measures.
type vuStats struct {
	kinds  [tpcc.NumTxKinds]kindStats
	audit  tpcc.Audit
	live   liveCounts
	second secondStats
}

func newVUStats(warehouses int) *vuStats {
	s := &vuStats{audit: tpcc.NewAudit(warehouses)}
	for k := range s.kinds {
		s.kinds[k].latency = newLatencyHistogram()
	}
	s.second.latency = newSecondHistogram()
	s.second.spare = newSecondHistogram()
	return s
}
