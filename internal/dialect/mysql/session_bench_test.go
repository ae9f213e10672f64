package mysql

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// cpuTime is this process's user + system CPU time.
func cpuTime(b *testing.B) time.Duration {
	u, s := cpuTimes(b)
	return u + s
}

// cpuTimes is this process's user and system CPU time.
func cpuTimes(b *testing.B) (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// reportCPU reports CPU microseconds per operation since (user0, sys0):
// cpu-us/op in all, and user-us/op, the part spent outside the kernel.
func reportCPU(b *testing.B, user0, sys0 time.Duration) {
	user, sys := cpuTimes(b)
	n := float64(b.N)
	b.ReportMetric(float64((user-user0+sys-sys0).Microseconds())/n, "cpu-us/op")
	b.ReportMetric(float64((user-user0).Microseconds())/n, "user-us/op")
}

// BenchmarkSession measures the driver's own CPU per transaction (the
// server runs in another process): one virtual user, in both styles, for
// the standard mix and for each transaction alone. It reports cpu-us/op
// from getrusage, which includes the garbage collector.
func BenchmarkSession(b *testing.B) {
	warehouses := benchWarehouses(b)
	d, _ := openTest(b)
	ctx := context.Background()
	if _, err := build(ctx, d, warehouses, 2); err != nil {
		b.Fatalf("build: %v", err)
	}
	kinds := []struct {
		name string
		kind tpcc.TxKind
	}{{"mix", -1}, {"new_order", tpcc.NewOrderTx}, {"payment", tpcc.PaymentTx}, {"order_status", tpcc.OrderStatusTx},
		{"delivery", tpcc.DeliveryTx}, {"stock_level", tpcc.StockLevelTx}}
	if os.Getenv("OLTPLAB_BENCH_CALL_TEXT") == "1" {
		callInterpolated = true
		defer func() { callInterpolated = false }()
	}
	for _, style := range styles {
		for _, k := range kinds {
			b.Run(style.String()+"/"+k.name, func(b *testing.B) {
				s, err := d.NewSession(ctx, style)
				if err != nil {
					b.Fatalf("NewSession: %v", err)
				}
				defer s.Close()
				m := newMixer(warehouses, 0)
				b.ReportAllocs()
				b.ResetTimer()
				user0, sys0 := cpuTimes(b)
				for i := 0; i < b.N; i++ {
					if err := m.next(ctx, s, k.kind); err != nil {
						b.Fatalf("transaction: %v", err)
					}
				}
				reportCPU(b, user0, sys0)
			})
		}
	}
}

// BenchmarkSessionParallel runs the standard mix on 8 sessions at once
// (OLTPLAB_BENCH_WAREHOUSES warehouses, default 2): the runtime's cost of
// waking up after each round trip is shared, as in a real run. Deadlocks
// and lock timeouts are retried and counted.
func BenchmarkSessionParallel(b *testing.B) {
	warehouses := benchWarehouses(b)
	d, _ := openTest(b)
	ctx := context.Background()
	if _, err := build(ctx, d, warehouses, 2); err != nil {
		b.Fatalf("build: %v", err)
	}
	for _, style := range styles {
		b.Run(style.String(), func(b *testing.B) {
			var terminal, retries atomic.Int64
			b.SetParallelism(4) // 4 x GOMAXPROCS sessions
			b.ReportAllocs()
			b.ResetTimer()
			user0, sys0 := cpuTimes(b)
			b.RunParallel(func(pb *testing.PB) {
				s, err := d.NewSession(ctx, style)
				if err != nil {
					b.Errorf("NewSession: %v", err)
					return
				}
				defer s.Close()
				m := newMixer(warehouses, int(terminal.Add(1)))
				for pb.Next() {
					k := m.term.NextKind()
					for {
						err := m.next(ctx, s, k)
						if err == nil {
							break
						}
						if !d.Classify(err).Retryable() {
							b.Errorf("transaction: %v", err)
							return
						}
						retries.Add(1)
					}
				}
			})
			reportCPU(b, user0, sys0)
			b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
		})
	}
}

// BenchmarkRoundTrip is the floor under the session numbers: the CPU of one
// round trip that the server answers at once, as text and as a prepared
// statement.
func BenchmarkRoundTrip(b *testing.B) {
	d, _ := openTest(b)
	ctx := context.Background()
	c, err := d.db.Conn(ctx)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	defer c.Close()
	st, err := c.PrepareContext(ctx, "SELECT ?")
	if err != nil {
		b.Fatalf("prepare: %v", err)
	}
	defer st.Close()
	b.Run("text", func(b *testing.B) {
		user0, sys0 := cpuTimes(b)
		for i := 0; i < b.N; i++ {
			if _, err := c.ExecContext(ctx, "DO 1"); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, user0, sys0)
	})
	b.Run("prepared", func(b *testing.B) {
		user0, sys0 := cpuTimes(b)
		var x int64
		for i := 0; i < b.N; i++ {
			if err := st.QueryRowContext(ctx, int64(i)).Scan(&x); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, user0, sys0)
	})
}
