package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// checkWindows checks the stored synchronised windows of an experiment
// against the targets' own runs: every target's window is the one its
// run measured, none opened before the planned start or closed before
// the planned end, the skew is the spread of those windows and is marked
// exactly when above the tolerance, and the totals are the sum of the
// targets' figures. It returns the windows.
func checkWindows(t *testing.T, st *store.Store, id int64, seq, targets int) []summary.ParallelWindow {
	t.Helper()
	ctx := context.Background()
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindParallel, Counting: true})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := decodeWindows(runs, seq)
	if err != nil || len(ws) == 0 {
		t.Fatalf("synchronised windows of step %d: got %d (%v), want some", seq, len(ws), err)
	}
	for _, w := range ws {
		if targets > 0 && len(w.Targets) != targets || len(w.Targets) == 0 || w.Released.IsZero() || !w.PlannedEnd.After(w.PlannedStart) {
			t.Fatalf("window %d: %d targets, released %v, planned [%v, %v]", w.Repeat, len(w.Targets), w.Released, w.PlannedStart, w.PlannedEnd)
		}
		var starts, ends []time.Time
		var nopm, tpm float64
		for _, tg := range w.Targets {
			r, err := st.GetRun(ctx, tg.RunID)
			if err != nil {
				t.Fatalf("window %d target %s: run %d: %v", w.Repeat, tg.Name, tg.RunID, err)
			}
			var sum summary.Run
			if err := json.Unmarshal(r.Summary, &sum); err != nil || sum.Result == nil {
				t.Fatalf("run %d summary: %v", r.ID, err)
			}
			if !sum.Window.Start.Equal(tg.Start) || !sum.Window.End.Equal(tg.End) || sum.NOPM != tg.NOPM || sum.TPM != tg.TPM {
				t.Errorf("window %d target %s: recorded [%v, %v] NOPM %v, its run measured [%v, %v] NOPM %v",
					w.Repeat, tg.Name, tg.Start, tg.End, tg.NOPM, sum.Window.Start, sum.Window.End, sum.NOPM)
			}
			if tg.Start.Before(w.PlannedStart) || tg.End.Before(w.PlannedEnd) || tg.StartOffsetMillis < 0 {
				t.Errorf("window %d target %s: [%v, %v] opens or closes before the planned [%v, %v]",
					w.Repeat, tg.Name, tg.Start, tg.End, w.PlannedStart, w.PlannedEnd)
			}
			if tg.NOPM <= 0 || tg.Status != store.StatusOK {
				t.Errorf("window %d target %s: NOPM %v, status %s", w.Repeat, tg.Name, tg.NOPM, tg.Status)
			}
			if !strings.HasSuffix(r.Label, "/"+tg.Name) || r.ExperimentSeq != seq {
				t.Errorf("target run %d: label %q, seq %d; want the target's name and the step's seq", r.ID, r.Label, r.ExperimentSeq)
			}
			starts, ends = append(starts, tg.Start), append(ends, tg.End)
			nopm, tpm = nopm+tg.NOPM, tpm+tg.TPM
		}
		skew := math.Max(spread(starts), spread(ends))
		if math.Abs(w.MaxSkewMillis-skew) > 1e-3 { // stored times have no monotonic reading
			t.Errorf("window %d: skew %v ms, its targets' windows are %v ms apart", w.Repeat, w.MaxSkewMillis, skew)
		}
		if w.SkewExceeded != (w.MaxSkewMillis > w.SkewToleranceMillis) {
			t.Errorf("window %d: skew %v ms against tolerance %v ms marked %v", w.Repeat, w.MaxSkewMillis, w.SkewToleranceMillis, w.SkewExceeded)
		}
		if math.Abs(w.TotalNOPM-nopm) > 1e-6 || math.Abs(w.TotalTPM-tpm) > 1e-6 {
			t.Errorf("window %d: totals %v/%v, the targets add up to %v/%v", w.Repeat, w.TotalNOPM, w.TotalTPM, nopm, tpm)
		}
		t.Logf("window %d: skew %.1f ms (tolerance %.0f), total NOPM %.0f", w.Repeat, w.MaxSkewMillis, w.SkewToleranceMillis, w.TotalNOPM)
	}
	return ws
}

func spread(ts []time.Time) float64 {
	lo, hi := ts[0], ts[0]
	for _, t := range ts {
		if t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	return float64(hi.Sub(lo)) / float64(time.Millisecond)
}

// TestParallelSQLite: two embedded targets driven at once over two
// synchronised windows; the windows, each target's run and the totals
// are stored under the experiment, and the report's section has its
// tables and its chart.
func TestParallelSQLite(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	p := decodeIn(t, dir, `name: par
warehouses: 1
build: {workers: 1}
parallel: {vus: 1, rampup: 300ms, duration: 2s, grace: 1s, repeat: 2, skew_tolerance: 250ms}
targets:
  - {name: a, url: "sqlite:a.db"}
  - {name: b, url: "sqlite:b.db"}
steps: [build, parallel]
`)
	st := openStore(t, dir)
	var units []string
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true, Observer: Observer{Unit: func(e UnitEvent) {
		if e.State == store.StepDone {
			units = append(units, e.Unit.Step.Kind.Name+":"+e.Unit.TargetName())
		}
	}}}
	id, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := strings.Join(units, " "), "build:a build:b parallel:"; got != want {
		t.Errorf("units: got %s, want %s", got, want)
	}
	ws := checkWindows(t, st, id, 3, 2)
	if len(ws) != 2 {
		t.Fatalf("windows: got %d, want 2", len(ws))
	}
	steps, _ := st.ExperimentSteps(context.Background(), id)
	var oc Outcome
	_ = json.Unmarshal(steps[2].Outcome, &oc)
	if len(oc.RunIDs) != 6 || !strings.Contains(oc.Headline, "total NOPM") {
		t.Errorf("outcome: got %+v, want 2 windows' and 4 targets' runs and a headline", oc)
	}

	in, err := Report(context.Background(), st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	sec := in.Experiment.Sections[1]
	if len(sec.Tables) != 3 || len(sec.Tables[0].Rows) != 3 || sec.Tables[0].Rows[2][0] != "total" || len(sec.Tables[2].Rows) != 4 {
		t.Fatalf("parallel section: got %+v, want the targets with a total, the windows and the alignment", sec.Tables)
	}
	if sec.Tables[0].Rows[0][3] != "too few runs" {
		t.Errorf("two windows give no confidence interval: got %v, want \"too few runs\"", sec.Tables[0].Rows[0])
	}
	if len(sec.Charts) != 1 || len(sec.Charts[0].Series) != 3 || len(sec.Charts[0].X) < 2 {
		t.Errorf("parallel chart: got %+v, want the total and both targets second by second", sec.Charts)
	}
	if tc := in.Experiment.Targets; tc[0].Context["database.settings.file"] == tc[1].Context["database.settings.file"] {
		t.Errorf("targets' contexts, from their runs in the parallel step, do not tell the files apart: %v", tc[0].Context)
	}
	var html bytes.Buffer
	if err := report.HTML(&html, in); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	if !strings.Contains(html.String(), "step-2-chart-time-1") {
		t.Errorf("the HTML report lacks the parallel step's chart")
	}
}
