package driver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlserver"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestSQLServerFaults: the faults of TestServerFaults that apply to the
// SQL Server dialect on its test server, Babelfish, which oltplab does not
// manage (no crash or freeze of it here): every session of the test's own
// database killed (T-SQL KILL) inside the window, and the connections gone
// silent (TestServerFaults' proxy). The virtual users reconnect, the
// outage is recorded, the run measures its window to the end, and the
// database stays consistent.
func TestSQLServerFaults(t *testing.T) {
	tg := dbtest.SQLServer(t)
	ctx := context.Background()
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 3, ToolVersion: "test"}, nil); err != nil {
		t.Fatalf("build: %v", err)
	}
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := tpcc.ReadMeta(ctx, c)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	o := shortRun()
	o.VUs = 3
	o.Rampup = 500 * time.Millisecond
	o.Duration = 6 * time.Second
	o.LiveEvery = 500 * time.Millisecond
	o.Style = dialect.StyleProcedures
	fault := func(f func() error) (func(driver.Live), func() error) {
		var once sync.Once
		done := make(chan error, 1)
		return func(l driver.Live) {
				if l.Phase == driver.PhaseMeasure {
					once.Do(func() { go func() { done <- f() }() })
				}
			}, func() error {
				select {
				case err := <-done:
					return err
				case <-time.After(time.Minute):
					return fmt.Errorf("the fault never ran")
				}
			}
	}

	t.Run("sessions killed", func(t *testing.T) {
		// The killer's connection is open before the run, so that the
		// kill lands early in the window, whatever the load.
		killer, err := db.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer killer.Close()
		ko := o
		ko.Duration = 10 * time.Second
		live, wait := fault(func() error { return killSessions(killer) })
		res, err := driver.Run(ctx, db, meta, ko, live)
		if err != nil {
			t.Fatalf("Run through killed sessions: %v", err)
		}
		if ferr := wait(); ferr != nil {
			t.Fatal(ferr)
		}
		t.Logf("sessions killed: outages %+v; fallback %q; notes %q", res.Outages, res.CountsFallback, res.FaultNotes())
		if res.Partial || len(res.Outages) == 0 || res.Outages[0].VUs == 0 || res.Outages[0].Ongoing {
			t.Errorf("partial %v, outages %+v: want the window to its end, one outage over, its connections lost", res.Partial, res.Outages)
		}
		if res.TPM < 0 || res.NOPM < 0 {
			t.Errorf("TPM %v, NOPM %v: never negative", res.TPM, res.NOPM)
		}
		checkConsistency(t, db)
	})

	t.Run("silent connection", func(t *testing.T) {
		proxy := newSilentProxy(t, tg.URL.Host)
		// Through the proxy, with the connect timeout's default: a login to
		// Babelfish on a loaded 2-core machine can take longer than the
		// 2 s of openVia.
		ptg := tg
		pu := *tg.URL
		pu.Host = proxy.Addr()
		ptg.URL = &pu
		pdb, err := dialect.Open(ctx, ptg)
		if err != nil {
			t.Fatalf("open through the proxy: %v", err)
		}
		defer pdb.Close()
		so := o
		// Below silentFor, so that the silence is an outage; 2 s, not 1:
		// the counters' read at the window's start is bounded by it too,
		// and on a loaded host Babelfish took over a second to sum
		// d_next_o_id, failing the run before the fault.
		so.AnswerTimeout = 2 * time.Second
		live, wait := fault(func() error {
			proxy.hold()
			time.Sleep(silentFor)
			proxy.resume()
			return nil
		})
		res, err := driver.Run(ctx, pdb, meta, so, live)
		if err != nil {
			t.Fatalf("Run through a silent connection: %v", err)
		}
		if ferr := wait(); ferr != nil {
			t.Fatal(ferr)
		}
		t.Logf("silent connection: outages %+v; notes %q", res.Outages, res.FaultNotes())
		if res.Partial || len(res.Outages) == 0 || res.Outages[0].Silent == 0 || res.Outages[0].Ongoing {
			t.Errorf("partial %v, outages %+v: want one outage, over, with connections taken for dead after the answer timeout",
				res.Partial, res.Outages)
		}
		checkConsistency(t, db)
	})
}

// killSessions ends, with T-SQL's KILL, every other session of c's
// database: the test's own.
func killSessions(c dialect.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := c.Query(ctx, "SELECT session_id FROM sys.dm_exec_sessions WHERE database_id = DB_ID() AND session_id <> @@SPID")
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) == 0 {
		return fmt.Errorf("no session of the database to kill")
	}
	for _, id := range ids {
		if _, err := c.Exec(ctx, fmt.Sprintf("KILL %d", id)); err != nil {
			return fmt.Errorf("KILL %d: %w", id, err)
		}
	}
	return nil
}
