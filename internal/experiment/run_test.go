package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

func decodeIn(t *testing.T, dir, src string) *plan.Plan {
	t.Helper()
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(path, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestRunAndReport: two SQLite targets built and profiled; the report has
// the build's table and both profiles, the baseline (the second target)
// first, and the targets' differing context.
func TestRunAndReport(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	p := decodeIn(t, dir, `name: two
warehouses: 1
build: {workers: 1}
profile: {vus: [1], rampup: 200ms, duration: 1s, grace: 1s}
baseline: second
targets:
  - {name: first, url: "sqlite:first.db"}
  - {name: second, url: "sqlite:sub/second.db"}
steps: [build, profile]
`)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := plan.Validate(context.Background(), p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	st := openStore(t, dir)
	var events []string
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true, Observer: Observer{Unit: func(e UnitEvent) {
		events = append(events, e.Unit.TargetName()+" "+e.Unit.Step.Kind.Name+" "+string(e.State))
	}}}
	id, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := "first build running|first build done|first profile running|first profile done|" +
		"second build running|second build done|second profile running|second profile done"
	if got := strings.Join(events, "|"); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	e, err := st.GetExperiment(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != store.StatusOK || strings.Contains(e.Plan, "REDACTED") || e.PlanSHA256 != p.SHA256 {
		t.Errorf("experiment: got status %s, sha %s; want ok with the plan's digest", e.Status, e.PlanSHA256)
	}
	in, err := Report(context.Background(), st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	x := in.Experiment
	if x == nil || len(x.Sections) != 2 || len(x.Schedule) != 4 {
		t.Fatalf("report: got %+v, want 2 sections and 4 scheduled steps", x)
	}
	if x.Targets[0].Name != "second" {
		t.Errorf("report targets start with %s, want the baseline second", x.Targets[0].Name)
	}
	if b := x.Sections[0]; len(b.Tables) != 1 || len(b.Tables[0].Rows) != 2 || b.Tables[0].Rows[0][0] != "second" {
		t.Errorf("build section: got %+v, want one table with a row per target, the baseline first", b)
	}
	prof := x.Sections[1]
	if len(prof.Profiles) != 2 || prof.Profiles[0].Label != "second" || prof.Profiles[1].Label != "first" {
		t.Fatalf("profile section: got %d profiles, want second then first", len(prof.Profiles))
	}
	for _, rp := range prof.Profiles {
		if len(rp.Steps) != 1 || rp.Steps[0].NOPM.N != 1 || rp.Steps[0].NOPM.Mean <= 0 {
			t.Errorf("profile %s: got %+v, want one measured step", rp.Label, rp.Steps)
		}
	}
	if x.Targets[0].Context["database.settings.file"] == x.Targets[1].Context["database.settings.file"] {
		t.Errorf("target contexts do not tell the two files apart: %v", x.Targets[0].Context)
	}
	for k := range x.Targets[0].Context {
		if strings.HasPrefix(k, "experiment.") || strings.HasPrefix(k, "tool.") {
			t.Errorf("target context keeps %s, which always differs", k)
		}
	}
	// Every run and profile is tied to the experiment and its (target, step).
	runs, err := st.ListRuns(context.Background(), store.RunFilter{ExperimentID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Errorf("runs of the experiment: got %d, want 2 builds and 2 runs", len(runs))
	}
	if err := r.Resume(context.Background(), id, nil); !errors.Is(err, ErrFinished) {
		t.Errorf("resume a finished experiment: got %v, want ErrFinished", err)
	}
}

// TestBuildInterruptedThenResumed: a build interrupted while loading is
// resumed by dropping what it left and building again; the interrupted
// experiment is stored as partial with its build step interrupted.
func TestBuildInterruptedThenResumed(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	p := decodeIn(t, dir, `name: b
warehouses: 1
build: {workers: 1}
targets: [{name: f, url: "sqlite:f.db"}]
steps: [build]
`)
	st := openStore(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true, Observer: Observer{Scenario: scenario.Observer{
		BuildProgress: func(pr load.Progress) {
			if pr.Phase == load.PhaseLoad && pr.Rows > 0 {
				cancel()
			}
		}}}}
	id, err := r.Run(ctx, p)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: got %v, want context.Canceled", err)
	}
	e, _ := st.GetExperiment(context.Background(), id)
	steps, _ := st.ExperimentSteps(context.Background(), id)
	if e.Status != store.StatusPartial || steps[0].State != store.StepInterrupted || !strings.Contains(string(steps[0].Progress), `"changed":true`) {
		t.Fatalf("after the interruption: experiment %s, step %+v; want partial, interrupted, with progress saved", e.Status, steps[0])
	}
	// The same process may resume: it no longer runs the experiment.
	if err := st.ClaimExperiment(context.Background(), id, e.Owner, "host=elsewhere-gone boot=x pid=1 start=0"); err != nil {
		t.Fatal(err)
	}
	r.Observer = Observer{}
	if err := r.Resume(context.Background(), id, nil); err == nil || !strings.Contains(err.Error(), "elsewhere-gone") {
		t.Fatalf("resume of an experiment owned on another host: got %v, want it refused", err)
	}
	if err := st.ClaimExperiment(context.Background(), id, "host=elsewhere-gone boot=x pid=1 start=0", ""); err != nil {
		t.Fatal(err)
	}
	if err := r.Resume(context.Background(), id, nil); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	steps, _ = st.ExperimentSteps(context.Background(), id)
	if steps[0].State != store.StepDone || steps[0].Attempts != 2 {
		t.Errorf("build step: got %+v, want done on its second attempt", steps[0])
	}
	builds, _ := st.ListRuns(context.Background(), store.RunFilter{ExperimentID: id, Kind: store.KindBuild, Status: store.StatusOK})
	if len(builds) != 1 {
		t.Errorf("complete builds: got %d, want 1", len(builds))
	}
}
