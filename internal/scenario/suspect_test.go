package scenario_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// builtEnv builds one warehouse on target and returns an Env recording
// into a fresh store, with the opened database.
func builtEnv(t *testing.T, tg dialect.Target) (*scenario.Env, dialect.Database) {
	testenv.Require(t, testenv.Long)
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env := &scenario.Env{Store: st, ToolVersion: "test"}
	if _, _, err := env.Build(ctx, db, tg, load.Options{Warehouses: 1, Workers: 1, Seed: 7, ToolVersion: "test"}); err != nil {
		t.Fatalf("build: %v", err)
	}
	return env, db
}

// otherClient runs the workload on tg from a second connection pool, as
// another process would, until the returned stop is called. It returns
// once that client is committing transactions.
func otherClient(t *testing.T, tg dialect.Target) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := scenario.ReadSchema(ctx, db, tg)
	if err != nil {
		t.Fatal(err)
	}
	o := driver.Defaults()
	o.VUs, o.Rampup, o.Duration, o.Grace, o.Seed = 2, 0, time.Hour, time.Second, 99
	o.LiveEvery = 100 * time.Millisecond
	working := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = driver.Run(ctx, db, meta, o, func(l driver.Live) {
			if l.NOPM > 0 {
				once.Do(func() { close(working) })
			}
		})
	}()
	select {
	case <-working:
	case <-done:
		t.Fatal("the other client stopped before committing anything")
	}
	return func() {
		cancel()
		<-done
		db.Close()
	}
}

// TestSuspectWhenAnotherClientWrites: with another client running
// transactions on the same database, NOPM and TPM from the database
// exceed the driver's own counts; the run is stored as suspect with the
// reason and the profile says so with a SuspectError.
func TestSuspectWhenAnotherClientWrites(t *testing.T) {
	for _, c := range []struct {
		name   string
		target func(testing.TB) dialect.Target
	}{{"postgres", dbtest.Postgres}, {"mysql", dbtest.MySQL}} {
		t.Run(c.name, func(t *testing.T) {
			tg := c.target(t)
			env, db := builtEnv(t, tg)
			stop := otherClient(t, tg)
			// Long enough for the driver to count the transactions the
			// cross-check needs to conclude (driver.MinCheckedTransactions):
			// a loaded host may run fewer in 5 s, and the check then
			// concludes nothing (no error), so the window grows until it
			// does; 60 s counts tens of thousands even there.
			d := shortDriver()
			var out scenario.ProfileOutcome
			var err error
			for _, window := range []time.Duration{5 * time.Second, 20 * time.Second, 60 * time.Second} {
				d.Duration = window
				out, err = env.Profile(context.Background(), db, tg, scenario.ProfileOptions{Steps: []int{1}, Repeat: 1, Driver: d})
				if err != nil {
					break
				}
				t.Logf("a %s window concluded nothing (too few transactions on this host): measuring longer", window)
			}
			stop()
			assertSuspect(t, env, out, err, "NOPM from the database")
		})
	}
}

// TestSuspectWhenCountersGoBack: the schema's New-Order counter (and on
// PostgreSQL the statistics) set back during the measured window, as a
// rebuild by another process would, give negative deltas: stored as
// suspect, never as ok.
func TestSuspectWhenCountersGoBack(t *testing.T) {
	testenv.Require(t, testenv.Long)
	// Statements that count as transactions on PostgreSQL, so that its
	// counter stands well above what the window adds after the reset: one
	// virtual user runs over 1,000 client-side transactions a second, so
	// the 3 s window adds a few thousand.
	warm := make([]string, 20000)
	for i := range warm {
		warm[i] = "SELECT 1"
	}
	for _, c := range []struct {
		name    string
		target  func(testing.TB) dialect.Target
		prepare []string
		reset   []string
		want    []string
	}{
		{"sqlite", dbtest.SQLite, nil, []string{"UPDATE district SET d_next_o_id = d_next_o_id - 300"},
			[]string{"SUM(d_next_o_id) went backwards"}},
		{"postgres", dbtest.Postgres, warm, []string{"UPDATE district SET d_next_o_id = d_next_o_id - 300", "SELECT pg_stat_reset()"},
			[]string{"SUM(d_next_o_id) went backwards", "transaction counter (pg_stat_database xact_commit+xact_rollback) went backwards"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg := c.target(t)
			env, db := builtEnv(t, tg)
			if err := exec(db, c.prepare...); err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			var resetErr error
			env.Observer.Live = func(l driver.Live) {
				if l.Phase != driver.PhaseMeasure {
					return
				}
				once.Do(func() { resetErr = exec(db, c.reset...) })
			}
			d := shortDriver()
			d.Duration, d.LiveEvery = 3*time.Second, 500*time.Millisecond
			out, err := env.Profile(context.Background(), db, tg, scenario.ProfileOptions{Steps: []int{1}, Repeat: 1, Driver: d})
			if resetErr != nil {
				t.Fatalf("set the counters back: %v", resetErr)
			}
			assertSuspect(t, env, out, err, c.want...)
		})
	}
}

func exec(db dialect.Database, stmts ...string) error {
	ctx := context.Background()
	c, err := db.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func assertSuspect(t *testing.T, env *scenario.Env, out scenario.ProfileOutcome, err error, reasons ...string) {
	t.Helper()
	var se *scenario.SuspectError
	if !errors.As(err, &se) {
		t.Fatalf("profile: got error %v, want a SuspectError", err)
	}
	if len(out.Runs) != 1 || len(se.Runs) != 1 || se.Runs[0].RunID != out.Runs[0] {
		t.Fatalf("suspect runs %+v of %v, want the one run", se.Runs, out.Runs)
	}
	ctx := context.Background()
	r, err := env.Store.GetRun(ctx, out.Runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusSuspect {
		t.Errorf("stored run status: got %s, want suspect", r.Status)
	}
	// Read back from a saved file, the same result passes the rules it
	// was stored by only as suspect.
	o := store.Outcome{Status: r.Status, Summary: r.Summary, Error: r.Error, EndedAt: r.EndedAt}
	if err := summary.CheckStored(r.Kind, o); err != nil {
		t.Errorf("CheckStored refuses the suspect run as stored: %v", err)
	}
	o.Status = store.StatusOK
	if err := summary.CheckStored(r.Kind, o); err == nil || !strings.Contains(err.Error(), "suspect") {
		t.Errorf("CheckStored of the suspect run marked ok: got %v, want it refused", err)
	}
	for _, want := range reasons {
		if !strings.Contains(string(r.Summary), want) {
			t.Errorf("stored summary lacks the reason %q: %s", want, r.Summary)
		}
	}
	p, err := env.Store.GetProfile(ctx, out.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != store.StatusSuspect {
		t.Errorf("stored profile status: got %s, want suspect", p.Status)
	}
}
