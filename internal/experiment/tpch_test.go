package experiment

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/testenv"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/tpch"
)

// TestTPCHStep: a plan of tpch steps alone needs no warehouses; on a
// managed (embedded) SQLite target and a URL one, the step builds TPC-H
// at its scale, then runs the power test; a second step at the same scale
// reuses the build and runs the performance test (power, then throughput
// with two streams). Every run is tied to the experiment, and the report's
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
steps: [tpch, {tpch: {test: both, streams: 2}}]
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
	performance := 0
	for _, e := range events {
		switch {
		case strings.Contains(e, " done TPROC-H SF 0.01 performance test: Power@Size ") && strings.Contains(e, "QphH@Size"):
			performance++
		case !strings.Contains(e, " done TPROC-H SF 0.01 power test: Power@Size "):
			t.Errorf("event %q, want a done power or performance test with its figures", e)
		}
	}
	if performance != 2 {
		t.Errorf("events %q: want the second step's performance test on both targets", events)
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

	in, err := Report(ctx, st, id, report.Include{})
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
	// The power test's bars: each query's interval per target, the
	// second target's ratio over its bars; no throughput test, no
	// stream chart.
	if len(sec.Bars) != 1 {
		t.Fatalf("tpch section: %d bar charts, want 1 (the power test's)", len(sec.Bars))
	}
	bc := sec.Bars[0]
	if len(bc.Categories) != 22 || bc.Categories[14] != "Q15" || len(bc.Series) != 2 || bc.Series[0].Label != "managed" {
		t.Fatalf("power bars: categories %q, series %d; want Q1..Q22 and one series per target, the baseline first", bc.Categories, len(bc.Series))
	}
	for q := range 22 {
		for _, s := range bc.Series {
			if s.Values[q] == nil || *s.Values[q] < 0.1 {
				t.Errorf("power bars: %s Q%d is %v, want its interval (at least 0.1 s)", s.Label, q+1, s.Values[q])
			}
		}
		if r := bc.Series[1].Texts[q]; !strings.HasPrefix(r, "×") || r != sec.Tables[1].Rows[q][3] {
			t.Errorf("power bars: url Q%d is labelled %q, want the table's ratio %q", q+1, r, sec.Tables[1].Rows[q][3])
		}
	}
	if bc.Series[0].Lo != nil || bc.Series[0].Texts != nil {
		t.Errorf("power bars: the baseline has whiskers or ratios on one repeat, want neither")
	}
	// The second step's throughput test: one chart per stream, every
	// query of both targets timed.
	if b := x.Sections[1].Bars; len(b) != 3 || !strings.HasPrefix(b[1].Title, "Throughput test, stream 1:") || !strings.HasPrefix(b[2].Title, "Throughput test, stream 2:") {
		t.Errorf("performance test's bars: %d charts, want the power test's and one per stream", len(b))
	} else {
		for _, s := range b[2].Series {
			if slices.Contains(s.Values, nil) {
				t.Errorf("stream 2 bars: %s lacks a query's interval: %v", s.Label, s.Values)
			}
		}
	}
	var html bytes.Buffer
	if err := report.HTML(&html, in); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TPROC-H figures at SF 0.01", "not an audited TPC-H result", "Power test: each query", `<section id="tpch" class="part">`,
		`id="step-1-chart-bars-1" data-bars="2"`} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
}

// TestTPCHQueryBars: with repeats, each query's bar is the mean of its
// intervals with the least and largest as the whisker, and a target
// other than the first is labelled with its ratio to the first's; a
// query without an interval (cut off) has no bar and no ratio, and a
// target without the stream has no bar at all.
func TestTPCHQueryBars(t *testing.T) {
	var a, b [tpch.Queries][]float64
	for q := range tpch.Queries {
		a[q] = []float64{1, 3}
		b[q] = []float64{4, 4, 4}
	}
	b[5] = nil // Q6 cut off on every repeat
	of := []*[tpch.Queries][]float64{&a, &b, nil}
	c := tpchQueryBars("t", "n", []string{"a", "b", "c"}, func(i int) *[tpch.Queries][]float64 { return of[i] })
	if c.Title != "t (s)" || len(c.Categories) != tpch.Queries || len(c.Series) != 3 {
		t.Fatalf("chart %q: %d categories, %d series; want 22 and 3", c.Title, len(c.Categories), len(c.Series))
	}
	sa, sb, sc := c.Series[0], c.Series[1], c.Series[2]
	if *sa.Values[0] != 2 || *sa.Lo[0] != 1 || *sa.Hi[0] != 3 || sa.Texts != nil {
		t.Errorf("a Q1: %v (%v–%v) texts %q; want 2 (1–3), no ratio", *sa.Values[0], *sa.Lo[0], *sa.Hi[0], sa.Texts)
	}
	if *sb.Values[0] != 4 || sb.Texts[0] != "×2.00" || *sb.Lo[0] != 4 {
		t.Errorf("b Q1: %v labelled %q; want 4, ×2.00", *sb.Values[0], sb.Texts[0])
	}
	if sb.Values[5] != nil || sb.Texts[5] != "" {
		t.Errorf("b Q6: %v labelled %q; want no bar, no ratio", sb.Values[5], sb.Texts[5])
	}
	if sc.Lo != nil || slices.ContainsFunc(sc.Values, func(p *float64) bool { return p != nil }) {
		t.Errorf("c: values %v, whiskers %v; want none", sc.Values, sc.Lo)
	}
}
