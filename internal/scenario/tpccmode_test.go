package scenario_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// TestTPCCModeCounterOnPostgres: in the tpc-c mode the terminals key and
// think, so a run completes a transaction or two a second, while
// oltplab's samplers query the database several times a second and
// PostgreSQL counts each query as a transaction. TPM is the counter less
// what oltplab itself sent, close to the driver's own count, not the
// samplers' rate (it was 424 against the driver's 58, and the check said
// they agreed); another client's transactions meanwhile make the run
// suspect.
func TestTPCCModeCounterOnPostgres(t *testing.T) {
	tg := dbtest.Postgres(t)
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
	measure := func(t *testing.T) scenario.RunStored {
		t.Helper()
		d := driver.Defaults()
		d.Mode, d.VUs = driver.ModeTPCC, 0
		d.Rampup, d.Duration, d.Grace = 2*time.Second, 15*time.Second, 5*time.Second
		var got []scenario.RunStored
		env.Observer = scenario.Observer{RunStored: func(r scenario.RunStored) { got = append(got, r) }}
		var suspect *scenario.SuspectError
		if _, err := env.Profile(ctx, db, tg, scenario.ProfileOptions{Label: "tpcc", Steps: []int{0}, Repeat: 1, Driver: d}); err != nil &&
			!errors.As(err, &suspect) {
			t.Fatalf("profile: %v", err)
		}
		if len(got) != 1 || got[0].Result == nil || got[0].Monitor == nil || got[0].Result.Check == nil || got[0].Result.Check.Transactions == nil {
			t.Fatalf("stored runs %+v: want one cross-checked run", got)
		}
		return got[0]
	}

	t.Run("quiet", func(t *testing.T) {
		rs := measure(t)
		res, own := rs.Result, rs.Monitor.SamplerDBStatements
		w := res.Window.Seconds
		excess := (res.TPM - res.DriverTPM) * w / 60
		t.Logf("TPM %.0f (driver %.0f); counter %d, oltplab's own statements in the window %d (taken out: %d); check %+v",
			res.TPM, res.DriverTPM, res.DBTransactions, own, res.OwnStatements, *res.Check.Transactions)
		if own < 10 {
			t.Fatalf("the samplers ran %d statements in a %.0f s window: want the wait and counter samplers' several a second", own, w)
		}
		if res.OwnStatements != own {
			t.Errorf("TPM left out %d statements, want the samplers' %d", res.OwnStatements, own)
		}
		if excess > float64(own)/2 {
			t.Errorf("TPM %.0f exceeds the driver's %.0f by %.0f transactions in the window: the samplers' %d statements are counted as the workload's",
				res.TPM, res.DriverTPM, excess, own)
		}
		if res.IsSuspect() {
			t.Errorf("a quiet run is suspect: %q", res.Suspect)
		}
	})

	t.Run("another client", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, dbtest.RawURL(tg))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var dbname string
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&dbname); err != nil {
			t.Fatal(err)
		}
		t.Logf("other client on %s", dbname)
		var sent, failed int
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		// 20 reads of a table a second in autocommit (PostgreSQL 15
		// publishes a backend's transaction counts with its table
		// statistics: a SELECT 1 alone shows late or never).
		go func() {
			defer wg.Done()
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := conn.Exec(ctx, "SELECT w_ytd FROM warehouse WHERE w_id = 1"); err != nil {
						failed++
					} else {
						sent++
					}
				}
			}
		}()
		rs := measure(t)
		close(stop)
		wg.Wait()
		res := rs.Result
		t.Logf("other client: %d statements, %d failed", sent, failed)
		t.Logf("TPM %.0f (driver %.0f); check %+v; suspect %q", res.TPM, res.DriverTPM, *res.Check.Transactions, res.Suspect)
		if !res.IsSuspect() || rs.Status != store.StatusSuspect {
			t.Errorf("another client's 20 transactions a second: status %s, want the run suspect", rs.Status)
		}
	})
}
