package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// testHygiene builds one warehouse, checkpoints, saves a baseline, changes
// the database with New-Orders, resets it twice and checks that it equals
// the build each time and still serves transactions, that a baseline
// from another build is refused, and that DropBaseline leaves nothing
// (dialect.Checkpointer, dialect.Resetter). Before the baseline, each of
// the user's look-alikes at the baseline's name is refused by
// SaveBaseline, Reset and DropBaseline and left as it was.
func testHygiene(t *testing.T, db dialect.Database, tg dialect.Target, d Dialect) {
	cp, isCheckpointer := db.(dialect.Checkpointer)
	rs, isResetter := db.(dialect.Resetter)
	if !isCheckpointer && !isResetter {
		t.Skipf("%s is neither a dialect.Checkpointer nor a dialect.Resetter", db.Name())
	}
	ctx := subtestContext(t)
	style := styles(db.Caps())[0]
	t0 := time.Now()
	res, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 11, ToolVersion: "conformance"}, nil)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Logf("build of 1 warehouse: %v", time.Since(t0))

	if isCheckpointer {
		t0 = time.Now()
		if err := cp.Checkpoint(ctx); err != nil {
			t.Errorf("checkpoint: %v (class %v)", err, dialect.ClassOf(err))
		}
		t.Logf("checkpoint: %v", time.Since(t0))
	}
	if !isResetter {
		return
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := rs.DropBaseline(ctx); err != nil {
			t.Errorf("drop baseline: %v", err)
		}
	})
	built := readState(ctx, t, db)
	for _, la := range d.LookAlikes {
		intact, remove := la.Plant(t, tg)
		for _, step := range []struct {
			name string
			do   func(context.Context) error
		}{{"save baseline", rs.SaveBaseline}, {"reset", rs.Reset}, {"drop baseline", rs.DropBaseline}} {
			if err := step.do(ctx); !errors.Is(err, dialect.ErrNotOurs) {
				t.Errorf("%s with %s of the user's at the baseline's name: got %v, want %v", step.name, la.Name, err, dialect.ErrNotOurs)
			}
			if err := intact(); err != nil {
				t.Errorf("%s changed %s of the user's at the baseline's name: %v", step.name, la.Name, err)
			}
		}
		remove()
		compareState(t, "after refusing "+la.Name, readState(ctx, t, db), built)
	}
	if err := rs.Reset(ctx); !errors.Is(err, dialect.ErrNoBaseline) {
		t.Errorf("reset before a baseline: got %v, want %v", err, dialect.ErrNoBaseline)
	}
	t0 = time.Now()
	if err := rs.SaveBaseline(ctx); err != nil {
		t.Fatalf("save baseline: %v", err)
	}
	t.Logf("save baseline of 1 warehouse: %v", time.Since(t0))
	if d.BaselineExists != nil && !d.BaselineExists(t, tg) {
		t.Errorf("SaveBaseline returned but nothing is at the baseline's name")
	}
	if err := rs.SaveBaseline(ctx); err != nil {
		t.Fatalf("save the baseline again, replacing oltplab's own: %v", err)
	}

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
		t0 = time.Now()
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
		t.Logf("%s: consistency checks: %v", round, time.Since(t0))
	}
	// The database still serves transactions after a reset.
	newOrders(ctx, t, db, style, res.LoadConstants, 3)

	// Pretend a rebuild: the build time in the metadata changes.
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	exec(ctx, t, c, "UPDATE "+tpcc.MetaTable+" SET v = '2001-01-01T00:00:00Z' WHERE k = 'built_at'")
	c.Close()
	if err := rs.Reset(ctx); !errors.Is(err, dialect.ErrBaselineStale) {
		t.Errorf("reset after a rebuild: got %v, want %v", err, dialect.ErrBaselineStale)
	}
	// oltplab's own copy is removed.
	if err := rs.DropBaseline(ctx); err != nil {
		t.Errorf("drop baseline: %v", err)
	}
	if d.BaselineExists != nil && d.BaselineExists(t, tg) {
		t.Errorf("DropBaseline left something at the baseline's name")
	}
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
		s.rows[tb] = queryInt(ctx, t, c, "SELECT COUNT(*) FROM "+tb.String())
	}
	s.nextOrder = queryInt(ctx, t, c, "SELECT SUM(d_next_o_id) FROM district")
	return s
}

func compareState(t *testing.T, when string, got, want state) {
	t.Helper()
	if got.nextOrder != want.nextOrder {
		t.Errorf("%s: SUM(d_next_o_id) = %d, want %d", when, got.nextOrder, want.nextOrder)
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
