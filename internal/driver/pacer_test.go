package driver

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// testConstants are valid run-time NURand constants.
func testConstants() tpcc.Constants {
	load := tpcc.NewLoadConstants(tpcc.NewRand(1, tpcc.ConstantsStream))
	return tpcc.NewRunConstants(tpcc.NewRand(2, tpcc.ConstantsStream), load)
}

// dispatch is one terminal handed over by the pacer.
type dispatch struct {
	terminal   int
	kind       tpcc.TxKind
	due, given time.Time
}

// TestPacerCycle drives 200 terminals through two simulated hours with
// sessions that answer at once (synctest's fake clock), and checks the
// terminal cycle of TPC-C 5.2.5 statistically from what the pacer handed
// over: consecutive inputs of a terminal are one think time (of the kind
// that ended) plus one keying time (of the next kind) apart, so the think
// times can be recovered and their means, per kind, must fall within four
// standard errors of the truncated negative exponential's (5.2.5.4); none
// may be negative (a keying time too long) or beyond 10 × the mean; the
// mix must be the deck's (5.2.4.2) within four standard errors; and each
// terminal must submit New-Orders at 12.61/10 per minute within four
// standard errors across terminals. Every terminal is handed over at its
// due time: the fake clock has no lateness, so any is a missed wake-up.
func TestPacerCycle(t *testing.T) {
	const terminals, sessions, hours = 200, 4, 2
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		run := testConstants()
		terms := make([]*terminal, terminals)
		for i := range terms {
			terms[i] = newTerminal(i, terminals, 9, run, terminals/tpcc.TerminalsPerWarehouse, false)
		}
		start := time.Now()
		p := newPacer(realClock{}, g, terms, start)
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		var log []dispatch
		var wg sync.WaitGroup
		for range sessions {
			wg.Go(func() {
				for {
					select {
					case tm := <-p.ready:
						now := time.Now()
						mu.Lock()
						log = append(log, dispatch{tm.id, tm.kind, tm.due, now})
						mu.Unlock()
						p.again(tm, now)
					case <-ctx.Done():
						return
					}
				}
			})
		}
		wg.Go(func() { p.run(ctx) })
		time.Sleep(hours * time.Hour)
		cancel()
		wg.Wait()
		end := time.Now()

		byTerminal := make([][]dispatch, terminals)
		var kinds [tpcc.NumTxKinds]int
		for _, d := range log {
			if !d.given.Equal(d.due) {
				t.Fatalf("terminal %d due at %v was handed over at %v", d.terminal, d.due.Sub(start), d.given.Sub(start))
			}
			byTerminal[d.terminal] = append(byTerminal[d.terminal], d)
			kinds[d.kind]++
		}

		var think [tpcc.NumTxKinds][]float64
		perTerminalNO := make([]float64, terminals)
		for i, ds := range byTerminal {
			for j := 1; j < len(ds); j++ {
				gap := ds[j].due.Sub(ds[j-1].due) - tpcc.KeyingTime(ds[j].kind)
				think[ds[j-1].kind] = append(think[ds[j-1].kind], gap.Seconds())
			}
			for _, d := range ds {
				if d.kind == tpcc.NewOrderTx {
					perTerminalNO[i]++
				}
			}
			perTerminalNO[i] /= end.Sub(start).Minutes()
		}

		for k := range tpcc.NumTxKinds {
			kind := tpcc.TxKind(k)
			xs := think[k]
			mu := tpcc.ThinkTimeMean(kind).Seconds()
			if len(xs) < 100 {
				t.Fatalf("%s: %d think times, too few", kind, len(xs))
			}
			if lo, hi := slices.Min(xs), slices.Max(xs); lo < 0 || hi > tpcc.ThinkTimeTruncation*mu+1e-9 {
				t.Errorf("%s: think times in [%v, %v] s, want within [0, %v]", kind, lo, hi, tpcc.ThinkTimeTruncation*mu)
			}
			mean, se := meanSE(xs)
			want := mu * (1 - math.Exp(-tpcc.ThinkTimeTruncation))
			if math.Abs(mean-want) > 4*se {
				t.Errorf("%s: mean think time %.3f s over %d, want %.3f ± %.3f", kind, mean, len(xs), want, 4*se)
			}
		}

		n := float64(len(log))
		for k := range tpcc.NumTxKinds {
			p := tpcc.MixShare(tpcc.TxKind(k))
			se := math.Sqrt(p * (1 - p) / n)
			if got := float64(kinds[k]) / n; math.Abs(got-p) > 4*se {
				t.Errorf("%s: share %.4f of %d transactions, want %.4f ± %.4f", tpcc.TxKind(k), got, len(log), p, 4*se)
			}
		}

		// The first cycle starts spread over one mean cycle: over two hours
		// that is a bias of under 0.2%, well inside the bound.
		mean, se := meanSE(perTerminalNO)
		if want := tpcc.MaxNewOrdersPerMinute(1); math.Abs(mean-want) > 4*se {
			t.Errorf("New-Orders per minute per terminal: %.4f, want %.4f ± %.4f", mean, want, 4*se)
		}
	})
}

// meanSE returns the sample mean and its standard error.
func meanSE(xs []float64) (mean, se float64) {
	var sum, sumSq float64
	for _, x := range xs {
		sum += x
		sumSq += x * x
	}
	n := float64(len(xs))
	mean = sum / n
	variance := (sumSq - n*mean*mean) / (n - 1)
	return mean, math.Sqrt(variance / n)
}

// TestPacerStops: closing the gate ends the pacer, and terminals already
// handed over stay with the pool.
func TestPacerStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		terms := []*terminal{newTerminal(0, 1, 1, testConstants(), 1, false)}
		p := newPacer(realClock{}, g, terms, time.Now())
		done := make(chan struct{})
		go func() {
			p.run(context.Background())
			close(done)
		}()
		time.Sleep(time.Hour) // the one terminal is due and handed over
		if got := len(p.ready); got != 1 {
			t.Errorf("ready terminals after an hour: got %d, want 1", got)
		}
		g.stop()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatalf("the pacer still runs after the gate closed")
		}
	})
}
