package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// LoadProfile reads the profile a user named (a label or an id) and turns
// it into the report model (see Profile). A name no profile has gives a
// *RefError.
func LoadProfile(ctx context.Context, st *store.Store, ref string, inc report.Include) (report.Profile, error) {
	p, err := st.ProfileByLabelOrID(ctx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return report.Profile{}, &RefError{What: "profile", Ref: ref, Err: err}
	}
	if err != nil {
		return report.Profile{}, storeErr(fmt.Sprintf("profile %q", ref), err)
	}
	return Profile(ctx, st, p, inc)
}

// Profile reads one profile's counting runs (superseded runs are left
// out) and turns them into the report model: per step, the repeats, their
// statistics and the latency percentiles of the exactly merged histograms
// of the repeats, the host figures, the verdict and the per-second series
// of the peak step. Suspect and contaminated runs are shown but left out
// of the statistics, peaks and verdicts unless inc counts them; runs
// whose server failed (status failed) are shown, never counted.
func Profile(ctx context.Context, st *store.Store, p store.Profile, inc report.Include) (report.Profile, error) {
	runs, err := st.ListRuns(ctx, store.RunFilter{Kind: store.KindRun, ProfileID: p.ID, Counting: true})
	if err != nil {
		return report.Profile{}, storeErr(fmt.Sprintf("read the runs of profile %d", p.ID), err)
	}
	out := report.Profile{ID: p.ID, Label: p.Label, Context: Flatten(p.Context)}
	if params := Flatten(p.Params); true {
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
	var adaptive struct {
		Stopping *profile.Stopping `json:"stopping"`
	}
	if json.Unmarshal(p.Params, &adaptive) == nil {
		out.Stopping = adaptive.Stopping
	}
	type stepRuns struct {
		vus      int
		step     int
		repeats  []report.Repeat
		ids      []int64
		monitors []*summary.Monitor
		cpu      []*summary.Monitor // every run's that measured a window
	}
	bySteps := map[int]*stepRuns{}
	for _, r := range runs {
		if len(r.Summary) == 0 {
			continue // failed before measuring anything
		}
		sum, err := summary.DecodeRun(r.Summary)
		if err != nil {
			return report.Profile{}, storeErr(fmt.Sprintf("decode run %d", r.ID), err)
		}
		res := sum.Result
		s := bySteps[r.Step]
		if s == nil {
			s = &stepRuns{vus: r.VUs, step: r.Step}
			bySteps[r.Step] = s
		}
		suspect := r.Status == store.StatusSuspect
		failures := r.Status == store.StatusFailures
		contaminated := r.Status == store.StatusContaminated
		faults := res.FaultNotes()
		if res.TooManyFailures != "" {
			faults = append(faults, res.TooManyFailures)
		}
		faults = append(faults, res.ServerFailure...)
		s.repeats = append(s.repeats, report.Repeat{RunID: r.ID, NOPM: res.NOPM, TPM: res.TPM,
			Partial: res.Partial || (r.Status != store.StatusOK && !suspect && !failures && !contaminated), Failures: failures && !res.Partial,
			Suspect: suspect, Reasons: res.Suspect, Contaminated: contaminated, Interference: res.Contaminated,
			ServerFailed: res.ServerFailed(), TPCC: tpccVerdict(res.Spec), Faults: faults})
		s.ids = append(s.ids, r.ID)
		if !res.Partial && (r.Status == store.StatusOK || suspect && inc.Suspect || contaminated && inc.Contaminated) {
			s.monitors = append(s.monitors, sum.Monitor)
		}
		if sum.Monitor != nil && res.Window.Seconds > 0 {
			s.cpu = append(s.cpu, sum.Monitor)
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
			return report.Profile{}, storeErr(fmt.Sprintf("merge latency histograms of profile %d", p.ID), err)
		}
		lat := map[string]report.LatencyFigures{}
		for kind, h := range hs {
			if h.TotalCount() > 0 {
				lat[kind] = report.LatencyFigures{
					P90Millis: float64(h.ValueAtQuantile(90)) / 1000,
					P95Millis: float64(h.ValueAtQuantile(95)) / 1000,
					P99Millis: float64(h.ValueAtQuantile(99)) / 1000,
				}
			}
		}
		step := report.NewStepWith(s.vus, s.repeats, lat, inc)
		step.Host = hostFigures(s.monitors)
		step.CPU = cpuShares(s.cpu)
		out.Steps = append(out.Steps, step)
	}
	out.Verdict = profile.Analyze(out.StepFigures("new_order"), profile.DefaultKneeThreshold)
	if w := leftOut(out.Steps, inc); w != "" {
		out.Verdict.Reason += "; " + w
	}
	// The per-second series of the peak step's first complete repeat.
	if out.Series, err = SeriesAt(ctx, st, out, out.Verdict.PeakVUs, inc); err != nil {
		return report.Profile{}, err
	}
	return out, nil
}

// SeriesAt reads the per-second series of the first complete repeat of
// p's step of vus virtual users (nil when the step is missing or was not
// sampled): an experiment's report overlays the same step of every target.
func SeriesAt(ctx context.Context, st *store.Store, p report.Profile, vus int, inc report.Include) (*report.StepSeries, error) {
	for _, s := range p.Steps {
		if s.VUs != vus || s.Host == nil {
			continue
		}
		for _, r := range s.Repeats {
			if r.Partial || r.Suspect && !inc.Suspect || r.Contaminated && !inc.Contaminated {
				continue
			}
			return stepSeries(ctx, st, r.RunID, s.VUs, s.Host.DataDevice, seriesSource(s.Host))
		}
		return nil, nil
	}
	return nil, nil
}

// LoadProfiles loads every reference, for compare, report and export.
// Naming none, or a profile without a measured run, gives a *RefError.
func LoadProfiles(ctx context.Context, st *store.Store, refs []string, inc report.Include) ([]report.Profile, error) {
	if len(refs) == 0 {
		return nil, &RefError{What: "profile", Err: errors.New("name at least one profile (a --label or a profile id; see `oltplab results list`)")}
	}
	var ps []report.Profile
	for _, ref := range refs {
		p, err := LoadProfile(ctx, st, ref, inc)
		if err != nil {
			return nil, err
		}
		if len(p.Steps) == 0 {
			return nil, &RefError{What: "profile", Ref: ref, Err: errors.New("has no measured run")}
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// tpccVerdict is the report's form of a tpc-c run's verdict; nil for a
// run of another mode.
func tpccVerdict(s *driver.Spec) *report.TPCC {
	if s == nil {
		return nil
	}
	out := &report.TPCC{Terminals: s.Terminals, NewOrdersPerMinute: s.NewOrdersPerMinute,
		MaxNewOrdersPerMinute: s.MaxNewOrdersPerMinute, EfficiencyPct: s.EfficiencyPct, TpmC: s.TpmC}
	for _, c := range s.Checks {
		out.Checks = append(out.Checks, report.TPCCCheck{Name: c.Name, Clause: c.Clause, Value: c.Value,
			Limit: c.Limit, Unit: c.Unit, Pass: c.Pass})
	}
	return out
}

// leftOut says how many runs of steps a verdict did not count because
// they were contaminated (unless inc counts them) or their server failed;
// "" when none.
func leftOut(steps []report.Step, inc report.Include) string {
	dirty, failed := 0, 0
	for _, s := range steps {
		for _, r := range s.Repeats {
			switch {
			case r.ServerFailed:
				failed++
			case r.Contaminated && !inc.Contaminated:
				dirty++
			}
		}
	}
	var parts []string
	if dirty > 0 {
		parts = append(parts, fmt.Sprintf("%d contaminated run(s) left out (--include-contaminated counts them)", dirty))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d run(s) whose server failed left out", failed))
	}
	return strings.Join(parts, ", ")
}
