package cli

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/scenario"
)

// otherClient drives the workload on tg from its own connections, as
// another process would, until stop is called; it returns once that
// client commits New-Orders.
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
	working, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
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

// TestSuspectRun: another client writing to the same database during a
// run made its NOPM from the database 37% higher than the driver's own
// count, silently, stored as ok with exit 0. Now the run says SUSPECT,
// exits 16, is stored as suspect, listed as such, and the report shows it
// apart and leaves it out of the peak.
func TestSuspectRun(t *testing.T) {
	tg := dbtest.Postgres(t)
	target := dbtest.RawURL(tg)
	env := storeEnv(t)
	if r := oltplab(t, env, "build", "--target", target, "--warehouses", "1"); r.code != 0 {
		t.Fatalf("build: exit %d", r.code)
	}
	stop := otherClient(t, tg)
	// 5 s: long enough for the transactions the cross-check needs to
	// conclude (driver.MinCheckedTransactions).
	r := oltplabChecked(t, env, "run", "--target", target, "--vus", "1", "--rampup", "0s", "--duration", "5s", "--label", "busy")
	stop()
	if r.code != exitSuspect {
		t.Errorf("run beside another client: exit %d, want %d", r.code, exitSuspect)
	}
	if !strings.Contains(r.out, "SUSPECT: NOPM from the database") {
		t.Errorf("run output does not flag the result suspect")
	}
	if !strings.Contains(r.err, "suspect") {
		t.Errorf("stderr does not say why the exit code is %d: %q", exitSuspect, r.err)
	}
	l := oltplab(t, env, "results", "list", "--kind", "run")
	if !strings.Contains(l.out, " suspect ") || !strings.Contains(l.out, "is suspect: NOPM from the database") {
		t.Errorf("results list does not show the run as suspect")
	}
	md := oltplab(t, env, "report", "busy", "--format", "md")
	if md.code != 0 || !strings.Contains(md.out, "## Suspect runs") {
		t.Errorf("report: exit %d, no suspect runs table", md.code)
	}
	if !strings.Contains(md.out, "no measured steps") {
		t.Errorf("report: the suspect run still makes a verdict")
	}
	inc := oltplab(t, env, "report", "busy", "--format", "md", "--include-suspect")
	if inc.code != 0 || !strings.Contains(inc.out, "one step only") {
		t.Errorf("report --include-suspect: exit %d, the suspect run is not counted", inc.code)
	}
}

// TestAgreementLine: the line of the driver's own counts says whether the
// database's figures agree, or that too few transactions left the
// cross-check inconclusive; a suspect run's reasons are shown elsewhere.
func TestAgreementLine(t *testing.T) {
	check := &driver.CrossCheck{NewOrders: driver.CounterCheck{DiffPct: 1.25},
		Transactions: &driver.CounterCheck{DiffPct: -0.5}}
	inconclusive := *check
	inconclusive.Inconclusive = "the driver counted 600 transactions"
	for _, c := range []struct {
		name string
		r    driver.Result
		want string
	}{
		{"agree", driver.Result{Check: check}, " (agree: new orders +1.2%, transactions -0.5%)"},
		{"inconclusive", driver.Result{Check: &inconclusive}, " (cross-check inconclusive under 1,000 transactions: new orders +1.2%, transactions -0.5%)"},
		{"suspect", driver.Result{Check: check, Suspect: []string{"NOPM from the database is +37% off"}}, ""},
		{"not checked", driver.Result{}, ""},
	} {
		if got := agreement(&c.r); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
