package conformance

import (
	"context"
	"errors"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Bench runs the benchmarks every dialect shares: BenchBuild,
// BenchSessions and BenchMemory.
func Bench(b *testing.B, d Dialect) {
	b.Run("build", func(b *testing.B) { BenchBuild(b, d, nil) })
	b.Run("session", func(b *testing.B) { BenchSessions(b, d, nil) })
	b.Run("memory", func(b *testing.B) { BenchMemory(b, d) })
}

// BenchWarehouses is the scale of the benchmarks: OLTPLAB_BENCH_WAREHOUSES,
// default 2.
func BenchWarehouses(tb testing.TB) int {
	s := os.Getenv("OLTPLAB_BENCH_WAREHOUSES")
	if s == "" {
		return 2
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		tb.Fatalf("OLTPLAB_BENCH_WAREHOUSES=%q: want a positive integer", s)
	}
	return n
}

// CPUTimes is this process's user and system CPU time (getrusage
// RUSAGE_SELF): the driver's own cost, garbage collector included. With
// an embedded database it includes the database's work.
func CPUTimes(tb testing.TB) (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// ReportCPU reports the CPU microseconds per operation since (user0,
// sys0): cpu-us/op in all and sys-us/op, the part spent in the kernel.
func ReportCPU(b *testing.B, user0, sys0 time.Duration) {
	user, sys := CPUTimes(b)
	n := float64(b.N)
	b.ReportMetric(float64((user-user0+sys-sys0).Microseconds())/n, "cpu-us/op")
	b.ReportMetric(float64((sys-sys0).Microseconds())/n, "sys-us/op")
}

// openBench opens a fresh database of d; prepare, when not nil, adjusts
// it first (a dialect's own variants, through its export_test.go).
func openBench(b *testing.B, tg dialect.Target, prepare func(dialect.Database)) dialect.Database {
	b.Helper()
	db := openDB(b, tg)
	if prepare != nil {
		prepare(db)
	}
	return db
}

// BenchBuild builds BenchWarehouses warehouses with two loaders through
// load.Build, on a fresh database each iteration, and reports rows per
// second of the load, the seconds of each phase and the CPU seconds of
// this process (generation and driver).
func BenchBuild(b *testing.B, d Dialect, prepare func(dialect.Database)) {
	n := BenchWarehouses(b)
	var rows int64
	var total, loadSec, indexSec, cpu time.Duration
	for range b.N {
		b.StopTimer()
		db := openBench(b, d.Open(b), prepare)
		b.StartTimer()
		user0, sys0 := CPUTimes(b)
		start := time.Now()
		res, err := load.Build(b.Context(), db, load.Options{Warehouses: n, Workers: 2, Seed: 1, ToolVersion: "bench"}, nil)
		if err != nil {
			b.Fatalf("build %d warehouses: %v", n, err)
		}
		total += time.Since(start)
		user, sys := CPUTimes(b)
		cpu += user - user0 + sys - sys0
		rows += res.TotalRows
		loadSec += seconds(res.LoadSeconds)
		indexSec += seconds(res.IndexSeconds + res.ProceduresSeconds + res.AnalyzeSeconds)
		b.Logf("%d warehouses: %d rows, load %.1fs, indexes %.1fs, procedures %.1fs, analyze %.1fs",
			n, res.TotalRows, res.LoadSeconds, res.IndexSeconds, res.ProceduresSeconds, res.AnalyzeSeconds)
	}
	per := func(x time.Duration) float64 { return x.Seconds() / float64(b.N) }
	b.ReportMetric(float64(rows)/loadSec.Seconds(), "rows/s")
	b.ReportMetric(per(total), "s/build")
	b.ReportMetric(per(loadSec), "s-load/build")
	b.ReportMetric(per(indexSec), "s-index+procs+analyze/build")
	b.ReportMetric(per(cpu), "client-cpu-s/build")
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// BenchSessions builds BenchWarehouses warehouses once and reports the
// driver's CPU per transaction (cpu-us/op) for each execution style the
// dialect offers: each transaction kind alone and the mix (TPC-C 5.2.4.2
// deck) on one session, where every transaction is one sleep and wake-up
// of the waiting thread, and the mix on eight sessions at once, where they
// overlap. A server's sessions are measured with raw-syscall sockets (the
// default, package rawconn) and with plain ones (dialect.Env.PlainSockets),
// so that what rawconn saves can be measured again on any host.
func BenchSessions(b *testing.B, d Dialect, prepare func(dialect.Database)) {
	n := BenchWarehouses(b)
	tg := d.Open(b)
	db := openBench(b, tg, prepare)
	res, err := load.Build(b.Context(), db, load.Options{Warehouses: n, Workers: 2, Seed: 1, ToolVersion: "bench"}, nil)
	if err != nil {
		b.Fatalf("build %d warehouses: %v", n, err)
	}
	sockets := []struct {
		name string
		db   dialect.Database
	}{{"", db}}
	if !db.Caps().Embedded {
		plain := tg
		plain.Env.PlainSockets = true
		sockets = []struct {
			name string
			db   dialect.Database
		}{{"raw-sockets/", db}, {"plain-sockets/", openBench(b, plain, prepare)}}
	}
	kinds := []struct {
		name     string
		kind     tpcc.TxKind // -1: the mix
		sessions int
	}{
		{"new-order", tpcc.NewOrderTx, 1}, {"payment", tpcc.PaymentTx, 1}, {"order-status", tpcc.OrderStatusTx, 1},
		{"delivery", tpcc.DeliveryTx, 1}, {"stock-level", tpcc.StockLevelTx, 1},
		{"mix", -1, 1}, {"mix-8-sessions", -1, 8},
	}
	for _, sock := range sockets {
		for _, style := range styles(db.Caps()) {
			for _, k := range kinds {
				b.Run(sock.name+style.String()+"/"+k.name, func(b *testing.B) {
					benchSessions(b, sock.db, style, res.LoadConstants, n, k.kind, k.sessions)
				})
			}
		}
	}
}

func benchSessions(b *testing.B, db dialect.Database, style dialect.Style, loadC tpcc.Constants, warehouses int, kind tpcc.TxKind, sessions int) {
	ctx := b.Context()
	vus := make([]*VU, sessions)
	for i := range vus {
		s, err := db.NewSession(ctx, style)
		if err != nil {
			b.Fatalf("NewSession: %v", err)
		}
		defer s.Close()
		r := tpcc.NewRand(1, tpcc.TerminalStream(i))
		term := tpcc.NewTerminal(r, tpcc.NewRunConstants(r, loadC), warehouses, i%warehouses+1, i%tpcc.DistrictsPerWarehouse+1)
		vus[i] = NewVU(db, s, term)
		// Warm up the statement cache.
		for k := range tpcc.TxKind(tpcc.NumTxKinds) {
			if err := vus[i].do(ctx, k); err != nil {
				b.Fatalf("%v: %v", k, err)
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	user0, sys0 := CPUTimes(b)
	g, gctx := errgroup.WithContext(ctx)
	for i, vu := range vus {
		count := b.N / len(vus)
		if i < b.N%len(vus) {
			count++
		}
		g.Go(func() error {
			for range count {
				if err := vu.Next(gctx, kind); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	ReportCPU(b, user0, sys0)
	var retries int64
	for _, vu := range vus {
		retries += vu.Retries()
	}
	b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
}

// VU runs the transactions of one terminal on one session as a virtual
// user of internal/driver would, without its schedule and measurements:
// load for tests and benchmarks. The expected New-Order rollback
// (TPC-C 2.4.2.3) is not an error; deadlocks and lock timeouts between
// sessions are retried.
type VU struct {
	db      dialect.Database
	s       dialect.Session
	term    *tpcc.Terminal
	retries int64
	no      tpcc.NewOrder
	pay     tpcc.Payment
	os      tpcc.OrderStatus
	del     tpcc.Delivery
	sl      tpcc.StockLevel
}

// NewVU returns a virtual user of term on s, a session of db. One
// goroutine owns it.
func NewVU(db dialect.Database, s dialect.Session, term *tpcc.Terminal) *VU {
	return &VU{db: db, s: s, term: term}
}

// Next runs one transaction of kind k, or of the deck's next kind
// (TPC-C 5.2.4.2) when k < 0, retrying it after a retryable failure.
func (v *VU) Next(ctx context.Context, k tpcc.TxKind) error {
	if k < 0 {
		k = v.term.NextKind()
	}
	for {
		err := v.do(ctx, k)
		if err == nil || !v.db.Classify(err).Retryable() {
			return err
		}
		v.retries++
	}
}

// Retries is the number of retries so far.
func (v *VU) Retries() int64 { return v.retries }

func (v *VU) do(ctx context.Context, k tpcc.TxKind) error {
	now := time.Now().UTC().Truncate(time.Second)
	switch k {
	case tpcc.NewOrderTx:
		v.term.NewOrder(&v.no, now)
		if err := v.s.NewOrder(ctx, &v.no); err != nil && !(v.no.Rollback && errors.Is(err, tpcc.ErrRollback)) {
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
