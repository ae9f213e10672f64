package driver

import (
	"context"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// deliveryRequest is a Delivery a terminal queued (TPC-C 2.7.2.1): its
// warehouse, its carrier (2.7.1) and when it was queued.
type deliveryRequest struct {
	wID, carrierID int
	queued         time.Time
}

// deliveryQueue is the queue of deferred Deliveries (TPC-C 2.7.2):
// terminals push and are answered at once; the delivery sessions take the
// requests in the order they were queued. It is unbounded: a queue that
// grows shows in the 80 s constraint, not as terminals held back.
type deliveryQueue struct {
	mu    sync.Mutex
	items []deliveryRequest
	head  int
	// signal is sent (without blocking) when a request is pushed, or
	// taken while more wait, so that an idle session wakes.
	signal chan struct{}
}

func newDeliveryQueue() *deliveryQueue {
	return &deliveryQueue{signal: make(chan struct{}, 1)}
}

func (q *deliveryQueue) push(r deliveryRequest) {
	q.mu.Lock()
	q.items = append(q.items, r)
	q.mu.Unlock()
	q.notify()
}

func (q *deliveryQueue) notify() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop takes the oldest request, waiting for one; it reports false when
// stop is closed or ctx is canceled first.
func (q *deliveryQueue) pop(ctx context.Context, stop <-chan struct{}) (deliveryRequest, bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			r := q.items[q.head]
			q.head++
			more := q.head < len(q.items)
			if q.head >= 1024 && 2*q.head >= len(q.items) {
				n := copy(q.items, q.items[q.head:])
				q.items, q.head = q.items[:n], 0
			}
			q.mu.Unlock()
			if more {
				q.notify()
			}
			return r, true
		}
		q.mu.Unlock()
		select {
		case <-q.signal:
		case <-stop:
			return deliveryRequest{}, false
		case <-ctx.Done():
			return deliveryRequest{}, false
		}
	}
}

// backlog returns the requests still queued at now and how many of them
// have waited longer than limit.
func (q *deliveryQueue) backlog(now time.Time, limit time.Duration) (queued, late int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, r := range q.items[q.head:] {
		queued++
		if now.Sub(r.queued) > limit {
			late++
		}
	}
	return queued, late
}

// deliver executes queued Deliveries (TPC-C 2.7.2) with the session of v
// until the window ends or ctx is canceled. It returns an error only when
// the session cannot go on.
func (v *vu) deliver(ctx context.Context, q *deliveryQueue) error {
	calls := v.callContext(ctx)
	for {
		req, ok := q.pop(ctx, v.gate.stopC)
		if !ok || v.gate.stopping.Load() {
			return nil
		}
		start := v.clk.Now()
		// TPC-C 2.7.4.2: OL_DELIVERY_D is the current date and time of the
		// execution; W_ID and O_CARRIER_ID are those the terminal keyed.
		v.de = tpcc.Delivery{WID: req.wID, CarrierID: req.carrierID, DeliveryD: start}
		out, class, retries, fatal := v.execute(ctx, calls, tpcc.DeliveryTx)
		if out != txCanceled {
			v.recordDeferred(req, out, class, retries, start, v.clk.Now())
		}
		if fatal != nil {
			return fatal
		}
	}
}

// recordDeferred counts one deferred Delivery that ended, when it ended
// inside the measured window.
func (v *vu) recordDeferred(req deliveryRequest, out txOutcome, class dialect.ErrClass, retries int, start, end time.Time) {
	if !v.gate.measuring.Load() {
		return
	}
	d := v.stats.deferred
	d.retried += int64(retries)
	if out != txCommitted {
		d.failed[class]++
		return
	}
	d.completed++
	_ = d.queue.RecordValue(deferredMicros(start.Sub(req.queued)))
	_ = d.completion.RecordValue(deferredMicros(end.Sub(req.queued)))
	if end.Sub(req.queued) > tpcc.DeferredDeliveryLimit {
		d.late++
	}
	d.skipped += int64(v.de.Skipped)
	if v.de.Skipped > 0 {
		d.withSkipped++
	}
	v.stats.audit.RecordDeliveryExecuted(&v.de)
	if len(d.records) < maxDeliveryRecords {
		d.records = append(d.records, deliveryRecord{
			queued: req.queued, started: start, ended: end,
			wID: req.wID, carrierID: req.carrierID, skipped: v.de.Skipped,
		})
	} else {
		d.dropped++
	}
}
