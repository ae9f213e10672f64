package driver_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/instance"
)

// TestServerFaults is the fault suite's server faults, on a private server
// of each engine that the test starts and kills itself:
//
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
			)
			res, err := driver.Run(context.Background(), db, meta, o, faultStart(func() error { return dbtest.CrashRestart(inst) }))
			<-crashDone
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
			<-crashDone
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
			if res.TPM < 0 || res.NOPM < 0 || res.CountsFallback == "" {
				t.Errorf("TPM %v, NOPM %v, fallback %q: want the driver's own counts, labelled", res.TPM, res.NOPM, res.CountsFallback)
			}
		})
	}
}
