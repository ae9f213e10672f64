package cli

import (
	"context"
	"database/sql"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// TestServerKilledMidWindow: a server killed (SIGKILL) inside the
// measured window and never started again, with the virtual users still
// reconnecting when the window ends (--reconnect-for longer than the
// window), is a run whose server failed: stored with status failed and
// the open outage named, left out of the profile's peak, and `run` exits
// 24. Before the rule such a run was stored ok, with a peak, and exited 0.
//
// The kill is placed by what the server did (new orders committed since
// the run began, so inside the window: the run has no ramp-up), never by
// a clock; nothing asserts how long anything took.
func TestServerKilledMidWindow(t *testing.T) {
	inst, tg := dbtest.PrivateServer(t, instance.MariaDB)
	env := storeEnv(t)
	raw := dbtest.RawURL(tg)
	if r := oltplab(t, env, "build", "--target", raw, "--warehouses", "1"); r.code != exitOK {
		t.Fatalf("build: exit %d", r.code)
	}
	// A connection of the test's own to see the run's new orders.
	u := *tg.URL
	pw := tg.Password.Reveal()
	dsn := u.User.Username() + ":" + pw + "@tcp(" + u.Host + ")" + u.Path
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	orders := func() (int64, error) {
		var n int64
		err := db.QueryRow("SELECT SUM(d_next_o_id) FROM district").Scan(&n)
		return n, err
	}
	before, err := orders()
	if err != nil {
		t.Fatal(err)
	}

	killed := make(chan error, 1)
	go func() {
		for {
			n, err := orders()
			if err != nil {
				killed <- err
				return
			}
			if n >= before+20 {
				killed <- syscall.Kill(inst.PID(), syscall.SIGKILL)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	r := oltplab(t, env, "run", "--target", raw, "--vus", "2", "--rampup", "0s", "--duration", "15s", "--reconnect-for", "5m")
	if err := <-killed; err != nil {
		t.Fatalf("kill the server mid-window: %v", err)
	}
	if r.code != exitServerDied {
		t.Errorf("run with its server killed mid-window: exit %d, want %d", r.code, exitServerDied)
	}
	if !strings.Contains(r.out, "FAILED: the server was down when the measured window ended") {
		t.Errorf("run output: want the open outage named as the failure")
	}
	if !strings.Contains(r.err, "the server failed during run") {
		t.Errorf("stderr %q: want the server's failure", r.err)
	}

	st, err := store.Open(context.Background(), strings.TrimPrefix(env[0], "OLTPLAB_RESULTS="))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.ListRuns(context.Background(), store.RunFilter{Kind: store.KindRun})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %d (%v), want 1", len(runs), err)
	}
	if runs[0].Status != store.StatusFailed {
		t.Errorf("stored status %s, want %s", runs[0].Status, store.StatusFailed)
	}
	s, err := summary.DecodeRun(runs[0].Summary)
	if err != nil || !s.ServerFailed() {
		t.Errorf("stored result: server failure %v (%v), want it said", s.ServerFailure, err)
	}
	if l := oltplab(t, env, "results", "list"); !strings.Contains(l.out, "its server failed: the server was down") {
		t.Errorf("results list: want the failed run's reason")
	}
	// The profile has no peak: its one run does not count.
	p, err := st.GetProfile(context.Background(), runs[0].ProfileID)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := results.Profile(context.Background(), st, p, report.Include{Suspect: true, Contaminated: true})
	if err != nil {
		t.Fatal(err)
	}
	if rp.Verdict.PeakVUs != 0 {
		t.Errorf("profile verdict %+v: a peak from a run whose server failed", rp.Verdict)
	}
}
