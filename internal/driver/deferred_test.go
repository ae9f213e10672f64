package driver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// deliverySessions starts n deferred-Delivery sessions on q whose
// Deliveries each take d (fake time) and skip a district when the carrier
// is 3; it returns them and a function that stops them and waits.
func deliverySessions(t *testing.T, q *deliveryQueue, g *gate, n int, d time.Duration) ([]*vu, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	o := Defaults()
	vus := make([]*vu, n)
	for i := range vus {
		v := newVU(i, nil, o, 10, realClock{}, g, &outageLog{})
		v.stats.deferred = newDeferredStats()
		v.sess = &scriptedSession{delivery: func(_ context.Context, in *tpcc.Delivery) error {
			time.Sleep(d)
			if in.CarrierID == 3 {
				in.Skipped = 1
			}
			return nil
		}}
		vus[i] = v
		wg.Go(func() {
			if err := v.deliver(ctx, q); err != nil {
				t.Errorf("deliver: %v", err)
			}
		})
	}
	return vus, func() {
		g.stop()
		cancel()
		wg.Wait()
	}
}

func allRecords(vus []*vu) []deliveryRecord {
	var recs []deliveryRecord
	for _, v := range vus {
		recs = append(recs, v.stats.deferred.records...)
	}
	// Queue order: by time queued, then by warehouse (the tests number
	// requests queued at one instant by warehouse, in order).
	slices.SortFunc(recs, func(a, b deliveryRecord) int {
		if c := a.queued.Compare(b.queued); c != 0 {
			return c
		}
		return a.wID - b.wID
	})
	return recs
}

// TestDeferredDeliveryQueue checks the queue of TPC-C 2.7.2 against the
// recursion of a first-come-first-served queue with c servers and a fixed
// service time: each request starts when it was queued or when the first
// session frees, whichever is later, and ends one service time later. It
// checks the recorded queue and completion times, the skipped districts
// and the audit.
func TestDeferredDeliveryQueue(t *testing.T) {
	const service = 3 * time.Second
	// Arrival offsets: a burst, a pause, another burst, stragglers.
	arrivals := []time.Duration{0, 0, 0, 0, 0, 1 * time.Second, 2 * time.Second, 40 * time.Second,
		41 * time.Second, 41 * time.Second, 41 * time.Second, 90 * time.Second, 200 * time.Second}
	for _, sessions := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("%d sessions", sessions), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				g.measuring.Store(true)
				q := newDeliveryQueue()
				vus, stop := deliverySessions(t, q, g, sessions, service)
				t0 := time.Now()
				for i, a := range arrivals {
					time.Sleep(t0.Add(a).Sub(time.Now()))
					q.push(deliveryRequest{wID: i + 1, carrierID: i%10 + 1, queued: time.Now()})
				}
				time.Sleep(time.Hour)
				stop()

				recs := allRecords(vus)
				if len(recs) != len(arrivals) {
					t.Fatalf("recorded %d deliveries, want %d", len(recs), len(arrivals))
				}
				free := make([]time.Time, sessions)
				for i := range free {
					free[i] = t0
				}
				var skipped int64
				for i, r := range recs {
					if r.wID != i+1 {
						t.Errorf("delivery %d: warehouse %d, want %d (queue order)", i, r.wID, i+1)
					}
					j := 0
					for k := range free {
						if free[k].Before(free[j]) {
							j = k
						}
					}
					wantStart := r.queued
					if free[j].After(wantStart) {
						wantStart = free[j]
					}
					free[j] = wantStart.Add(service)
					if !r.started.Equal(wantStart) || !r.ended.Equal(wantStart.Add(service)) {
						t.Errorf("delivery %d queued at %v: ran %v..%v, want %v..%v", i, r.queued.Sub(t0),
							r.started.Sub(t0), r.ended.Sub(t0), wantStart.Sub(t0), wantStart.Add(service).Sub(t0))
					}
					if want := map[bool]int{true: 1}[r.carrierID == 3]; r.skipped != want {
						t.Errorf("delivery %d (carrier %d): %d districts skipped, want %d", i, r.carrierID, r.skipped, want)
					}
					skipped += int64(r.skipped)
				}
				var completed, sumSkipped, executed int64
				for _, v := range vus {
					d := v.stats.deferred
					completed += d.completed
					sumSkipped += d.skipped
					executed += v.stats.audit.DeliveriesExecuted
				}
				if completed != int64(len(arrivals)) || sumSkipped != skipped || executed != completed {
					t.Errorf("counted %d completed, %d skipped, %d in the audit; want %d, %d, %d",
						completed, sumSkipped, executed, len(arrivals), skipped, len(arrivals))
				}
			})
		})
	}
}

// TestDeferredDeliveryLate: ten requests queued at once for one session
// whose Deliveries take 30 s complete at 30, 60, ..., 300 s; those over
// 80 s (eight) count as late, and at 100 s the six still queued have
// already waited past 80 s (TPC-C 2.7.2: 90% within 80 s of queuing).
func TestDeferredDeliveryLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		g.measuring.Store(true)
		q := newDeliveryQueue()
		vus, stop := deliverySessions(t, q, g, 1, 30*time.Second)
		for i := range 10 {
			q.push(deliveryRequest{wID: 1, carrierID: i + 1, queued: time.Now()})
		}
		time.Sleep(100 * time.Second)
		if queued, late := q.backlog(time.Now(), tpcc.DeferredDeliveryLimit); queued != 6 || late != 6 {
			t.Errorf("backlog at 100 s: %d queued, %d late; want 6 and 6", queued, late)
		}
		time.Sleep(time.Hour)
		stop()
		if got := vus[0].stats.deferred.late; got != 8 {
			t.Errorf("late completions: got %d, want 8", got)
		}
		if queued, late := q.backlog(time.Now(), tpcc.DeferredDeliveryLimit); queued != 0 || late != 0 {
			t.Errorf("backlog at the end: %d queued, %d late; want none", queued, late)
		}
	})
}

// TestDeferredDeliveryWaitMD1 checks the queue statistically: Poisson
// arrivals at 2 a second (what about 1,000 terminals queue) and one session
// with a fixed 250 ms per Delivery make an M/D/1 queue of load 0.5, whose
// mean wait is ρ·D / (2(1-ρ)) = 125 ms (Pollaczek-Khinchine). The mean of
// 20,000 waits must fall within four standard errors of it, the error
// taken from 20 batch means (waits in a queue are correlated).
func TestDeferredDeliveryWaitMD1(t *testing.T) {
	const (
		n       = 20000
		batches = 20
		lambda  = 2.0 // per second
		service = 250 * time.Millisecond
	)
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		g.measuring.Store(true)
		q := newDeliveryQueue()
		vus, stop := deliverySessions(t, q, g, 1, service)
		r := rand.New(rand.NewPCG(4, 2))
		for i := range n {
			time.Sleep(time.Duration(r.ExpFloat64() / lambda * float64(time.Second)))
			q.push(deliveryRequest{wID: 1, carrierID: i%10 + 1, queued: time.Now()})
		}
		time.Sleep(time.Hour)
		stop()
		recs := allRecords(vus)
		if len(recs) != n {
			t.Fatalf("recorded %d deliveries, want %d", len(recs), n)
		}
		var means []float64
		for b := range batches {
			var sum float64
			for _, rec := range recs[b*n/batches : (b+1)*n/batches] {
				sum += rec.started.Sub(rec.queued).Seconds()
			}
			means = append(means, sum/(n/batches))
		}
		mean, se := meanSE(means)
		rho := lambda * service.Seconds()
		want := rho * service.Seconds() / (2 * (1 - rho))
		if math.Abs(mean-want) > 4*se {
			t.Errorf("mean wait in the queue %.4f s, want %.4f ± %.4f (M/D/1)", mean, want, 4*se)
		}
		h := vus[0].stats.deferred.queue
		if got := h.Mean() / 1e6; math.Abs(got-mean) > 0.01*mean+1e-3 {
			t.Errorf("queue histogram mean %.4f s, want the records' %.4f s", got, mean)
		}
	})
}
