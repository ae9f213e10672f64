package experiment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestCheckStep: a check step after a build passes and stores the TPC-C
// check; after the database is broken (a warehouse's W_YTD no longer the
// sum of its districts', condition 3.3.2.1), the same step fails, with
// ErrCheckFailed, the step recorded failed and the report naming the
// condition.
func TestCheckStep(t *testing.T) {
	testenv.Require(t, testenv.Long)
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	var states []string
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true, Observer: Observer{Unit: func(e UnitEvent) {
		states = append(states, e.Unit.Step.Kind.Name+" "+string(e.State))
	}}}

	p := decodeIn(t, dir, "name: checked\nwarehouses: 1\nbuild: {workers: 1}\ntargets: [{name: db, url: \"sqlite:db.sqlite\"}]\nsteps: [build, check]\n")
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := strings.Join(states, "|"); got != "build running|build done|check running|check done" {
		t.Errorf("states: got %s", got)
	}
	checks, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindCheck})
	if err != nil || len(checks) != 1 {
		t.Fatalf("check runs: got %d (%v), want 1", len(checks), err)
	}
	sec := checkSection(t, st, id)
	if len(sec.Rows) != 1 || sec.Rows[0][1] != "TPC-C" || !strings.Contains(sec.Rows[0][2], "conditions pass") || sec.Rows[0][3] != "—" {
		t.Errorf("report after a build: got %v, want one TPC-C row that passes", sec.Rows)
	}

	// Break condition 3.3.2.1 (W_YTD = sum(D_YTD)).
	db, err := sql.Open("sqlite", filepath.Join(dir, "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	states = nil
	p = decodeIn(t, dir, "name: broken\ntargets: [{name: db, url: \"sqlite:db.sqlite\"}]\nsteps: [check]\n")
	id, err = r.Run(ctx, p)
	if !errors.Is(err, ErrCheckFailed) || !strings.Contains(err.Error(), "3.3.2.1") {
		t.Fatalf("Run on a broken database: got %v, want ErrCheckFailed naming 3.3.2.1", err)
	}
	if got := strings.Join(states, "|"); got != "check running|check failed" {
		t.Errorf("states: got %s", got)
	}
	e, err := st.GetExperiment(ctx, id)
	if err != nil || e.Status != store.StatusFailed {
		t.Errorf("experiment: got status %s (%v), want failed", e.Status, err)
	}
	sec = checkSection(t, st, id)
	if len(sec.Rows) != 1 || !strings.Contains(sec.Rows[0][2], "FAIL") || !strings.Contains(sec.Rows[0][3], "3.3.2.1") {
		t.Errorf("report of a failed check: got %v, want the failed condition 3.3.2.1", sec.Rows)
	}
}

// TestCheckStepNeedsASchema: a check of a database with neither schema
// fails and says what to run first.
func TestCheckStepNeedsASchema(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	p := decodeIn(t, dir, "name: empty\ntargets: [{name: db, url: \"sqlite:empty.sqlite\"}]\nsteps: [check]\n")
	_, err := (&Runner{Store: st, ToolVersion: "test"}).Run(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "a check step follows a build or tpch step") {
		t.Errorf("got %v, want an error saying what to run first", err)
	}
}

func checkSection(t *testing.T, st *store.Store, id int64) report.Table {
	t.Helper()
	in, err := Report(context.Background(), st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	for _, s := range in.Experiment.Sections {
		if s.Kind == "check" && len(s.Tables) == 1 {
			return s.Tables[0]
		}
	}
	t.Fatalf("no check section in %+v", in.Experiment.Sections)
	return report.Table{}
}

// TestCheckStepOnManagedInstance: a plan's managed PostgreSQL, on the port
// its target asks for, is started for the check step as for any other
// step: the check is stored against that port and passes, and no server
// is left running.
func TestCheckStepOnManagedInstance(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	ctx := context.Background()
	dir := reachableDir(t)
	st := openStore(t, t.TempDir())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	p := decodeIn(t, t.TempDir(), fmt.Sprintf(`name: managed-check
warehouses: 1
build: {workers: 2}
targets:
  - name: pg
    engine: postgres
    data_dir: %s
    port: %d
    memory: 32MB
    settings: {fsync: "off", full_page_writes: "off", synchronous_commit: "off"}
steps: [build, check]
`, filepath.Join(dir, "pg"), port))
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	id, err := (&Runner{Store: st, ToolVersion: "test", NoCrossCheck: true}).Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checks, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindCheck})
	if err != nil || len(checks) != 1 {
		t.Fatalf("check runs: got %d (%v), want 1", len(checks), err)
	}
	if want := fmt.Sprintf("127.0.0.1:%d", port); !strings.Contains(checks[0].Target, want) {
		t.Errorf("check's target %s, want the port the plan asked for (%s)", checks[0].Target, want)
	}
	if !strings.Contains(string(checks[0].Summary), `"passed":true`) {
		t.Errorf("check: got %s, want passed", checks[0].Summary)
	}
	if pids := serversUsing(t, dir); len(pids) > 0 {
		t.Errorf("processes still use the instance's directory: %v", pids)
	}
}

// TestCheckStepTPCH: on a TPC-H database the check step runs TPC-H's
// checks (and not TPC-C's, absent there): they pass after the tpch step,
// and fail, failing the step, once a NATION row is gone (clause 4.2.5:
// 25 rows).
func TestCheckStepTPCH(t *testing.T) {
	testenv.Require(t, testenv.Long)
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true}
	p := decodeIn(t, dir, "name: h\ntpch: {scale: 0.01, test: power, workers: 1}\ntargets: [{name: db, url: \"sqlite:h.sqlite\"}]\nsteps: [tpch, check]\n")
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for kind, want := range map[store.Kind]int{store.KindTPCHCheck: 1, store.KindCheck: 0} {
		runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: kind})
		if err != nil || len(runs) != want {
			t.Errorf("%s runs: got %d (%v), want %d", kind, len(runs), err, want)
		}
	}
	sec := checkSection(t, st, id)
	if len(sec.Rows) != 1 || sec.Rows[0][1] != "TPC-H" || !strings.Contains(sec.Rows[0][2], "checks pass") {
		t.Errorf("report: got %v, want one TPC-H row that passes", sec.Rows)
	}

	db, err := sql.Open("sqlite", filepath.Join(dir, "h.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DELETE FROM nation WHERE n_nationkey = 0"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = r.Run(ctx, decodeIn(t, dir, "name: h2\ntargets: [{name: db, url: \"sqlite:h.sqlite\"}]\nsteps: [check]\n"))
	if !errors.Is(err, ErrCheckFailed) || !strings.Contains(err.Error(), "TPC-H") {
		t.Errorf("check after a NATION row went: got %v, want ErrCheckFailed naming TPC-H", err)
	}
}
