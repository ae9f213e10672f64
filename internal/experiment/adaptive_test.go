package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/oltplab/oltplab/internal/report"

	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// TestAdaptiveProfileStep: repeat: auto measures each step until the
// stopping rule ends it and stores which ended it with the profile; the
// target after the baseline bounds its ratio to the baseline's. An
// interrupted auto step resumes with its runs so far. The decisions
// depend on measured figures, so the test checks that each agrees with
// the runs stored, not which one was taken.
func TestAdaptiveProfileStep(t *testing.T) {
	dir := t.TempDir()
	p := decodeIn(t, dir, `name: auto
warehouses: 1
build: {workers: 1}
profile: {vus: [1], rampup: 0s, duration: 1s, grace: 0s, repeat: auto, precision: 30%, max_repeats: 4}
baseline: a
targets:
  - {name: a, url: "sqlite:a.db"}
  - {name: b, url: "sqlite:b.db"}
steps: [build, profile]
`)
	st := openStore(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupt b's profile after its second run.
	bRuns := 0
	r := &Runner{Store: st, ToolVersion: "test", Observer: Observer{Scenario: scenario.Observer{
		RunStored: func(rs scenario.RunStored) {
			if rs.Result != nil && rs.StorePath != "" && isProfileOf(t, st, rs.ProfileID, "auto/b") {
				if bRuns++; bRuns == 2 {
					cancel()
				}
			}
		}}}}
	id, err := r.Run(ctx, p)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: got %v, want it interrupted", err)
	}
	interrupted := stopsOf(t, st, id, "b")
	if len(interrupted.Stops) != 1 || interrupted.Stops[0].Reason != profile.StopInterrupted || interrupted.Stops[0].Runs != 2 {
		t.Fatalf("b after the interruption: %+v, want its step interrupted after 2 runs", interrupted)
	}
	e, _ := st.GetExperiment(context.Background(), id)
	if err := st.ClaimExperiment(context.Background(), id, e.Owner, ""); err != nil {
		t.Fatal(err)
	}
	r.Observer = Observer{}
	if err := r.Resume(context.Background(), id, nil); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	for _, target := range []string{"a", "b"} {
		s := stopsOf(t, st, id, target)
		if len(s.Stops) != 1 {
			t.Fatalf("%s: stops %+v, want one for its one step", target, s.Stops)
		}
		stop := s.Stops[0]
		if stop.Runs < 3 || stop.Runs > 4 || stop.Users != 1 {
			t.Errorf("%s: %+v, want 3 to 4 runs of 1 user", target, stop)
		}
		wantOf := "mean NOPM"
		if target == "b" {
			wantOf = "NOPM ratio to a"
		}
		if stop.Of != wantOf || s.Rule.Precision != 0.3 || s.Rule.Min != 3 || s.Rule.Max != 4 {
			t.Errorf("%s: rule %+v, stop of %q; want precision 30%%, 3 to 4 runs, of %q", target, s.Rule, stop.Of, wantOf)
		}
		// The decision agrees with the runs stored.
		nopm := countedNOPM(t, st, id, target)
		hw := profile.Summarize(nopm).HalfWidth()
		if target == "b" {
			hw = profile.Ratio(profile.Summarize(nopm), profile.Summarize(countedNOPM(t, st, id, "a"))).HalfWidth()
		}
		switch stop.Reason {
		case profile.StopPrecision:
			if hw > 0.3 || len(nopm) < 3 {
				t.Errorf("%s: stopped on precision with ±%.1f%% over %d runs", target, 100*hw, len(nopm))
			}
		case profile.StopBudget:
			if stop.Runs != 4 {
				t.Errorf("%s: budget ended after %d runs, want 4", target, stop.Runs)
			}
		default:
			t.Errorf("%s: stopped %q, want precision or budget", target, stop.Reason)
		}
	}
	// b kept the complete runs of its first attempt (a run with too many
	// failed transactions is measured again, as in any resumed profile).
	runs, err := st.ListRuns(context.Background(), store.RunFilter{ExperimentID: id, Kind: store.KindRun})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		if run.Superseded != "" && (run.Status == store.StatusOK || run.Status == store.StatusSuspect) {
			t.Errorf("run %d (%s) superseded (%s): the resumed step should keep its complete runs", run.ID, run.Status, run.Superseded)
		}
	}
	steps, _ := st.ExperimentSteps(context.Background(), id)
	var oc Outcome
	_ = json.Unmarshal(steps[3].Outcome, &oc)
	if steps[3].Attempts != 2 || oc.Headline == "" {
		t.Errorf("b's profile step: %+v, want done on its second attempt with a headline", steps[3])
	}
}

func isProfileOf(t *testing.T, st *store.Store, id int64, label string) bool {
	t.Helper()
	p, err := st.GetProfile(context.Background(), id)
	return err == nil && p.Label == label
}

// stopsOf reads how the profile of target's profile step stopped.
func stopsOf(t *testing.T, st *store.Store, id int64, target string) profile.Stopping {
	t.Helper()
	ps, err := st.ListProfiles(context.Background(), store.ProfileFilter{ExperimentID: id, Label: "auto/" + target})
	if err != nil || len(ps) != 1 {
		t.Fatalf("profiles of %s: %v, %v", target, ps, err)
	}
	var params struct {
		Stopping *profile.Stopping `json:"stopping"`
	}
	if err := json.Unmarshal(ps[0].Params, &params); err != nil || params.Stopping == nil {
		t.Fatalf("profile of %s: params %s, want a stopping record", target, ps[0].Params)
	}
	return *params.Stopping
}

func countedNOPM(t *testing.T, st *store.Store, id int64, target string) []float64 {
	t.Helper()
	ps, _ := st.ListProfiles(context.Background(), store.ProfileFilter{ExperimentID: id, Label: "auto/" + target})
	rp, err := results.Profile(context.Background(), st, ps[0], report.Include{})
	if err != nil || len(rp.Steps) != 1 {
		t.Fatalf("profile of %s: %+v, %v", target, rp.Steps, err)
	}
	return rp.Steps[0].CountedNOPM()
}
