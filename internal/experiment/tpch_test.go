package experiment

import (
	"bytes"
	"context"
	"github.com/oltplab/oltplab/internal/testenv"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
)

// TestTPCHStep: a plan of tpch steps alone needs no warehouses; on a
// managed (embedded) SQLite target and a URL one, the step builds TPC-H
// at its scale, then runs the power test; a second step at the same scale
// reuses the build. Every run is tied to the experiment, and the report's
// section compares the figures and each query's interval with the
// baseline's, and renders.
func TestTPCHStep(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	if _, err := plan.Decode(filepath.Join(dir, "x.yaml"), []byte("name: x\nsteps: [build]\ntargets: [{name: a, url: \"sqlite:a.db\"}]\n")); err == nil ||
		!strings.Contains(err.Error(), "warehouses") {
		t.Errorf("a plan with a build step and no warehouses: %v, want warehouses required", err)
	}
	p := decodeIn(t, dir, `name: h
tpch: {scale: 0.01, test: power, workers: 1}
targets:
  - {name: managed, engine: sqlite, data_dir: `+filepath.Join(dir, "managed")+`}
  - {name: url, url: "sqlite:url.db"}
steps: [tpch, {tpch: {repeat: 1}}]
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	st := openStore(t, dir)
	var events []string
	r := &Runner{Store: st, ToolVersion: "test", Observer: Observer{Unit: func(e UnitEvent) {
		if e.State != store.StepRunning {
			events = append(events, e.Unit.TargetName()+" "+string(e.State)+" "+e.Outcome.Headline)
		}
	}}}
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v (events %q)", err, events)
	}
	if len(events) != 4 {
		t.Fatalf("events: got %q, want 4 finished steps", events)
	}
	for _, e := range events {
		if !strings.Contains(e, " done TPROC-H SF 0.01 power test: Power@Size ") {
			t.Errorf("event %q, want a done power test with its figure", e)
		}
	}
	for kind, want := range map[store.Kind]int{store.KindTPCHBuild: 2, store.KindTPCH: 4} {
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

	in, err := Report(ctx, st, id, false)
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	x := in.Experiment
	if x == nil || len(x.Sections) != 2 {
		t.Fatalf("report: got %+v, want 2 sections", x)
	}
	sec := x.Sections[0]
	if len(sec.Tables) != 2 || len(sec.Tables[0].Rows) != 2 || len(sec.Tables[1].Rows) != 22 {
		t.Fatalf("tpch section: got %+v, want a figures table of 2 rows and a query table of 22", sec)
	}
	fig := sec.Tables[0]
	if fig.Rows[0][3] != "×1.00" || !strings.HasPrefix(fig.Rows[1][3], "×") || fig.Rows[1][2] == "—" {
		t.Errorf("figures: %q; want Power@Size with a ratio to the baseline", fig.Rows)
	}
	if q := sec.Tables[1]; len(q.Header) != 4 || q.Header[3] != "ratio" || !strings.HasPrefix(q.Rows[0][3], "×") {
		t.Errorf("query table: header %q, first row %q; want each target's interval and the ratio", q.Header, q.Rows[0])
	}
	var html bytes.Buffer
	if err := report.HTML(&html, in); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TPROC-H figures at SF 0.01", "not an audited TPC-H result", "Power test: each query"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
}
