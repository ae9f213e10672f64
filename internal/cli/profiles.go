package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// loadProfile reads one profile and its runs from the store and turns it
// into the report model: per step, the repeats, their statistics and the
// latency percentiles of the exactly merged histograms of the repeats.
func loadProfile(ctx context.Context, st *store.Store, ref string) (report.Profile, error) {
	p, err := st.ProfileByLabelOrID(ctx, ref)
	if err != nil {
		return report.Profile{}, usageErrorf("profile %q: %v", ref, err)
	}
	return profileFromStore(ctx, st, p)
}

func profileFromStore(ctx context.Context, st *store.Store, p store.Profile) (report.Profile, error) {
	runs, err := st.ListRuns(ctx, store.RunFilter{Kind: store.KindRun, ProfileID: p.ID})
	if err != nil {
		return report.Profile{}, withCode(exitStore, fmt.Errorf("read the runs of profile %d: %w", p.ID, err))
	}
	out := report.Profile{ID: p.ID, Label: p.Label, Context: flatten(p.Context)}
	if params := flatten(p.Params); true {
		out.Target = params["target"]
		out.Dialect = params["dialect"]
		// Profiles stored before modes were typed hold the label in "mode".
		out.Mode = params["mode_label"]
		if out.Mode == "" {
			out.Mode = params["mode"]
		}
		for k, v := range params {
			out.Context["param."+k] = v
		}
	}
	type stepRuns struct {
		vus      int
		step     int
		repeats  []report.Repeat
		ids      []int64
		monitors []*scenario.MonitorSummary
	}
	bySteps := map[int]*stepRuns{}
	for _, r := range runs {
		if len(r.Summary) == 0 {
			continue // failed before measuring anything
		}
		var res driver.Result
		sum := scenario.RunSummary{Result: &res}
		if err := json.Unmarshal(r.Summary, &sum); err != nil {
			return report.Profile{}, withCode(exitStore, fmt.Errorf("decode run %d: %w", r.ID, err))
		}
		s := bySteps[r.Step]
		if s == nil {
			s = &stepRuns{vus: r.VUs, step: r.Step}
			bySteps[r.Step] = s
		}
		s.repeats = append(s.repeats, report.Repeat{RunID: r.ID, NOPM: res.NOPM, TPM: res.TPM,
			Partial: res.Partial || r.Status != store.StatusOK})
		s.ids = append(s.ids, r.ID)
		if !res.Partial && r.Status == store.StatusOK {
			s.monitors = append(s.monitors, sum.Monitor)
		}
	}
	steps := make([]*stepRuns, 0, len(bySteps))
	for _, s := range bySteps {
		steps = append(steps, s)
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].step < steps[j].step })
	for _, s := range steps {
		sort.Slice(s.repeats, func(i, j int) bool { return s.repeats[i].RunID < s.repeats[j].RunID })
		hs, err := st.MergeHistograms(ctx, s.ids...)
		if err != nil {
			return report.Profile{}, withCode(exitStore, fmt.Errorf("merge latency histograms of profile %d: %w", p.ID, err))
		}
		lat := map[string]report.LatencyFigures{}
		for kind, h := range hs {
			if h.TotalCount() > 0 {
				lat[kind] = report.LatencyFigures{
					P95Millis: float64(h.ValueAtQuantile(95)) / 1000,
					P99Millis: float64(h.ValueAtQuantile(99)) / 1000,
				}
			}
		}
		step := report.NewStep(s.vus, s.repeats, lat)
		step.Host = hostFigures(s.monitors)
		out.Steps = append(out.Steps, step)
	}
	out.Verdict = profile.Analyze(out.StepFigures("new_order"), profile.DefaultKneeThreshold)
	// The per-second series of the peak step's first complete repeat.
	for i, s := range steps {
		st0 := out.Steps[i]
		if st0.VUs != out.Verdict.PeakVUs || st0.Host == nil {
			continue
		}
		for _, r := range s.repeats {
			if r.Partial {
				continue
			}
			series, err := stepSeries(ctx, st, r.RunID, st0.VUs, st0.Host.DataDevice)
			if err != nil {
				return report.Profile{}, err
			}
			out.Series = series
			break
		}
		break
	}
	return out, nil
}

// loadProfiles loads every reference, for compare, report and export.
func loadProfiles(ctx context.Context, st *store.Store, refs []string) ([]report.Profile, error) {
	if len(refs) == 0 {
		return nil, usageErrorf("name at least one profile (a --label or a profile id; see `oltplab results list`)")
	}
	var ps []report.Profile
	for _, ref := range refs {
		p, err := loadProfile(ctx, st, ref)
		if err != nil {
			return nil, err
		}
		if len(p.Steps) == 0 {
			return nil, usageErrorf("profile %q has no measured run", ref)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// printProfileSummary prints the statistics of a profile that just ran.
func (a *app) printProfileSummary(ctx context.Context, st *store.Store, id int64) error {
	p, err := st.GetProfile(ctx, id)
	if err != nil {
		return withCode(exitStore, fmt.Errorf("read profile %d: %w", id, err))
	}
	rp, err := profileFromStore(ctx, st, p)
	if err != nil {
		return err
	}
	printProfileTable(a.out(), rp)
	return nil
}
