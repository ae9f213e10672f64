package driver

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// benchWindow is how long each scheduling benchmark runs in real time
// (OLTPLAB_BENCH_SCHED_WINDOW, default 30s): terminals key and think for
// seconds, so only real time shows what waiting costs.
func benchWindow(b *testing.B) time.Duration {
	d := 30 * time.Second
	if s := os.Getenv("OLTPLAB_BENCH_SCHED_WINDOW"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			b.Fatalf("OLTPLAB_BENCH_SCHED_WINDOW: %v", err)
		}
	}
	return d
}

// inUse is the memory the Go runtime holds for objects and stacks.
func inUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// BenchmarkTerminalScheduling compares two ways to hold the terminals of
// the tpc-c mode while they key and think, with sessions that answer at
// once (nullSession), so that only the driver's own work is measured:
// the pacer (one heap, one goroutine, a pool of session goroutines) and
// one goroutine per terminal that sleeps and then borrows a session from
// the same pool. Each runs its terminals in real time for the window and
// reports the driver's CPU (share of a core), the memory held per
// terminal and how late transactions were handed a session (p99).
//
//	go test -run '^$' -bench TerminalScheduling -benchtime 1x ./internal/driver
func BenchmarkTerminalScheduling(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, style := range []string{"heap", "goroutines"} {
			b.Run(fmt.Sprintf("%s/terminals=%d", style, n), func(b *testing.B) {
				for b.Loop() {
					benchScheduling(b, style, n, benchWindow(b))
				}
			})
		}
	}
}

func benchScheduling(b *testing.B, style string, n int, window time.Duration) {
	const sessions = 16
	run := testConstants()
	g := newGate()
	o := Defaults()
	o.Mode = ModeTPCC
	pool := make([]*vu, sessions)
	for i := range pool {
		pool[i] = newVU(i, nil, o, n/tpcc.TerminalsPerWarehouse, realClock{}, g, &outageLog{})
		pool[i].queue = newDeliveryQueue()
		pool[i].sess = nullSession{}
	}
	before := inUse()
	terms := make([]*terminal, n)
	for i := range terms {
		terms[i] = newTerminal(i, n, 1, run, n/tpcc.TerminalsPerWarehouse, false)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var p *pacer
	start := time.Now()
	switch style {
	case "heap":
		p = newPacer(realClock{}, g, terms, start)
		wg.Go(func() { p.run(ctx) })
		for _, v := range pool {
			wg.Go(func() { _ = v.serve(ctx, p) })
		}
	case "goroutines":
		free := make(chan *vu, sessions)
		for _, v := range pool {
			free <- v
		}
		for _, t := range terms {
			t.kind = t.term.NextKind()
			t.due = start.Add(time.Duration(t.rand.Uniform(0, int(tpcc.MeanCycle()/time.Millisecond)-1))*time.Millisecond +
				tpcc.KeyingTime(t.kind))
			wg.Go(func() {
				timer := time.NewTimer(time.Until(t.due))
				defer timer.Stop()
				for {
					select {
					case <-timer.C:
					case <-ctx.Done():
						return
					}
					t.dispatched = time.Now()
					var v *vu
					select {
					case v = <-free:
					case <-ctx.Done():
						return
					}
					end, _ := v.transaction(ctx, ctx, t, t.kind, t.due)
					free <- v
					think := t.rand.ThinkTime(t.kind)
					t.kind = t.term.NextKind()
					t.due = end.Add(think + tpcc.KeyingTime(t.kind))
					timer.Reset(time.Until(t.due))
				}
			})
		}
	}
	// Let every terminal start its cycle before measuring.
	settle := tpcc.MeanCycle()
	time.Sleep(settle)
	held := inUse() - before
	cpu0 := processCPUSeconds()
	var tx0 int64
	for _, v := range pool {
		tx0 += v.stats.live.done.Load()
	}
	t0 := time.Now()
	g.measuring.Store(true)
	time.Sleep(window)
	g.measuring.Store(false)
	cpu := processCPUSeconds() - cpu0
	elapsed := time.Since(t0).Seconds()
	var tx int64
	for _, v := range pool {
		tx += v.stats.live.done.Load()
	}
	tx -= tx0
	g.stop()
	cancel()
	wg.Wait()

	lag := newSecondHistogram()
	for _, v := range pool {
		lag.Merge(v.stats.startLag)
	}
	b.ReportMetric(cpu/elapsed, "cores")
	b.ReportMetric(float64(held)/float64(n), "bytes/terminal")
	b.ReportMetric(float64(tx)/elapsed, "tx/s")
	if tx > 0 {
		b.ReportMetric(cpu*1e6/float64(tx), "cpu-us/tx")
	}
	b.ReportMetric(float64(lag.ValueAtQuantile(99))/1000, "start-lag-p99-ms")
	b.ReportMetric(float64(lag.Max())/1000, "start-lag-max-ms")
}
