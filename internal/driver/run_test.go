package driver_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// builtSQLite returns a SQLite database of one warehouse and its metadata.
func builtSQLite(t *testing.T) (dialect.Database, tpcc.Meta) {
	testenv.Require(t, testenv.Long)
	t.Helper()
	ctx := context.Background()
	db, err := dialect.Open(ctx, dbtest.SQLite(t))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 1, Seed: 5, ToolVersion: "test"}, nil); err != nil {
		t.Fatalf("build: %v", err)
	}
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	m, err := tpcc.ReadMeta(ctx, c)
	if err != nil {
		t.Fatalf("read meta: %v", err)
	}
	return db, m
}

func shortRun() driver.Options {
	o := driver.Defaults()
	o.VUs = 2
	o.Rampup = time.Second
	o.Duration = 3 * time.Second
	o.Grace = 2 * time.Second
	o.Style = dialect.StyleClientSQL
	o.LiveEvery = time.Second
	o.Seed = 11
	return o
}

func checkConsistency(t *testing.T, db dialect.Database) {
	t.Helper()
	err := db.Snapshot(context.Background(), func(q tpcc.Querier) error {
		results, err := tpcc.CheckAll(context.Background(), q, db.Caps().MoneyTolerance, false)
		for _, r := range results {
			if !r.Passed && !r.Skipped {
				t.Errorf("consistency %s %s failed after the run: %s", r.Clause, r.Name, r.Detail)
			}
		}
		return err
	})
	if err != nil {
		t.Fatalf("consistency checks: %v", err)
	}
}

func TestRunSQLite(t *testing.T) {
	db, meta := builtSQLite(t)
	var mu sync.Mutex
	var lives []driver.Live
	o := shortRun()
	res, err := driver.Run(context.Background(), db, meta, o, func(l driver.Live) {
		mu.Lock()
		lives = append(lives, l)
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Partial {
		t.Errorf("Partial: got true for a run that completed")
	}
	if err := tpcc.ValidRunConstants(meta.Load, res.RunConstants); err != nil {
		t.Errorf("run constants: %v", err)
	}

	var completed, rolledBack, newOrders int64
	for _, k := range res.Kinds {
		if k.Completed == 0 {
			t.Errorf("%s: no transaction completed", k.Kind)
		}
		if k.Completed > 0 && (k.LatencyMicros.P50 <= 0 || k.LatencyMicros.Max < k.LatencyMicros.P99) {
			t.Errorf("%s: latency summary %+v is not a distribution", k.Kind, k.LatencyMicros)
		}
		if got := res.Histograms()[tpcc.TxKind(kindIndex(t, k.Kind))].TotalCount(); got != k.Completed {
			t.Errorf("%s: histogram holds %d values, want %d completed", k.Kind, got, k.Completed)
		}
		completed += k.Completed
		if k.Kind == tpcc.NewOrderTx.String() {
			rolledBack = k.RolledBack
			newOrders = k.Completed - k.RolledBack
		} else if k.RolledBack != 0 {
			t.Errorf("%s: %d rollbacks, only New-Order rolls back", k.Kind, k.RolledBack)
		}
	}
	if rolledBack > newOrders {
		t.Errorf("rolled back %d New-Orders out of %d", rolledBack, newOrders+rolledBack)
	}
	minutes := res.Window.Seconds / 60
	if res.Window.Seconds <= 0 || !res.Window.End.After(res.Window.Start) {
		t.Fatalf("window %+v is empty", res.Window)
	}
	if got, want := res.DriverTPM, float64(completed)/minutes; math.Abs(got-want) > 1e-6*want {
		t.Errorf("DriverTPM: got %v, want completed/minutes = %v", got, want)
	}
	if got, want := res.DriverNOPM, float64(newOrders)/minutes; math.Abs(got-want) > 1e-6*want {
		t.Errorf("DriverNOPM: got %v, want %v", got, want)
	}
	// SQLite has no server counter: TPM is the driver's count.
	if res.TPMSource != driver.DriverTPMSource || res.DBTransactions != completed {
		t.Errorf("TPM source %q with %d transactions, want %q with %d", res.TPMSource, res.DBTransactions, driver.DriverTPMSource, completed)
	}
	if res.NOPM <= 0 || res.DBNewOrders <= 0 {
		t.Errorf("NOPM %v from %d new orders: want > 0", res.NOPM, res.DBNewOrders)
	}

	// The series adds up to the totals.
	var sTx, sNO, sErr int64
	for _, s := range res.Series {
		sTx += s.Transactions
		sNO += s.NewOrders
		sErr += s.Errors
	}
	var failed int64
	for _, n := range res.ErrorsByClass {
		failed += n
	}
	if sTx != completed || sNO != newOrders || sErr != failed {
		t.Errorf("series sums (tx %d, new orders %d, errors %d) differ from totals (%d, %d, %d)", sTx, sNO, sErr, completed, newOrders, failed)
	}
	if len(res.Series) < 2 {
		t.Errorf("series: got %d samples over a %v s window", len(res.Series), res.Window.Seconds)
	}

	// Audit: one count per completed transaction, figures present.
	if got := res.Audit.Total(); got != completed {
		t.Errorf("audit counts %d transactions, want %d", got, completed)
	}
	if len(res.AuditFigures) == 0 {
		t.Errorf("no audit figures")
	}
	var mix float64
	for _, p := range res.MixPct {
		mix += p
	}
	if math.Abs(mix-100) > 1e-9 {
		t.Errorf("realised mix adds up to %v%%, want 100", mix)
	}

	mu.Lock()
	if len(lives) == 0 {
		t.Errorf("live was never called")
	}
	mu.Unlock()

	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	if testing.Verbose() {
		t.Logf("result: %s", b)
	}
	for _, key := range []string{`"nopm":`, `"driver_cpu_micros_per_tx":`, `"series":`, `"latency_micros":`, `"window":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("result JSON lacks %s", key)
		}
	}

	checkConsistency(t, db)
}

func kindIndex(t *testing.T, name string) int {
	t.Helper()
	for k := range tpcc.NumTxKinds {
		if tpcc.TxKind(k).String() == name {
			return k
		}
	}
	t.Fatalf("unknown kind %q", name)
	return 0
}

func TestRunSQLiteCanceled(t *testing.T) {
	testenv.Require(t, testenv.Long)
	db, meta := builtSQLite(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := shortRun()
	o.Rampup = 0
	o.Duration = time.Minute
	// Cancel as Ctrl-C would, once the first live report shows the window running.
	res, err := driver.Run(ctx, db, meta, o, func(l driver.Live) {
		if l.Phase == driver.PhaseMeasure {
			cancel()
		}
	})
	if err != nil {
		t.Fatalf("canceled Run: got error %v, want the partial result and nil", err)
	}
	if !res.Partial {
		t.Errorf("Partial: got false after cancellation")
	}
	if res.Window.Seconds <= 0 || res.Window.Seconds >= 60 {
		t.Errorf("window of a canceled run: %v s, want cut short", res.Window.Seconds)
	}
	if res.DBNewOrders <= 0 {
		t.Errorf("end counters of a canceled run: %d new orders, want them read", res.DBNewOrders)
	}
	checkConsistency(t, db)
}

func TestRunRefusesBadMeta(t *testing.T) {
	testenv.Require(t, testenv.Long)
	db, meta := builtSQLite(t)
	for _, c := range []struct {
		name string
		edit func(*tpcc.Meta)
	}{
		{"no warehouses", func(m *tpcc.Meta) { m.Warehouses = 0 }},
		{"load constant out of range", func(m *tpcc.Meta) { m.Load.CLast = 300 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := meta
			c.edit(&m)
			if _, err := driver.Run(context.Background(), db, m, shortRun(), nil); err == nil {
				t.Errorf("Run with %+v: got nil error", m)
			}
		})
	}
}

// TestRunSharedStart: two runs sharing a start measure from the instant
// the barrier released them plus the ramp-up, to that plus the duration
// (neither window opens or closes early); a run that cannot start
// releases its partner with ErrBarrierBroken instead of leaving it
// waiting.
func TestRunSharedStart(t *testing.T) {
	testenv.Require(t, testenv.Long)
	db, meta := builtSQLite(t)
	o := shortRun()
	o.VUs = 1
	o.Start = driver.NewBarrier(2)
	results := make([]*driver.Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			ro := o
			ro.Seed += uint64(i)
			results[i], errs[i] = driver.Run(context.Background(), db, meta, ro, nil)
		})
	}
	wg.Wait()
	released := o.Start.Released()
	if released.IsZero() {
		t.Fatalf("the barrier never released the runs")
	}
	start, end := released.Add(o.Rampup), released.Add(o.Rampup+o.Duration)
	for i, res := range results {
		if errs[i] != nil || res == nil || res.Partial {
			t.Fatalf("run %d: %v (result %v)", i, errs[i], res)
		}
		if res.Window.Start.Before(start) || res.Window.End.Before(end) {
			t.Errorf("run %d window [%s, %s] opens or closes before the shared [%s, %s]", i,
				res.Window.Start.Format(time.StampMicro), res.Window.End.Format(time.StampMicro),
				start.Format(time.StampMicro), end.Format(time.StampMicro))
		}
		if res.DBNewOrders <= 0 {
			t.Errorf("run %d: %d new orders, want its counters read", i, res.DBNewOrders)
		}
	}

	bad := meta
	bad.Warehouses = 0
	o.Start = driver.NewBarrier(2)
	wg.Go(func() { _, errs[0] = driver.Run(context.Background(), db, bad, o, nil) })
	wg.Go(func() { _, errs[1] = driver.Run(context.Background(), db, meta, o, nil) })
	wg.Wait()
	if errs[0] == nil || errors.Is(errs[0], driver.ErrBarrierBroken) {
		t.Errorf("run on a bad schema: got %v, want its own error", errs[0])
	}
	if !errors.Is(errs[1], driver.ErrBarrierBroken) {
		t.Errorf("its partner: got %v, want ErrBarrierBroken", errs[1])
	}
}

// TestRunStartAt: a run given a wall-clock start (as shards on several
// hosts are) measures from StartAt+Rampup to StartAt+Rampup+Duration,
// neither earlier; as shard 0 it also reads the database-wide counters
// with its own.
func TestRunStartAt(t *testing.T) {
	testenv.Require(t, testenv.Long)
	db, meta := builtSQLite(t)
	o := shortRun()
	o.StartAt = time.Now().Add(1500 * time.Millisecond)
	var err error
	o.Shard, o.VUs, err = driver.Shard{Index: 0, Count: 1}.Split(o.VUs, meta.Warehouses)
	if err != nil {
		t.Fatal(err)
	}
	res, err := driver.Run(context.Background(), db, meta, o, nil)
	if err != nil || res == nil || res.Partial {
		t.Fatalf("run: %v (result %v)", err, res)
	}
	start, end := o.StartAt.Add(o.Rampup), o.StartAt.Add(o.Rampup+o.Duration)
	if res.Window.Start.Before(start) || res.Window.End.Before(end) {
		t.Errorf("window [%s, %s] opens or closes before the shared [%s, %s]",
			res.Window.Start.Format(time.StampMicro), res.Window.End.Format(time.StampMicro),
			start.Format(time.StampMicro), end.Format(time.StampMicro))
	}
	// One shard of one: its warehouses are all of them, read in the same
	// statement.
	if res.Group == nil || res.Group.DBNewOrders <= 0 || res.Group.DBNewOrders != res.DBNewOrders {
		t.Errorf("database-wide counters %+v (own warehouses: %d new orders): want them read, equal to the shard's", res.Group, res.DBNewOrders)
	}
}
