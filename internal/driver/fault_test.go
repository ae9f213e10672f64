package driver_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/instance"
)

// TestServerFaults is the fault suite's server faults, on a private server
// of each engine that the test starts, freezes and kills itself:
//
//   - the server frozen (SIGSTOP to it and every process it forked) for
//     stallFor inside the measured window, then resumed: the run rides
//     through without losing a connection, the stall is on record and the
//     transactions it held show it in their latency;
//   - PostgreSQL: one backend killed (SIGKILL) while the postmaster lives
//     on: every session is ended and the statistics discarded, the
//     postmaster's start time unchanged; the run reconnects and takes the
//     driver's counts, labelled, as after a restart;
//   - the connection gone silent (a proxy between the driver and the
//     server stops forwarding without closing anything) for silentFor,
//     then forwarding again: calls without an answer for the answer
//     timeout are taken for dead, the sessions reopened once the path is
//     back, the outage recorded and the run goes on; silent for good, the
//     run ends with ErrServerGone after --reconnect-for, keeping what it
//     measured;
//   - a crash and restart inside the measured window (PostgreSQL's
//     immediate shutdown, MariaDB's SIGKILL): the run rides through and
//     ends without an error, the outage is on record with its failed and
//     unknown-outcome transactions, TPM and NOPM are the driver's own counts
//     and labelled so (the server's counters started again from zero, or
//     could not be read), never negative, not suspect, and the database is
//     consistent afterwards;
//   - the server gone for good: the run ends with ErrServerGone once the
//     virtual users gave up reconnecting (ReconnectFor), keeping what it
//     measured, with the outage on record as ongoing.
//
// Nothing here asserts how long anything took.
func TestServerFaults(t *testing.T) {
	for _, e := range []instance.Engine{instance.Postgres, instance.MariaDB} {
		t.Run(string(e), func(t *testing.T) {
			inst, tg := dbtest.PrivateServer(t, e)
			db, meta := builtServer(t, tg)

			o := shortRun()
			o.VUs = 3
			o.Rampup = 500 * time.Millisecond
			o.Duration = 6 * time.Second
			o.LiveEvery = 500 * time.Millisecond
			o.Style = dialect.StyleProcedures
			var (
				once       sync.Once
				crashErr   error
				restarted  time.Time
				crashDone  = make(chan struct{})
				faultStart = func(fault func() error) func(driver.Live) {
					return func(l driver.Live) {
						if l.Phase != driver.PhaseMeasure {
							return
						}
						once.Do(func() {
							go func() {
								defer close(crashDone)
								crashErr = fault()
								restarted = time.Now()
							}()
						})
					}
				}
				// faultDone waits for the fault once Run returned; a run
				// that never reached its measured window (it failed to
				// start) never started the fault: nothing to wait for.
				faultDone = func() {
					once.Do(func() { close(crashDone) })
					<-crashDone
				}
			)
			t.Run("stall", func(t *testing.T) {
				res, err := driver.Run(context.Background(), db, meta, o, faultStart(func() error { return freeze(t, inst) }))
				faultDone()
				if crashErr != nil {
					t.Fatal(crashErr)
				}
				if err != nil {
					t.Fatalf("Run through a stall: %v", err)
				}
				t.Logf("stall: window from %s; stalls %+v; outages %+v; notes %q", res.Window.Start, res.Stalls, res.Outages, res.FaultNotes())
				if res.Partial || len(res.Outages) > 0 {
					t.Errorf("partial %v, outages %+v: a frozen server drops no connection, the run rides through", res.Partial, res.Outages)
				}
				if len(res.Stalls) == 0 {
					t.Fatalf("no stall recorded for a server frozen %s", stallFor)
				}
				// Every virtual user had a transaction in flight through
				// the stall (unpaced users run back to back), so the
				// longest response time spans it at least (less the
				// latency histogram's 0.1%% precision).
				var longest, maxLatency float64
				for _, st := range res.Stalls {
					longest = max(longest, st.Seconds)
				}
				for _, k := range res.Kinds {
					maxLatency = max(maxLatency, float64(k.LatencyMicros.Max)/1e6)
				}
				if maxLatency < longest*0.999 {
					t.Errorf("max latency %.3f s, shorter than the %.3f s stall every virtual user waited through", maxLatency, longest)
				}
				// A stall of half the window is far beyond the 10% a
				// run's stalls may cover: its server failed.
				if !res.ServerFailed() || !strings.Contains(res.ServerFailureText(), "no transaction completed") {
					t.Errorf("server failure %q after a %s stall in a %s window: want the stall named", res.ServerFailure, stallFor, o.Duration)
				}
				checkConsistency(t, db)
			})
			if e == instance.Postgres {
				t.Run("backend killed", func(t *testing.T) {
					once, crashDone = sync.Once{}, make(chan struct{})
					res, err := driver.Run(context.Background(), db, meta, o, faultStart(func() error { return killBackend(tg) }))
					faultDone()
					if crashErr != nil {
						t.Fatal(crashErr)
					}
					if err != nil {
						t.Fatalf("Run through a killed backend: %v", err)
					}
					res.CheckCounters(0)
					t.Logf("backend killed: TPM %.0f from %s; outages %+v; suspect %q", res.TPM, res.TPMSource, res.Outages, res.Suspect)
					if len(res.Outages) == 0 {
						t.Errorf("no outage recorded: the postmaster ends every session when a backend crashes")
					}
					// On a busy host the crash recovery can outlast the window:
					// the end counters are then unreadable and the restart
					// cannot be seen, but the figures must still be the
					// driver's own, labelled.
					ongoing := len(res.Outages) > 0 && res.Outages[len(res.Outages)-1].Ongoing
					if !(res.ServerRestarted || ongoing) || res.CountsFallback == "" || res.TPM != res.DriverTPM || res.NOPM != res.DriverNOPM {
						t.Errorf("restart seen %v, fallback %q, TPM %v (driver %v), NOPM %v (driver %v): want the reset seen and the driver's own counts, labelled",
							res.ServerRestarted, res.CountsFallback, res.TPM, res.DriverTPM, res.NOPM, res.DriverNOPM)
					}
					if res.IsSuspect() || res.TPM < 0 || res.NOPM < 0 {
						t.Errorf("suspect %q, TPM %v, NOPM %v: want a labelled fallback, never negative", res.Suspect, res.TPM, res.NOPM)
					}
					// The crash recovery may outlast the window (above): the
					// checks wait for the server to accept connections again.
					waitAccepting(t, db)
					checkConsistency(t, db)
				})
			}

			t.Run("silent connection", func(t *testing.T) {
				proxy := newSilentProxy(t, tg.URL.Host)
				pdb := openVia(t, tg, proxy.Addr())
				so := o
				so.AnswerTimeout = time.Second
				// Silent for silentFor, then forwarding again: the calls
				// in flight get no answer, the sessions are taken for
				// dead, reopened once the path is back, and the run goes on.
				once, crashDone = sync.Once{}, make(chan struct{})
				res, err := driver.Run(context.Background(), pdb, meta, so, faultStart(func() error {
					proxy.hold()
					time.Sleep(silentFor)
					proxy.resume()
					return nil
				}))
				faultDone()
				if err != nil {
					t.Fatalf("Run through a silent connection: %v", err)
				}
				t.Logf("silent connection: outages %+v; notes %q", res.Outages, res.FaultNotes())
				if res.Partial {
					t.Errorf("Partial: want the window measured to its end")
				}
				if len(res.Outages) == 0 || res.Outages[0].Silent == 0 || res.Outages[0].Ongoing {
					t.Errorf("outages %+v: want one, over, with connections taken for dead after the answer timeout", res.Outages)
				}
				checkConsistency(t, db)

				// Silent for good: the run ends once the virtual users gave
				// up reconnecting, keeping what it measured.
				so.ReconnectFor = 2 * time.Second
				so.Duration = time.Minute
				once, crashDone = sync.Once{}, make(chan struct{})
				res, err = driver.Run(context.Background(), pdb, meta, so, faultStart(func() error {
					proxy.hold()
					return nil
				}))
				faultDone()
				if !errors.Is(err, driver.ErrServerGone) {
					t.Fatalf("Run with the connection silent for good: got %v, want ErrServerGone", err)
				}
				t.Logf("silent for good: outages %+v; fallback %q", res.Outages, res.CountsFallback)
				if res == nil || !res.Partial {
					t.Fatalf("result %+v: want what was measured, marked partial", res)
				}
				if n := len(res.Outages); n == 0 || !res.Outages[n-1].Ongoing || res.Outages[n-1].Silent == 0 {
					t.Errorf("outages %+v: want the last one ongoing, its connections silent", res.Outages)
				}
				if res.TPM < 0 || res.NOPM < 0 || res.CountsFallback == "" {
					t.Errorf("TPM %v, NOPM %v, fallback %q: want the driver's own counts, labelled", res.TPM, res.NOPM, res.CountsFallback)
				}
				checkConsistency(t, db)
			})

			once, crashDone = sync.Once{}, make(chan struct{})
			res, err := driver.Run(context.Background(), db, meta, o, faultStart(func() error { return dbtest.CrashRestart(inst) }))
			faultDone()
			if crashErr != nil {
				t.Fatal(crashErr)
			}
			if err != nil {
				t.Fatalf("Run through a crash restart: %v", err)
			}
			res.CheckCounters(0)
			t.Logf("crash restart: TPM %.0f from %s; NOPM %.0f; outages %+v; warnings %q",
				res.TPM, res.TPMSource, res.NOPM, res.Outages, res.Warnings)
			if res.Partial {
				t.Errorf("Partial: want the window measured to its end")
			}
			if len(res.Outages) == 0 {
				t.Fatalf("no outage recorded")
			}
			out := res.Outages[0]
			if out.VUs == 0 || out.UnknownOutcome+out.Failed == 0 {
				t.Errorf("outage %+v: want the lost connections and their transactions counted", out)
			}
			if res.TPM < 0 || res.NOPM < 0 || res.DBTransactions < 0 || res.DBNewOrders < 0 {
				t.Errorf("TPM %v, NOPM %v, deltas %d and %d: want none negative", res.TPM, res.NOPM, res.DBTransactions, res.DBNewOrders)
			}
			if res.CountsFallback == "" || res.TPM != res.DriverTPM || res.NOPM != res.DriverNOPM {
				t.Errorf("counts fallback %q, TPM %v (driver %v), NOPM %v (driver %v): want the driver's own counts, labelled",
					res.CountsFallback, res.TPM, res.DriverTPM, res.NOPM, res.DriverNOPM)
			}
			if restarted.Before(res.Window.End) && !res.ServerRestarted {
				t.Errorf("the server was back before the window ended, but its restart went unnoticed")
			}
			if res.IsSuspect() {
				t.Errorf("suspect %q: a restart that was seen is a labelled fallback, not a suspect run", res.Suspect)
			}
			checkConsistency(t, db)

			// Gone for good: the server stops and never comes back.
			o.ReconnectFor = 2 * time.Second
			o.Duration = time.Minute
			once, crashDone = sync.Once{}, make(chan struct{})
			res, err = driver.Run(context.Background(), db, meta, o, faultStart(func() error {
				return inst.Stop(context.Background())
			}))
			faultDone()
			if crashErr != nil {
				t.Fatal(crashErr)
			}
			if !errors.Is(err, driver.ErrServerGone) {
				t.Fatalf("Run with the server gone: got %v, want ErrServerGone", err)
			}
			if res == nil || !res.Partial {
				t.Fatalf("result %+v: want what was measured, marked partial", res)
			}
			if n := len(res.Outages); n == 0 || !res.Outages[n-1].Ongoing {
				t.Errorf("outages %+v: want the last one ongoing", res.Outages)
			}
			if !res.ServerFailed() || !strings.Contains(res.ServerFailureText(), "down when the measured window ended") {
				t.Errorf("server failure %q with the server gone: want the open outage named", res.ServerFailure)
			}
			if res.TPM < 0 || res.NOPM < 0 || res.CountsFallback == "" {
				t.Errorf("TPM %v, NOPM %v, fallback %q: want the driver's own counts, labelled", res.TPM, res.NOPM, res.CountsFallback)
			}
		})
	}
}

// stallFor is how long TestServerFaults freezes the server: above
// driver.StallThreshold with room for the stall's edges (the last
// completions before the freeze and the first after it).
const stallFor = 3 * time.Second

// freeze stops the private server for stallFor and resumes it; the
// server is resumed when the test ends too, whatever happened.
func freeze(t *testing.T, inst *instance.Instance) error {
	resume, err := dbtest.Freeze(inst)
	if err != nil {
		return err
	}
	t.Cleanup(func() { _ = resume() })
	t.Logf("server frozen at %s", time.Now())
	time.Sleep(stallFor)
	t.Logf("server resumed at %s", time.Now())
	return resume()
}

// silentFor is how long the silent-connection fault holds the path: above
// the 1 s answer timeout the test sets, with room for the watchdog's
// quarter-second checks.
const silentFor = 3 * time.Second

// openVia opens the target's database through addr (the silent proxy),
// with a 2 s connect timeout: a connection attempt through a silent path
// gives up then.
func openVia(t *testing.T, tg dialect.Target, addr string) dialect.Database {
	t.Helper()
	u, err := url.Parse(dbtest.RawURL(tg))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	ptg, err := dialect.ParseTarget(u.String(), "")
	if err != nil {
		t.Fatalf("parse the target through the proxy: %v", err)
	}
	db, err := dialect.Open(context.Background(), ptg)
	if err != nil {
		t.Fatalf("open through the proxy: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// killBackend kills (SIGKILL) one PostgreSQL backend serving the target's
// database, as a crash of that one process would.
func killBackend(tg dialect.Target) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbtest.RawURL(tg))
	if err != nil {
		return fmt.Errorf("connect to find a backend: %w", err)
	}
	defer conn.Close(ctx)
	var pid int
	if err := conn.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
		ORDER BY pid LIMIT 1`).Scan(&pid); err != nil {
		return fmt.Errorf("find a backend to kill: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill backend %d: %w", pid, err)
	}
	return nil
}

// waitAccepting waits, up to a minute, until db accepts a connection (a
// server in crash recovery refuses them).
func waitAccepting(t *testing.T, db dialect.Database) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := db.Connect(context.Background())
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server accepts no connection a minute after the fault: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
