// Package conformance is the one dialect conformance suite, as restic
// runs one backend suite against every backend: a dialect conforms when
// it opens and describes itself, builds the TPC-C population (4.3.3.1),
// runs each transaction of clause 2 with the specified effects in every
// execution style it offers, survives a short timed run with the 3.3.2
// consistency conditions intact, classifies its errors, never shows a
// password, and does what each optional ability it implements promises
// (waits, interrupts, checkpoints and resets, index rebuilds, the CPU
// calibration loop). It also holds the TPC-H half (tpch.go) and the
// benchmarks every dialect shares (bench.go). Each dialect package runs it
// from its own conformance_test.go.
//
// It is test-only (only test files import it) and sees databases only
// through internal/dialect: never a dialect package, store or cli.
package conformance

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// subtestTimeout bounds each subtest, so a hung server fails the suite
// instead of stalling it. It is generous: a build and its checks take
// minutes on a loaded 2-core machine, and the bound is for a hang, not a
// measurement.
const subtestTimeout = 10 * time.Minute

// Dialect is one dialect under test: how to get a fresh database, and what
// the suite must know about the engine that the dialect interfaces do not
// say (restic's backend suite takes such per-backend settings too).
type Dialect struct {
	// Open returns a target for a fresh, empty database each time it is
	// called (dbtest.SQLite, dbtest.Postgres, dbtest.MySQL); it may skip
	// the test (no server on a developer machine) or fail it (CI).
	Open func(t testing.TB) dialect.Target

	// The rest is for a dialect.WaitSampler.

	// SessionIDQuery returns, on a connection, the server's id of that
	// connection's session as dialect.WaitSample.Session reports it.
	SessionIDQuery string
	// Counters are keys that WaitProbe.DBCounters must report.
	Counters []string
	// GrowingCounters are counters that must grow once a transaction
	// waited on another's row lock, both committed and their connections
	// closed (some engines publish statistics when a session ends).
	GrowingCounters []string
	// LockWaitEvent is the WaitSample.Event of a session blocked on another
	// session's row lock; "" when the engine does not name it.
	LockWaitEvent string

	// The rest is for a dialect.Resetter.

	// LookAlikes are what a user may keep at the name of the baseline copy
	// (dbtest.PostgresLookAlikes, ...): each is planted, and SaveBaseline,
	// Reset and DropBaseline must refuse it and leave it as it was.
	LookAlikes []LookAlike
	// BaselineExists reports whether anything is at the name of the
	// baseline copy of tg's database (dbtest.BaselineExists).
	BaselineExists func(t testing.TB, tg dialect.Target) bool
}

// LookAlike is one thing of the user's at the name of a baseline copy:
// Plant makes it for tg's database and returns what changed in it since
// (intact; nil when nothing) and how to take it away (remove).
type LookAlike struct {
	Name  string
	Plant func(t testing.TB, tg dialect.Target) (intact func() error, remove func())
}

// LookAlikes converts look-alikes of the same shape (dbtest's) to the
// suite's.
func LookAlikes[L ~struct {
	Name  string
	Plant func(t testing.TB, tg dialect.Target) (intact func() error, remove func())
}](ls []L) []LookAlike {
	out := make([]LookAlike, len(ls))
	for i, l := range ls {
		out[i] = LookAlike(l)
	}
	return out
}

// Run runs the suite on d.
func Run(t *testing.T, d Dialect) {
	open := func(t *testing.T) dialect.Target { return d.Open(t) }
	t.Run("open", func(t *testing.T) { testOpen(t, open(t)) })
	t.Run("errors", func(t *testing.T) { testErrors(t, open(t)) })
	t.Run("secrets", func(t *testing.T) { testSecrets(t, open(t)) })
	t.Run("calibrate", func(t *testing.T) { testCalibrate(t, open(t)) })
	// Checkpoint and reset need a database of their own: they change it.
	t.Run("hygiene", func(t *testing.T) {
		tg := open(t)
		testHygiene(t, openDB(t, tg), tg, d)
	})

	// build, transactions, run, waits and interrupt share one built
	// database: building it takes most of the suite's time. Transactions
	// leave it consistent, so the run and its checks start from a valid
	// state.
	db := openDB(t, open(t))
	built := t.Run("build", func(t *testing.T) { testBuild(t, db) })
	for _, st := range []struct {
		name string
		test func(*testing.T, dialect.Database)
	}{
		{"transactions", testTransactions},
		{"run", testRun},
		{"waits", func(t *testing.T, db dialect.Database) { testWaits(t, db, d) }},
		{"interrupt", testInterrupt},
		// Last: a rebuild rewrites the table (MariaDB, SQLite).
		{"rebuild", func(t *testing.T, db dialect.Database) { testRebuild(t, db, open(t)) }},
	} {
		t.Run(st.name, func(t *testing.T) {
			if !built {
				t.Skip("the build failed")
			}
			st.test(t, db)
		})
	}
}

// subtestContext is a context for one subtest, bounded by subtestTimeout.
func subtestContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), subtestTimeout)
	t.Cleanup(cancel)
	return ctx
}

// openDB opens tg through the dialect registry and closes it when t ends.
func openDB(t testing.TB, tg dialect.Target) dialect.Database {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatalf("dialect.Open(%s): %v", tg, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// schemaTables are the names HasTable must report: the nine tables of
// clause 1.3 and the metadata table.
func schemaTables() []string {
	names := make([]string, 0, len(tpcc.Tables)+1)
	for _, tb := range tpcc.Tables {
		names = append(names, tb.String())
	}
	return append(names, tpcc.MetaTable)
}

func testOpen(t *testing.T, tg dialect.Target) {
	ctx := subtestContext(t)
	db := openDB(t, tg)

	if got := db.Name(); got == "" || got != tg.Scheme {
		t.Errorf("Name() = %q, want the target's scheme %q (results are recorded under it)", got, tg.Scheme)
	}
	caps := db.Caps()
	if caps.MaxLoadWorkers < 0 || caps.MoneyTolerance < 0 || caps.MoneyTolerance >= 0.01 {
		t.Errorf("Caps() = %+v: want MaxLoadWorkers >= 0 and MoneyTolerance in [0, 0.01)", caps)
	}
	// Shared code chooses the style from Caps and build installs the
	// procedures through ProcedureInstaller: the two must agree.
	_, installs := db.(dialect.ProcedureInstaller)
	if caps.Procedures != installs {
		t.Errorf("Caps().Procedures = %v but implements dialect.ProcedureInstaller = %v: want them equal", caps.Procedures, installs)
	}
	t.Logf("%s: caps %+v", db.Name(), caps)
	// An embedded database's files are on this host by definition; so are
	// those of a test server (loopback), whose admin user may read them.
	if dd, ok := db.(dialect.DataDirer); ok {
		dir, err := dd.DataDir(ctx)
		if err != nil || dir == "" {
			t.Errorf("DataDir() = %q, %v: want the directory of a database on this host", dir, err)
		} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("DataDir() = %q: not a directory on this host (%v)", dir, err)
		}
	} else if caps.Embedded {
		t.Errorf("Caps().Embedded but %T is not a dialect.DataDirer: an embedded database's files are on this host", db)
	}

	v, err := db.Version(ctx)
	if err != nil || v == "" {
		t.Errorf("Version() = %q, %v: want a non-empty version", v, err)
	}
	s, err := db.Settings(ctx)
	if err != nil || len(s) == 0 {
		t.Errorf("Settings() = %d settings, %v: want some", len(s), err)
	}
	for k := range s {
		if k == "" {
			t.Errorf("Settings() has an empty key")
		}
	}
	t.Logf("version %q, %d settings", v, len(s))

	for _, name := range schemaTables() {
		ok, err := db.HasTable(ctx, name)
		if err != nil || ok {
			t.Errorf("HasTable(%q) on an empty database = %v, %v: want false, nil", name, ok, err)
		}
	}
}

// The population of clause 4.3.3.1.
const (
	buildWarehouses        = 2
	itemRows               = 100000 // ITEM: 100,000 rows
	stockPerWarehouse      = 100000 // STOCK: 100,000 per warehouse
	districtsPerWarehouse  = 10     // DISTRICT: 10 per warehouse
	customersPerWarehouse  = 30000  // CUSTOMER: 3,000 per district
	historyPerWarehouse    = 30000  // HISTORY: 1 per customer
	ordersPerWarehouse     = 30000  // ORDER: 3,000 per district
	newOrdersPerWarehouse  = 9000   // NEW-ORDER: the last 900 orders of each district
	buildSeed              = 20250101
	buildToolVersionMarker = "conformance"
)

func testBuild(t *testing.T, db dialect.Database) {
	ctx := subtestContext(t)
	start := time.Now()
	res, err := load.Build(ctx, db, load.Options{
		Warehouses: buildWarehouses, Workers: 2, Seed: buildSeed, ToolVersion: buildToolVersionMarker,
	}, nil)
	if err != nil {
		t.Fatalf("load.Build(%d warehouses): %v", buildWarehouses, err)
	}
	t.Logf("%s: built %d warehouses (%d rows, %d workers) in %s: load %.1fs, index %.1fs, procedures %.1fs, analyze %.1fs",
		db.Name(), res.Warehouses, res.TotalRows, res.Workers, time.Since(start).Round(time.Millisecond),
		res.LoadSeconds, res.IndexSeconds, res.ProceduresSeconds, res.AnalyzeSeconds)
	_, installs := db.(dialect.ProcedureInstaller)
	if res.Procedures != installs {
		t.Errorf("Result.Procedures = %v, want %v (the dialect implements ProcedureInstaller: %v)", res.Procedures, installs, installs)
	}

	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()

	// TPC-C 4.3.3.1: the cardinality of each table.
	w := int64(buildWarehouses)
	olRows := queryInt(ctx, t, c, "SELECT SUM(o_ol_cnt) FROM orders")
	cases := []struct {
		table string
		want  int64
	}{
		{"item", itemRows},
		{"warehouse", w},
		{"stock", stockPerWarehouse * w},
		{"district", districtsPerWarehouse * w},
		{"customer", customersPerWarehouse * w},
		{"history", historyPerWarehouse * w},
		{"orders", ordersPerWarehouse * w},
		{"new_order", newOrdersPerWarehouse * w},
		{"order_line", olRows}, // TPC-C 4.3.3.1: O_OL_CNT lines per order
	}
	for _, tc := range cases {
		t.Run(tc.table, func(t *testing.T) {
			if got := queryInt(ctx, t, c, "SELECT COUNT(*) FROM "+tc.table); got != tc.want {
				t.Errorf("COUNT(*) FROM %s = %d, want %d", tc.table, got, tc.want)
			}
			if got := res.Rows[tc.table]; got != tc.want {
				t.Errorf("Build's Rows[%s] = %d, want %d", tc.table, got, tc.want)
			}
		})
	}
	// TPC-C 4.3.3.1: O_OL_CNT random within [5 .. 15], so 3,000 orders
	// hold between 5 and 15 lines each.
	if lo, hi := 5*ordersPerWarehouse*w, 15*ordersPerWarehouse*w; olRows < lo || olRows > hi {
		t.Errorf("SUM(o_ol_cnt) = %d, want within [%d, %d]", olRows, lo, hi)
	}
	for _, name := range schemaTables() {
		if ok, err := db.HasTable(ctx, name); err != nil || !ok {
			t.Errorf("HasTable(%q) after the build = %v, %v: want true, nil", name, ok, err)
		}
	}

	m, err := tpcc.ReadMeta(ctx, c)
	if err != nil {
		t.Fatalf("ReadMeta after the build: %v", err)
	}
	want := tpcc.Meta{
		SchemaVersion: tpcc.SchemaVersion, Warehouses: buildWarehouses, LoadSeed: buildSeed, Load: res.LoadConstants,
		ToolVersion: buildToolVersionMarker, BuiltAt: res.BuiltAt, Dialect: db.Name(), Procedures: res.Procedures,
	}
	if !m.BuiltAt.Equal(want.BuiltAt) {
		t.Errorf("ReadMeta BuiltAt = %v, want %v", m.BuiltAt, want.BuiltAt)
	}
	m.BuiltAt, want.BuiltAt = time.Time{}, time.Time{}
	if m != want {
		t.Errorf("ReadMeta = %+v, want %+v", m, want)
	}

	checkConsistency(t, ctx, db, true)
}

// checkConsistency runs the twelve conditions of clause 3.3.2 in one
// snapshot. Right after a build every one must be checked and pass; after
// a run only the OnlyAfterBuild ones (3.3.2.11) may be skipped.
func checkConsistency(t *testing.T, ctx context.Context, db dialect.Database, afterBuild bool) {
	t.Helper()
	var results []tpcc.CheckResult
	err := db.Snapshot(ctx, func(q tpcc.Querier) error {
		var err error
		results, err = tpcc.CheckAll(ctx, q, db.Caps().MoneyTolerance, afterBuild)
		return err
	})
	if err != nil {
		t.Fatalf("CheckAll(afterBuild %v): %v", afterBuild, err)
	}
	if got, want := len(results), len(tpcc.Conditions); got != want {
		t.Errorf("CheckAll returned %d results, want %d", got, want)
	}
	onlyAfterBuild := map[string]bool{}
	for _, c := range tpcc.Conditions {
		onlyAfterBuild[c.Clause] = c.OnlyAfterBuild
	}
	for _, r := range results {
		switch {
		case r.Skipped && (afterBuild || !onlyAfterBuild[r.Clause]):
			t.Errorf("%s %s: skipped (%s), want checked", r.Clause, r.Name, r.Detail)
		case !r.Skipped && !r.Passed:
			t.Errorf("%s %s: %d violations, first: %s", r.Clause, r.Name, r.Violations, r.Detail)
		}
	}
}

// queryInt reads one integer with a direct query.
func queryInt(ctx context.Context, t *testing.T, q tpcc.Querier, sql string, args ...any) int64 {
	t.Helper()
	var v int64
	if err := q.QueryRow(ctx, sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
	return v
}

// queryMoney reads one money value, in cents.
func queryMoney(ctx context.Context, t *testing.T, q tpcc.Querier, sql string, args ...any) tpcc.Money {
	t.Helper()
	var v float64
	if err := q.QueryRow(ctx, sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
	return cents(v)
}

func queryString(ctx context.Context, t *testing.T, q tpcc.Querier, sql string, args ...any) string {
	t.Helper()
	var v string
	if err := q.QueryRow(ctx, sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
	return v
}

func exec(ctx context.Context, t *testing.T, q tpcc.Querier, sql string, args ...any) {
	t.Helper()
	if _, err := q.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
}

func cents(x float64) tpcc.Money { return tpcc.Money(math.Round(x * 100)) }
