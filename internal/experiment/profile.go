package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

func init() {
	plan.Register(plan.Kind{Name: "profile", Scope: plan.PerTarget,
		Summary: "a virtual-user sweep with repeats, as `oltplab run` (options: vus, rampup, duration, grace, repeat (a number or auto), precision, min_repeats, max_repeats, interleave, aa_check, reset_between, checkpoint_before, client_sql, all_warehouses, max_retries, reconnect_for, max_failure_rate, max_stall, max_foreign_cpu, max_steal, retries, remeasure, seed, driver: {host: H})",
		New: func() plan.Step {
			return &profileStep{Load: plan.DefaultLoad(), Repeat: plan.Repeat{N: 1}, Adaptive: plan.DefaultAdaptive()}
		}})
}

// What the profile kind is, checked by the compiler.
var (
	_ Step                = (*profileStep)(nil)
	_ Reporter            = (*profileStep)(nil)
	_ plan.ConnectionUser = (*profileStep)(nil)
)

var (
	_ Step                = (*profileStep)(nil)
	_ Reporter            = (*profileStep)(nil)
	_ plan.ConnectionUser = (*profileStep)(nil)
)

// profileStep is `oltplab run` on one target: the same scenario code
// (scenario.Env.Profile), one stored profile per target.
//
//	profile:
//	  vus: [1, 2, 4]          # or "fib:13", "pow2:8", "1,2,4"
//	  rampup: 10s
//	  duration: 30s
//	  repeat: 2               # or auto, with precision, min_repeats, max_repeats
//	  interleave: true        # or targets: alternate the runs between the targets, analysed in pairs
//	  aa_check: true          # with interleave: targets, the baseline measured again at the end
//	  checkpoint_before: true
//	  reset_between: false
//	  retries: 1              # a run whose server failed: restart, measure again
//	  remeasure: 1            # contaminated runs: measure again, this many times
type profileStep struct {
	VUs VUs `yaml:"vus"`
	// Load: ramp-up, duration, grace and the driver's other options.
	plan.Load `yaml:",inline"`
	Repeat    plan.Repeat `yaml:"repeat"`
	// Adaptive: the stopping rule of repeat: auto.
	plan.Adaptive    `yaml:",inline"`
	Interleave       Interleave `yaml:"interleave"`
	ResetBetween     bool       `yaml:"reset_between"`
	CheckpointBefore bool       `yaml:"checkpoint_before"`
	// AACheck measures the baseline once more at every step at the end
	// of a paired comparison (interleave: targets): the A/A check.
	AACheck bool `yaml:"aa_check"`
	// Driver places the step's driver on one of the plan's hosts (an
	// agent's machine: a load generator there); none: the plan's.
	Driver *plan.DriverPlace `yaml:"driver,omitempty"`
	// Retries is how many times a run whose server failed under it is
	// measured again, the managed server restarted first (default 1 on a
	// managed instance; a server given by URL is not restarted by oltplab,
	// so 0 there). Remeasure is how many times the contaminated runs of
	// the profile are measured again, all of them each time (default
	// DefaultRemeasure).
	Retries   *int `yaml:"retries,omitempty"`
	Remeasure *int `yaml:"remeasure,omitempty"`

	experiment string // the plan's name, for labels
	baseline   string // the plan's baseline target
}

// Interleave is how a profile step orders its runs: false, every step's
// repeats back to back; true, the whole sweep once per repeat,
// alternating direction; targets, moreover alternating between the
// targets, run by run, for a paired comparison (see paired.go).
type Interleave struct {
	Sweep   bool // the whole sweep once per repeat
	Targets bool // alternate between the targets (implies Sweep)
}

// UnmarshalText reads true, false or targets.
func (i *Interleave) UnmarshalText(b []byte) error {
	switch strings.ToLower(strings.TrimSpace(string(b))) {
	case "true", "yes", "on":
		*i = Interleave{Sweep: true}
	case "false", "no", "off", "":
		*i = Interleave{}
	case "targets":
		*i = Interleave{Sweep: true, Targets: true}
	default:
		return fmt.Errorf("want true, false or targets, got %q", string(b))
	}
	return nil
}

// MarshalText writes the option as UnmarshalText reads it.
func (i Interleave) MarshalText() ([]byte, error) {
	switch {
	case i.Targets:
		return []byte("targets"), nil
	case i.Sweep:
		return []byte("true"), nil
	}
	return []byte("false"), nil
}

// Scope is the step's scope: over all targets at once when its runs
// alternate between them (plan.Scoper).
func (s *profileStep) Scope() plan.Scope {
	if s.Interleave.Targets {
		return plan.OverTargets
	}
	return plan.PerTarget
}

// VUs is a virtual-user sequence: a list of counts, one count, or a
// sequence as `oltplab run --vus` takes it (fib:89, pow2:128,
// geo:256:1024:1.41, "1,2,4").
type VUs struct {
	Steps []int
	Spec  string // as written
}

// MarshalText writes the sequence as it was given.
func (v VUs) MarshalText() ([]byte, error) { return []byte(v.Spec), nil }

// DecodeNode reads a list of counts or a sequence string.
func (v *VUs) DecodeNode(d *yamldoc.Decoder, n *yaml.Node, path string) error {
	var spec string
	switch {
	case n.Kind == yaml.SequenceNode:
		var parts []string
		for i, c := range n.Content {
			var x int
			if err := d.Decode(c, &x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
			parts = append(parts, strconv.Itoa(x))
		}
		spec = strings.Join(parts, ",")
	case n.Kind == yaml.ScalarNode && !yamldoc.IsNull(n):
		spec = n.Value
	default:
		return d.Errorf(n, path, "want a list of virtual-user counts or a sequence such as fib:13, got %s", yamldoc.Describe(n))
	}
	steps, err := profile.ParseVUs(spec)
	if err != nil {
		return d.Errorf(n, path, "%v", err)
	}
	v.Steps, v.Spec = steps, spec
	return nil
}

// profileProgress is what a profile step saves as soon as its profile
// exists: a resumed attempt continues that profile with the same seeds.
type profileProgress struct {
	ProfileID int64  `json:"profile_id"`
	Seed      uint64 `json:"seed"`
}

func (s *profileStep) Prepare(p *plan.Plan) error {
	if len(s.VUs.Steps) == 0 {
		return fmt.Errorf("vus is required (e.g. vus: [1, 2, 4] or vus: fib:13)")
	}
	if !s.Repeat.Auto && s.Repeat.N < 1 {
		return fmt.Errorf("repeat must be at least 1 or auto, got %d", s.Repeat.N)
	}
	if err := s.Adaptive.Validate(s.Repeat); err != nil {
		return err
	}
	if err := profile.CheckSlots(len(s.VUs.Steps), s.runs()); err != nil {
		return err
	}
	if err := s.Load.Validate(s.VUs.Steps[0]); err != nil {
		return err
	}
	if s.AACheck && !s.Interleave.Targets {
		return fmt.Errorf("aa_check goes with interleave: targets (the baseline measured again after a paired comparison)")
	}
	if s.Interleave.Targets && len(p.Targets) < 2 {
		return fmt.Errorf("interleave: targets needs at least two targets to alternate between, the plan has %d", len(p.Targets))
	}
	for _, n := range []struct {
		name string
		v    *int
	}{{"retries", s.Retries}, {"remeasure", s.Remeasure}} {
		if n.v != nil && (*n.v < 0 || *n.v > maxRetries) {
			return fmt.Errorf("%s must be from 0 to %d, got %d", n.name, maxRetries, *n.v)
		}
	}
	s.experiment, s.baseline = p.Name, p.Baseline
	return nil
}

// runs is the most runs of each step: the repeat, or auto's budget.
func (s *profileStep) runs() int { return s.Adaptive.Runs(s.Repeat) }

func (s *profileStep) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "profile %s VUs", s.VUs.Spec)
	switch {
	case s.Repeat.Auto:
		fmt.Fprintf(&b, " × auto repeats (%d to %d runs, until the 95%% interval is within %s)", s.MinRepeats, s.MaxRepeats, s.Precision)
	case s.Repeat.N > 1:
		fmt.Fprintf(&b, " × %d repeats", s.Repeat.N)
	}
	switch {
	case s.Interleave.Targets:
		b.WriteString(" alternating between the targets (paired)")
		if s.AACheck {
			b.WriteString(", A/A check at the end")
		}
	case s.runs() > 1 && s.Interleave.Sweep:
		b.WriteString(" (interleaved)")
	}
	fmt.Fprintf(&b, ", ramp-up %s, %s measured", s.Rampup, s.Duration)
	if s.CheckpointBefore {
		b.WriteString(", checkpoint before each")
	}
	if s.ResetBetween {
		b.WriteString(", reset between")
	}
	if h := s.DriverHost(); h != "" {
		fmt.Fprintf(&b, ", driver on %s", h)
	}
	return b.String()
}

func (s *profileStep) Connections(*plan.Plan) int {
	m := 0
	for _, v := range s.VUs.Steps {
		m = max(m, v)
	}
	return m + 1 // the virtual users and the connection that reads NOPM
}

// hygieneSeconds is a rough allowance for a checkpoint or reset per run.
const hygieneSeconds = 5

func (s *profileStep) Estimate(p *plan.Plan, t *plan.TargetSpec) time.Duration {
	per := s.Rampup + s.Duration + time.Second // sessions, counters, storing
	if s.CheckpointBefore {
		per += hygieneSeconds * time.Second
	}
	if s.ResetBetween {
		per += hygieneSeconds * time.Second
	}
	runs := len(s.VUs.Steps) * s.runs() // auto: its budget, the most it can take
	if s.Interleave.Targets {
		runs *= len(p.Targets)
		if s.AACheck {
			runs += len(s.VUs.Steps)
		}
	}
	return time.Duration(runs) * per
}

func (s *profileStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	if s.Interleave.Targets {
		return s.runPaired(ctx, x)
	}
	var prev profileProgress
	if len(x.Progress) > 0 {
		if err := json.Unmarshal(x.Progress, &prev); err != nil {
			return Outcome{}, fmt.Errorf("read the progress of the interrupted profile: %w", err)
		}
	}
	d := s.Load.Driver()
	switch {
	case prev.ProfileID != 0:
		d.Seed = prev.Seed // the continued profile keeps its seeds
	case d.Seed == 0:
		d.Seed = drawSeed()
	}
	o := scenario.ProfileOptions{
		Label: s.experiment + "/" + x.Target.Spec.Name, Steps: s.VUs.Steps, VUsSpec: s.VUs.Spec,
		Repeat: s.runs(), Interleave: s.Interleave.Sweep, Checkpoint: s.CheckpointBefore, Reset: s.ResetBetween,
		Driver: d, Continue: prev.ProfileID,
		Started: func(ctx context.Context, id int64) error {
			return x.Save(ctx, profileProgress{ProfileID: id, Seed: d.Seed})
		},
	}
	if s.Repeat.Auto {
		a, err := s.adaptive(ctx, x)
		if err != nil {
			return Outcome{}, err
		}
		o.Adaptive = a
	}
	out, err := x.Env.Profile(ctx, x.Target.DB, x.Target.Target, o)
	out, again, err := s.measureAgain(ctx, x, o, out, err)
	oc := Outcome{ProfileID: out.ID, RunIDs: out.Runs}
	if err != nil && !OnlyContaminated(err) {
		return oc, err
	}
	p, perr := x.Env.Store.GetProfile(ctx, out.ID)
	if perr == nil {
		rp, rerr := results.Profile(ctx, x.Env.Store, p, report.Include{})
		if rerr == nil && rp.Verdict.PeakVUs > 0 {
			oc.Headline = fmt.Sprintf("peak NOPM %.0f at %d VUs", rp.Verdict.PeakNOPM, rp.Verdict.PeakVUs)
		}
	}
	if h := stopsHeadline(out.Stops); h != "" {
		oc.Headline = strings.TrimPrefix(oc.Headline+"; "+h, "; ")
	}
	if again != "" {
		oc.Headline = strings.TrimPrefix(oc.Headline+"; "+again, "; ")
	}
	if err != nil {
		var dirty *scenario.ContaminatedError
		errors.As(err, &dirty)
		oc.Headline = strings.TrimSuffix(fmt.Sprintf("CONTAMINATED: %d of %d runs, left out; %s", len(dirty.Runs), dirty.Total, oc.Headline), "; ")
	}
	return oc, err
}

// DefaultRemeasure is how many times a profile step measures its
// contaminated runs again unless the plan says (remeasure): once gives a
// passing burst of activity on the host the time to end; a host busy for
// good leaves them contaminated, said so, after one more pass.
const DefaultRemeasure = 1

// maxRetries bounds retries and remeasure: each pass can measure the
// whole profile again.
const maxRetries = 10

// measureAgain measures again what the plan asks of a profile that just
// ran (out, err): a run whose server failed, after restarting a managed
// server (retries), and the contaminated runs (remeasure), each pass
// continuing the same profile so that the runs it replaces are marked
// superseded and nothing counts twice. It returns the last pass's
// outcome, what it did, and the last pass's error.
func (s *profileStep) measureAgain(ctx context.Context, x *Exec, o scenario.ProfileOptions, out scenario.ProfileOutcome, err error) (scenario.ProfileOutcome, string, error) {
	retries, remeasure := s.againLimits(x.Target.Managed != nil)
	note := notef(x)
	var done []string
	retried, remeasured := 0, 0
	for out.ID != 0 && ctx.Err() == nil {
		var failed *scenario.ServerFailedError
		switch {
		case errors.As(err, &failed) && retried < retries && x.Target.Server != nil:
			retried++
			note("run %d failed: %s; restarting %s and measuring it again (retry %d of %d)",
				failed.Run.RunID, strings.Join(failed.Run.Reasons, "; "), x.Target.Spec.Name, retried, retries)
			if _, rerr := x.Target.Server.Restart(ctx, false); rerr != nil {
				return out, strings.Join(done, "; "), errors.Join(err, fmt.Errorf("restart %s after its server failed: %w", x.Target.Spec.Name, rerr))
			}
			if rerr := x.Target.Reopen(ctx); rerr != nil {
				return out, strings.Join(done, "; "), errors.Join(err, rerr)
			}
			done = append(done, fmt.Sprintf("run %d failed (its server: %s) and was measured again after a restart", failed.Run.RunID, failed.Run.Reasons[0]))
			o.Remeasure = fmt.Sprintf("its server failed; the managed server was restarted and the slot measured again (retry %d of %d)", retried, retries)
			o.RedoContaminated = false
		case err != nil && OnlyContaminated(err) && remeasured < remeasure:
			var dirty *scenario.ContaminatedError
			errors.As(err, &dirty)
			remeasured++
			note("%d run(s) contaminated (%s); measuring them again (pass %d of %d)",
				len(dirty.Runs), dirty.Runs[0].Reasons[0], remeasured, remeasure)
			done = append(done, fmt.Sprintf("%d contaminated run(s) measured again (pass %d of %d)", len(dirty.Runs), remeasured, remeasure))
			o.Remeasure = fmt.Sprintf("contaminated; measured again (pass %d of %d)", remeasured, remeasure)
			o.RedoContaminated = true
		default:
			return out, strings.Join(done, "; "), err
		}
		o.Continue = out.ID
		out, err = x.Env.Profile(ctx, x.Target.DB, x.Target.Target, o)
	}
	return out, strings.Join(done, "; "), err
}

// againLimits are how many times the step measures again after a
// managed server failed (retries: once by default where a target is
// managed) and its contaminated runs (remeasure), as the plan says.
func (s *profileStep) againLimits(managed bool) (retries, remeasure int) {
	if managed {
		retries = 1
	}
	if s.Retries != nil {
		retries = *s.Retries
	}
	remeasure = DefaultRemeasure
	if s.Remeasure != nil {
		remeasure = *s.Remeasure
	}
	return retries, remeasure
}

// notef says a formatted note through x's observer, if it has one.
func notef(x *Exec) func(format string, args ...any) {
	return func(format string, args ...any) {
		if x.Env.Observer.Note != nil {
			x.Env.Observer.Note(fmt.Sprintf(format, args...))
		}
	}
}

// OnlyContaminated reports whether err says nothing but that runs were
// contaminated (measured and stored, a profile's ContaminatedError),
// whatever context wraps it.
func OnlyContaminated(err error) bool {
	if err == nil {
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !OnlyContaminated(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	if _, ok := err.(*scenario.ContaminatedError); ok {
		return true
	}
	if w, ok := err.(interface{ Unwrap() error }); ok {
		return OnlyContaminated(w.Unwrap()) // context around it
	}
	return false
}

// adaptive is the stopping rule of repeat: auto on x's target: on a
// target other than the baseline, once the baseline's same step has
// measured, the rule bounds the ratio to the baseline's NOPM.
func (s *profileStep) adaptive(ctx context.Context, x *Exec) (*scenario.AdaptiveOptions, error) {
	a := &scenario.AdaptiveOptions{Rule: s.Adaptive.Rule()}
	if x.Target.Spec.Name == s.baseline || x.Env.Experiment == nil {
		return a, nil
	}
	base, err := baselineFigures(ctx, x, s.baseline)
	if err != nil || base == nil {
		return a, err
	}
	a.Baseline, a.BaselineName = func(users int) []float64 { return base[users] }, s.baseline
	return a, nil
}

// baselineFigures reads the NOPM of the counting runs the baseline
// target's run of the same plan step measured, per step's users; nil
// when the baseline has not run that step (yet: it comes later in the
// schedule).
func baselineFigures(ctx context.Context, x *Exec, baseline string) (map[int][]float64, error) {
	units := x.Plan.Schedule()
	seq := x.Env.Experiment.Seq
	if seq < 1 || seq > len(units) {
		return nil, nil
	}
	index := units[seq-1].Step.Index
	steps, err := x.Env.Store.ExperimentSteps(ctx, x.Env.Experiment.ID)
	if err != nil {
		return nil, &scenario.StoreError{Op: "read the experiment's steps", Err: err}
	}
	for _, st := range steps {
		if st.StepIndex != index || st.Target != baseline || st.State != store.StepDone {
			continue
		}
		var oc Outcome
		if json.Unmarshal(st.Outcome, &oc) != nil || oc.ProfileID == 0 {
			return nil, nil
		}
		p, err := x.Env.Store.GetProfile(ctx, oc.ProfileID)
		if err != nil {
			return nil, &scenario.StoreError{Op: "read the baseline's profile", Err: err}
		}
		rp, err := results.Profile(ctx, x.Env.Store, p, report.Include{})
		if err != nil {
			return nil, err
		}
		out := map[int][]float64{}
		for _, s := range rp.Steps {
			out[s.VUs] = s.CountedNOPM()
		}
		return out, nil
	}
	return nil, nil
}

// stopsHeadline says how the steps of an adaptive profile stopped:
// "precision 5% reached at 2 of 3 steps, budget ended at 1".
func stopsHeadline(stops []profile.Stop) string {
	if len(stops) == 0 {
		return ""
	}
	n := map[profile.StopReason]int{}
	for _, s := range stops {
		n[s.Reason]++
	}
	var parts []string
	if k := n[profile.StopPrecision]; k > 0 {
		parts = append(parts, fmt.Sprintf("precision reached at %d of %d steps", k, len(stops)))
	}
	if k := n[profile.StopBudget]; k > 0 {
		parts = append(parts, fmt.Sprintf("budget ended at %d", k))
	}
	if k := n[profile.StopInterrupted]; k > 0 {
		parts = append(parts, fmt.Sprintf("interrupted at %d", k))
	}
	return strings.Join(parts, ", ")
}

// Section is the profile step's part of the report: every target's
// profile overlaid, the baseline first, with the I/O caps a managed
// instance was given.
func (s *profileStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	if units := rc.Units(index); len(units) == 1 && units[0].Target == "" {
		return s.pairedSection(ctx, rc, units[0])
	}
	var sec report.Section
	var missing []string
	for _, u := range rc.inOrder(rc.Units(index)) {
		p, ok := rc.Profile(u.Seq)
		if !ok {
			missing = append(missing, u.Target)
			continue
		}
		rp, err := results.Profile(ctx, rc.Store, p, rc.Include)
		if err != nil {
			return sec, err
		}
		if len(rp.Steps) == 0 {
			missing = append(missing, u.Target)
			continue
		}
		rp.Label = u.Target
		t, ok := rc.Target(u.Target)
		if ok {
			rp.Target = t.Display // a managed instance's URL names a port of one start
		}
		if ok && t.Instance != nil {
			l := t.Instance.IOLimit
			rp.Limits = map[string]float64{}
			if l.ReadIOPS > 0 {
				rp.Limits["read_iops"] = float64(l.ReadIOPS)
			}
			if l.WriteIOPS > 0 {
				rp.Limits["write_iops"] = float64(l.WriteIOPS)
			}
			if !l.IsZero() {
				rp.Throttle = l.String()
			}
		}
		sec.Profiles = append(sec.Profiles, rp)
	}
	if err := rc.alignSeries(ctx, sec.Profiles); err != nil {
		return sec, err
	}
	var notes []string
	if len(missing) > 0 {
		notes = append(notes, "No measured run on "+strings.Join(missing, ", ")+".")
	}
	if len(sec.Profiles) > 0 && sec.Profiles[0].Label != rc.Params.Baseline {
		notes = append(notes, fmt.Sprintf("The baseline %s has no measured run here: ratios are taken against %s.", rc.Params.Baseline, sec.Profiles[0].Label))
	}
	sec.Note = strings.Join(notes, " ")
	return sec, nil
}

// alignSeries gives every profile the per-second series of the same step,
// so that the report can overlay them: the largest number of virtual
// users every sampled profile ran (each profile's own peak otherwise).
func (rc *ReportContext) alignSeries(ctx context.Context, ps []report.Profile) error {
	if len(ps) < 2 {
		return nil
	}
	count := map[int]int{}
	for _, p := range ps {
		for _, s := range p.Steps {
			if s.Host != nil && s.NOPM.N > 0 {
				count[s.VUs]++
			}
		}
	}
	common := 0
	for vus, n := range count {
		if n == len(ps) && vus > common {
			common = vus
		}
	}
	if common == 0 {
		return nil
	}
	for i := range ps {
		if ps[i].Series != nil && ps[i].Series.VUs == common {
			continue
		}
		s, err := results.SeriesAt(ctx, rc.Store, ps[i], common, rc.Include)
		if err != nil {
			return err
		}
		ps[i].Series = s
	}
	return nil
}

// DriverHost is the host the step's driver runs on ("" : the plan's).
func (s *profileStep) DriverHost() string {
	if s.Driver == nil {
		return ""
	}
	return s.Driver.Host
}
