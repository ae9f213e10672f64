package postgres

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// benchWarehouses is OLTPLAB_BENCH_WAREHOUSES, default def.
func benchWarehouses(b *testing.B, def int) int {
	if s := os.Getenv("OLTPLAB_BENCH_WAREHOUSES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("OLTPLAB_BENCH_WAREHOUSES=%q is not a positive number", s)
		}
		return n
	}
	return def
}

// BenchmarkBuild builds OLTPLAB_BENCH_WAREHOUSES warehouses (default 2)
// with two loaders in parallel, then the indexes, the procedures and the
// statistics, and reports rows per second of the load, the seconds of each
// phase and the CPU seconds of this process (generation and driver).
func BenchmarkBuild(b *testing.B) {
	n := benchWarehouses(b, 2)
	d, _ := openTest(b)
	ctx := context.Background()
	var rows int64
	var loadSec, indexSec float64
	b.ResetTimer()
	start := time.Now()
	cpu0 := cpuSeconds(b)
	for range b.N {
		counts, err := buildPhases(ctx, d, n, 2, &loadSec, &indexSec)
		if err != nil {
			b.Fatalf("build %d warehouses: %v", n, err)
		}
		for _, c := range counts {
			rows += c
		}
	}
	cpu := cpuSeconds(b) - cpu0
	per := func(x float64) float64 { return x / float64(b.N) }
	b.ReportMetric(float64(rows)/loadSec, "rows/s")
	b.ReportMetric(per(time.Since(start).Seconds()), "s/build")
	b.ReportMetric(per(loadSec), "s-load/build")
	b.ReportMetric(per(indexSec), "s-index+procs+analyze/build")
	b.ReportMetric(per(cpu), "client-cpu-s/build")
}

// buildPhases is build, timing the load and the rest separately.
func buildPhases(ctx context.Context, d *Database, n, workers int, loadSec, indexSec *float64) (buildCounts, error) {
	t0 := time.Now()
	c, err := buildLoad(ctx, d, n, workers)
	if err != nil {
		return c, err
	}
	t1 := time.Now()
	*loadSec += t1.Sub(t0).Seconds()
	err = buildFinish(ctx, d)
	*indexSec += time.Since(t1).Seconds()
	return c, err
}

// cpuSeconds is the user plus system CPU time of this process.
func cpuSeconds(b testing.TB) float64 {
	u, s := cpuUserSys(b)
	return u + s
}

// cpuUserSys is the user and the system CPU time of this process, in seconds.
func cpuUserSys(b testing.TB) (user, sys float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime), tv(ru.Stime)
}

// BenchmarkSession runs New-Order alone and the transaction mix (TPC-C
// 5.2.4.2 deck) through one session, and the mix through eight sessions at
// once, of each style, against a built database (OLTPLAB_BENCH_WAREHOUSES,
// default 2), and reports the client-side CPU (user+system of this
// process) per transaction. With one session every transaction is one
// sleep and wake-up of the waiting thread; with several they overlap.
func BenchmarkSession(b *testing.B) {
	n := benchWarehouses(b, 2)
	d, _ := openTest(b)
	ctx := context.Background()
	if _, err := build(ctx, d, n, 2); err != nil {
		b.Fatalf("build: %v", err)
	}
	// The floor: one round trip of the cheapest statement on a pgx
	// connection, the same way (prepared, binary), so the figures below can
	// be read against what any one round trip costs on this host.
	b.Run("floor/select-1", func(b *testing.B) {
		c, err := d.connect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(ctx)
		var v int32
		b.ReportAllocs()
		b.ResetTimer()
		u0, s0 := cpuUserSys(b)
		for range b.N {
			if err := c.QueryRow(ctx, "SELECT $1::int", int32(1)).Scan(&v); err != nil {
				b.Fatal(err)
			}
		}
		u1, s1 := cpuUserSys(b)
		b.ReportMetric((u1-u0+s1-s0)/float64(b.N)*1e6, "cpu-us/tx")
		b.ReportMetric((s1-s0)/float64(b.N)*1e6, "sys-us/tx")
	})
	for _, style := range []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL} {
		for _, c := range []struct {
			name     string
			sessions int
			mix      bool
		}{{"new-order", 1, false}, {"mix", 1, true}, {"mix-8-sessions", 8, true}} {
			b.Run(style.String()+"/"+c.name, func(b *testing.B) {
				vus := make([]*benchVU, c.sessions)
				for i := range vus {
					s, err := d.NewSession(ctx, style)
					if err != nil {
						b.Fatalf("NewSession: %v", err)
					}
					defer s.Close()
					r := tpcc.NewRand(1, tpcc.TerminalStream(i))
					run := tpcc.NewRunConstants(r, testLoad)
					vus[i] = &benchVU{s: s, term: tpcc.NewTerminal(r, run, n, i%n+1, i%tpcc.DistrictsPerWarehouse+1), mix: c.mix}
					// Warm up the statement cache.
					for k := range tpcc.TxKind(tpcc.NumTxKinds) {
						if err := vus[i].do(ctx, k); err != nil {
							b.Fatalf("%v: %v", k, err)
						}
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				u0, s0 := cpuUserSys(b)
				g, gctx := errgroup.WithContext(ctx)
				for i, vu := range vus {
					count := b.N / len(vus)
					if i < b.N%len(vus) {
						count++
					}
					g.Go(func() error {
						for range count {
							if err := vu.next(gctx); err != nil {
								return err
							}
						}
						return nil
					})
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				u1, s1 := cpuUserSys(b)
				b.ReportMetric((u1-u0+s1-s0)/float64(b.N)*1e6, "cpu-us/tx")
				b.ReportMetric((s1-s0)/float64(b.N)*1e6, "sys-us/tx")
			})
		}
	}
}

// benchVU is one virtual user of BenchmarkSession.
type benchVU struct {
	s    dialect.Session
	term *tpcc.Terminal
	mix  bool
	no   tpcc.NewOrder
	pay  tpcc.Payment
	os   tpcc.OrderStatus
	del  tpcc.Delivery
	sl   tpcc.StockLevel
}

// next runs the next transaction: New-Order, or the deck's next kind.
// Deadlocks between sessions are retried, as the driver would.
func (v *benchVU) next(ctx context.Context) error {
	k := tpcc.NewOrderTx
	if v.mix {
		k = v.term.NextKind()
	}
	for {
		err := v.do(ctx, k)
		if err == nil || !classify(err).Retryable() {
			return err
		}
	}
}

func (v *benchVU) do(ctx context.Context, k tpcc.TxKind) error {
	now := time.Now()
	switch k {
	case tpcc.NewOrderTx:
		v.term.NewOrder(&v.no, now)
		if err := v.s.NewOrder(ctx, &v.no); err != nil && err != tpcc.ErrRollback {
			return err
		}
		return nil
	case tpcc.PaymentTx:
		v.term.Payment(&v.pay, now)
		return v.s.Payment(ctx, &v.pay)
	case tpcc.OrderStatusTx:
		v.term.OrderStatus(&v.os)
		return v.s.OrderStatus(ctx, &v.os)
	case tpcc.DeliveryTx:
		v.term.Delivery(&v.del, now)
		return v.s.Delivery(ctx, &v.del)
	default:
		v.term.StockLevel(&v.sl)
		return v.s.StockLevel(ctx, &v.sl)
	}
}
