package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/dialect/postgres"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestHygiene builds one warehouse, saves a baseline, changes the database
// with transactions, resets it twice and checks that it equals the build,
// that a baseline from another build is refused and that CHECKPOINT runs.
func TestHygiene(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, dbtest.Postgres(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	hygieneSuite(t, db, dialect.StyleProcedures, func(ctx context.Context, q tpcc.Querier) error {
		_, err := q.Exec(ctx, "UPDATE "+tpcc.MetaTable+" SET v = '2001-01-01T00:00:00Z' WHERE k = 'built_at'")
		return err
	})
}

// state is what a reset must give back: the row count of every table and
// the sum of D_NEXT_O_ID (from which NOPM is computed).
type state struct {
	rows      map[tpcc.Table]int64
	nextOrder int64
}

func readState(ctx context.Context, t *testing.T, db dialect.Database) state {
	t.Helper()
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	s := state{rows: make(map[tpcc.Table]int64)}
	for _, tb := range tpcc.Tables {
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+tb.String()).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", tb, err)
		}
		s.rows[tb] = n
	}
	if err := c.QueryRow(ctx, "SELECT sum(d_next_o_id) FROM district").Scan(&s.nextOrder); err != nil {
		t.Fatalf("sum d_next_o_id: %v", err)
	}
	return s
}

func compareState(t *testing.T, when string, got, want state) {
	t.Helper()
	if got.nextOrder != want.nextOrder {
		t.Errorf("%s: sum(d_next_o_id) = %d, want %d", when, got.nextOrder, want.nextOrder)
	}
	for _, tb := range tpcc.Tables {
		if got.rows[tb] != want.rows[tb] {
			t.Errorf("%s: %s has %d rows, want %d", when, tb, got.rows[tb], want.rows[tb])
		}
	}
}

// newOrders runs n New-Order transactions on a session of its own.
func newOrders(ctx context.Context, t *testing.T, db dialect.Database, style dialect.Style, load tpcc.Constants, n int) {
	t.Helper()
	s, err := db.NewSession(ctx, style)
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	defer s.Close()
	r := tpcc.NewRand(7, tpcc.TerminalStream(1))
	term := tpcc.NewTerminal(r, tpcc.NewRunConstants(r, load), 1, 1, 1)
	var in tpcc.NewOrder
	for range n {
		term.NewOrder(&in, time.Now())
		if err := s.NewOrder(ctx, &in); err != nil && !errors.Is(err, tpcc.ErrRollback) {
			t.Fatalf("new order: %v", err)
		}
	}
}

func hygieneSuite(t *testing.T, db dialect.Database, style dialect.Style, rebuildMeta func(context.Context, tpcc.Querier) error) {
	ctx := context.Background()
	cp, ok := db.(dialect.Checkpointer)
	if !ok {
		t.Fatalf("%T is not a dialect.Checkpointer", db)
	}
	rs, ok := db.(dialect.Resetter)
	if !ok {
		t.Fatalf("%T is not a dialect.Resetter", db)
	}
	t0 := time.Now()
	res, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 11, ToolVersion: "test"}, nil)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Cleanup(func() {
		if err := rs.DropBaseline(context.Background()); err != nil {
			t.Errorf("drop baseline: %v", err)
		}
	})

	t.Logf("build of 1 warehouse: %v", time.Since(t0))
	t0 = time.Now()
	if err := cp.Checkpoint(ctx); err != nil {
		t.Errorf("checkpoint: %v (class %v)", err, dialect.ClassOf(err))
	}
	t.Logf("checkpoint: %v", time.Since(t0))
	if err := rs.Reset(ctx); !errors.Is(err, dialect.ErrNoBaseline) {
		t.Errorf("reset before a baseline: got %v, want %v", err, dialect.ErrNoBaseline)
	}
	built := readState(ctx, t, db)
	t0 = time.Now()
	if err := rs.SaveBaseline(ctx); err != nil {
		t.Fatalf("save baseline: %v", err)
	}
	t.Logf("save baseline of 1 warehouse: %v", time.Since(t0))

	for _, round := range []string{"first reset", "second reset"} {
		newOrders(ctx, t, db, style, res.LoadConstants, 20)
		changed := readState(ctx, t, db)
		if changed.nextOrder <= built.nextOrder {
			t.Fatalf("%s: sum(d_next_o_id) after 20 New-Orders = %d, want more than %d", round, changed.nextOrder, built.nextOrder)
		}
		t0 := time.Now()
		if err := rs.Reset(ctx); err != nil {
			t.Fatalf("%s: %v", round, err)
		}
		t.Logf("%s of 1 warehouse: %v", round, time.Since(t0))
		compareState(t, round, readState(ctx, t, db), built)
		err := db.Snapshot(ctx, func(q tpcc.Querier) error {
			results, err := tpcc.CheckAll(ctx, q, db.Caps().MoneyTolerance, true)
			for _, r := range results {
				if !r.Passed {
					t.Errorf("%s: %s %s: got failed (%s), want passed", round, r.Clause, r.Name, r.Detail)
				}
			}
			return err
		})
		if err != nil {
			t.Fatalf("%s: consistency checks: %v", round, err)
		}
	}
	// The database still serves transactions after a reset.
	newOrders(ctx, t, db, style, res.LoadConstants, 3)

	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	err = rebuildMeta(ctx, c)
	c.Close()
	if err != nil {
		t.Fatalf("pretend a rebuild: %v", err)
	}
	if err := rs.Reset(ctx); !errors.Is(err, dialect.ErrBaselineStale) {
		t.Errorf("reset after a rebuild: got %v, want %v", err, dialect.ErrBaselineStale)
	}
}

// TestResetLeavesOtherSessionsAlone: --reset-between ended every other
// session of the same database user ("FATAL: terminating connection due
// to administrator command"). A reset now fails naming them and leaves
// them be; only with EndOtherSessions (--terminate-sessions) does it end
// them.
func TestResetLeavesOtherSessionsAlone(t *testing.T) {
	ctx := context.Background()
	tg := dbtest.Postgres(t)
	d, err := postgres.Open(ctx, tg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, err := load.Build(ctx, d, load.Options{Warehouses: 1, Workers: 2, Seed: 11, ToolVersion: "test"}, nil); err != nil {
		t.Fatalf("build: %v", err)
	}
	rs := d.(dialect.Resetter)
	t.Cleanup(func() { _ = rs.DropBaseline(context.Background()) })
	if err := rs.SaveBaseline(ctx); err != nil {
		t.Fatalf("save baseline: %v", err)
	}
	// Another client of the same user, as psql would be.
	other, err := pgx.Connect(ctx, dbtest.RawURL(tg))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	alive := func() bool { return other.Ping(ctx) == nil }

	err = rs.Reset(ctx)
	if !errors.Is(err, dialect.ErrInUse) || !strings.Contains(err.Error(), "--terminate-sessions") {
		t.Errorf("reset with another session connected: got %v, want ErrInUse naming --terminate-sessions", err)
	}
	if !alive() {
		t.Fatalf("the other session was ended without --terminate-sessions")
	}
	d.(dialect.SessionEnder).EndOtherSessions(true)
	if err := rs.Reset(ctx); err != nil {
		t.Fatalf("reset with EndOtherSessions: %v", err)
	}
	if alive() {
		t.Errorf("the other session survived a reset with EndOtherSessions")
	}
}
