package driver

import (
	"context"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// countAtLeast counts the values of h of at least us microseconds.
func countAtLeast(h *hdrhistogram.Histogram, us int64) int64 {
	var n int64
	for _, b := range h.Distribution() {
		if b.From >= us {
			n += b.Count
		}
	}
	return n
}

// mergedKinds merges one histogram of every kind of v.
func mergedKinds(v *vu, pick func(*kindStats) *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	h := newLatencyHistogram()
	for k := range v.stats.kinds {
		h.Merge(pick(&v.stats.kinds[k]))
	}
	return h
}

// TestRateLatencyFromSchedule is coordinated omission: a virtual user at
// 10 transactions a second whose 20th transaction stalls for 2 s. Paced,
// the transactions scheduled during the stall start late, and their
// latency counts from their schedule: besides the stalled one, ten of
// them took a second or more (1.9 s, 1.8 s, ..., 1.0 s, plus the 1 ms
// each transaction takes). Their service time shows one slow transaction
// only. Unpaced, nothing is scheduled and
// only the stall itself is slow.
func TestRateLatencyFromSchedule(t *testing.T) {
	for _, c := range []struct {
		name                  string
		interval              time.Duration
		wantSlow, wantSlowSvc int64
	}{
		{"at a rate", 100 * time.Millisecond, 11, 1},
		{"unpaced", 0, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				g.measuring.Store(true)
				o := Defaults()
				o.VUs = 1
				if c.interval > 0 {
					o.Rate = float64(time.Second / c.interval)
				}
				v := newVU(0, nil, o, 10, realClock{}, g, &outageLog{})
				v.own = newTerminal(0, 1, 3, testConstants(), 10, false)
				v.interval = c.interval
				calls := 0
				v.sess = &scriptedSession{
					call: func(context.Context, tpcc.TxKind) error {
						calls++
						if calls == 20 {
							time.Sleep(2 * time.Second)
						} else {
							time.Sleep(time.Millisecond)
						}
						return nil
					},
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- v.loop(ctx) }()
				time.Sleep(6 * time.Second)
				g.stop()
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("loop: %v", err)
				}
				if calls < 40 {
					t.Fatalf("%d transactions ran, want at least 40", calls)
				}
				resp := mergedKinds(v, func(k *kindStats) *hdrhistogram.Histogram { return k.latency })
				svc := mergedKinds(v, func(k *kindStats) *hdrhistogram.Histogram { return k.service })
				if got := countAtLeast(resp, 990_000); got != c.wantSlow {
					t.Errorf("response times of a second or more: got %d, want %d", got, c.wantSlow)
				}
				if got := countAtLeast(svc, 990_000); got != c.wantSlowSvc {
					t.Errorf("service times of a second or more: got %d, want %d", got, c.wantSlowSvc)
				}
				if c.interval > 0 {
					if got := v.stats.startLag.Max(); got < 1_900_000 {
						t.Errorf("largest start lag %d us, want the 1.9 s of the first transaction behind the stall", got)
					}
				}
			})
		})
	}
}

// TestPoolResponseIncludesSessionWait: 50 terminals share one session
// whose transactions take 500 ms, more than it can serve. A due terminal
// waits for the session, and that wait is inside its response time: for
// every transaction, response = dispatch lag (none on a fake clock) +
// session wait + service. The totals must agree within the histograms'
// precision, and the waits must be long (the pool is saturated).
func TestPoolResponseIncludesSessionWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const terminals = 50
		g := newGate()
		g.measuring.Store(true)
		run := testConstants()
		terms := make([]*terminal, terminals)
		for i := range terms {
			terms[i] = newTerminal(i, terminals, 5, run, 5, false)
		}
		p := newPacer(realClock{}, g, terms, time.Now())
		o := Defaults()
		o.Mode = ModeTPCC
		v := newVU(0, nil, o, 5, realClock{}, g, &outageLog{})
		v.queue = newDeliveryQueue()
		v.sess = &scriptedSession{call: func(context.Context, tpcc.TxKind) error {
			time.Sleep(500 * time.Millisecond)
			return nil
		}}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { p.run(ctx) })
		wg.Go(func() {
			if err := v.serve(ctx, p); err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		time.Sleep(30 * time.Minute)
		g.stop()
		cancel()
		wg.Wait()

		var n int64
		var respSum, svcSum float64
		for k := range v.stats.kinds {
			ks := &v.stats.kinds[k]
			n += ks.completed
			respSum += ks.latency.Mean() * float64(ks.latency.TotalCount())
			svcSum += ks.service.Mean() * float64(ks.service.TotalCount())
		}
		w := v.stats.sessionWait
		if w.TotalCount() != n {
			t.Fatalf("%d session waits recorded for %d transactions", w.TotalCount(), n)
		}
		waitSum := w.Mean() * float64(n)
		if math.Abs(respSum-(waitSum+svcSum)) > 0.02*respSum {
			t.Errorf("response times total %.0f us, want session waits %.0f + service %.0f", respSum, waitSum, svcSum)
		}
		// Closed loop: terminals that wait cycle slower, and the pool
		// settles where the mean cycle is 50 / 2.08 per second, about 24 s
		// instead of 21 s: some 3 s of waiting per transaction.
		if got := w.Mean(); got < 1e6 {
			t.Errorf("mean session wait %.0f us on a saturated pool, want over 1 s", got)
		}
		if dl := p.lag; dl.TotalCount() < n || dl.Max() > 1 {
			t.Errorf("dispatch lag: %d values, max %d us; want at least %d, at the 1 us floor", dl.TotalCount(), dl.Max(), n)
		}
	})
}
