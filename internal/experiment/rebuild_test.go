package experiment

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestRebuildAndCPUSteps: a managed (embedded) SQLite target and a URL
// one, built, rebuilt, calibrated and then profiled. The managed target is
// rebuilt cold then warm and reopened after its restart (the profile
// after it runs); the URL target warm only. Each step stores a run of its
// kind tied to the experiment, and the report has a section for each.
func TestRebuildAndCPUSteps(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	p := decodeIn(t, dir, `name: rb
warehouses: 1
build: {workers: 1}
rebuild: {repeat: 1}
cpu: {repeat: 2, server_iterations: 2000, client_iterations: 100000}
profile: {vus: [1], rampup: 200ms, duration: 1s, grace: 1s}
targets:
  - {name: managed, engine: sqlite, data_dir: `+filepath.Join(dir, "managed")+`}
  - {name: url, url: "sqlite:url.db"}
steps: [build, rebuild, cpu, profile]
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	st := openStore(t, dir)
	var events []string
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true, Observer: Observer{Unit: func(e UnitEvent) {
		if e.State != store.StepRunning {
			events = append(events, e.Unit.TargetName()+" "+e.Unit.Step.Kind.Name+" "+string(e.State)+" "+e.Outcome.Headline)
		}
	}}}
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v (events %q)", err, events)
	}
	if len(events) != 8 {
		t.Fatalf("events: got %q, want 8 finished steps", events)
	}
	for i, want := range [][2]string{{"managed rebuild done ", ": cold "}, {"managed cpu done server", ""}, {"url rebuild done ", ": warm "},
		{"url cpu done server", ""}} {
		e := events[[]int{1, 2, 5, 6}[i]]
		if !strings.HasPrefix(e, want[0]) || !strings.Contains(e, want[1]) {
			t.Errorf("event %q, want it to start with %q and say %q", e, want[0], want[1])
		}
	}
	for kind, want := range map[store.Kind]int{store.KindRebuild: 2, store.KindCPU: 2, store.KindRun: 2} {
		runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: kind, Counting: true})
		if err != nil || len(runs) != want {
			t.Errorf("%s runs of the experiment: got %d (%v), want %d", kind, len(runs), err, want)
		}
		for _, r := range runs {
			if r.Status != store.StatusOK || r.ExperimentSeq == 0 {
				t.Errorf("%s run %d: status %s, seq %d; want ok, tied to its step", kind, r.ID, r.Status, r.ExperimentSeq)
			}
		}
	}

	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	x := in.Experiment
	if x == nil || len(x.Sections) != 4 {
		t.Fatalf("report: got %+v, want 4 sections", x)
	}
	rb, cpu := x.Sections[1], x.Sections[2]
	// The managed target: a cold and a warm row; the URL target: warm.
	if len(rb.Tables) != 1 || len(rb.Tables[0].Rows) != 3 {
		t.Fatalf("rebuild section: got %+v, want one table of 3 rows", rb)
	}
	var caches []string
	for _, row := range rb.Tables[0].Rows {
		caches = append(caches, row[0]+" "+row[4])
	}
	if got := strings.Join(caches, ", "); got != "managed cold, managed warm, url warm" {
		t.Errorf("rebuild rows: got %q", got)
	}
	if !strings.Contains(rb.Note, "url: cold cache is not possible") {
		t.Errorf("rebuild section note %q: want the URL target's warm-only note", rb.Note)
	}
	// Each target: the server's loop and the client's.
	if len(cpu.Tables) != 1 || len(cpu.Tables[0].Rows) != 4 {
		t.Fatalf("cpu section: got %+v, want one table of 4 rows", cpu)
	}
	// Rounds per CPU second: of the managed instance's server loop (its
	// engine is embedded: oltplab's process time), not of the URL's.
	perCPU := len(cpu.Tables[0].Header) - 2
	for i, want := range []bool{true, true, false, true} {
		row := cpu.Tables[0].Rows[i]
		if got := row[perCPU] != "—"; got != want {
			t.Errorf("cpu row %q: rounds per CPU s %q; want one: %v", strings.Join(row[:2], " "), row[perCPU], want)
		}
	}
}
