package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

func init() {
	plan.Register(plan.Kind{Name: "parallel", Scope: plan.OverTargets,
		Summary: "every target driven at the same time with one synchronised measured window: per-target and total NOPM/TPM, the spread between targets and the skew between their windows (options: vus, rampup, duration, grace, repeat, skew_tolerance, client_sql, all_warehouses, max_retries, seed)",
		New:     func() plan.Step { return &parallelStep{ParallelOptions: DefaultParallel()} }})
}

// What the parallel kind is, checked by the compiler.
var (
	_ Step                = (*parallelStep)(nil)
	_ Reporter            = (*parallelStep)(nil)
	_ plan.ConnectionUser = (*parallelStep)(nil)
)

var (
	_ Step                = (*parallelStep)(nil)
	_ Reporter            = (*parallelStep)(nil)
	_ plan.ConnectionUser = (*parallelStep)(nil)
)

// defaultSkewTolerance is how far apart the targets' windows may start or
// end: a window starts once its target's start counters are read, which
// takes milliseconds on an idle server and can take a second on a loaded
// one; a second is under 2% of a one-minute window.
const defaultSkewTolerance = time.Second

// ParallelOptions are the options of a parallel step, as a plan's
// parallel section writes them and `oltplab parallel` takes them.
//
//	parallel:
//	  vus: 4               # virtual users on each target
//	  rampup: 10s
//	  duration: 60s        # the one measured window, the same on every target
//	  repeat: 2            # synchronised windows, one after the other
//	  skew_tolerance: 1s   # windows further apart than this are marked
type ParallelOptions struct {
	VUs int `yaml:"vus"`
	// Load: ramp-up, duration, grace and the driver's other options.
	plan.Load     `yaml:",inline"`
	Repeat        int           `yaml:"repeat"`
	SkewTolerance time.Duration `yaml:"skew_tolerance"`
}

// OmitFields: a parallel step runs with the driver's own reconnection
// time, failure limit, stall share and interference limits.
func (ParallelOptions) OmitFields() []string {
	return []string{"reconnect_for", "max_failure_rate", "max_stall", "max_foreign_cpu", "max_steal"}
}

// DefaultParallel is a parallel step's options when the plan gives none.
func DefaultParallel() ParallelOptions {
	return ParallelOptions{VUs: driver.Defaults().VUs, Load: sharedHostLoad(), Repeat: 1, SkewTolerance: defaultSkewTolerance}
}

// sharedHostLoad is the driver's defaults for steps whose targets share
// the host on purpose (parallel, neighbours): each target's server is the
// others' foreign CPU, so foreign CPU does not contaminate their runs
// (steal still does).
func sharedHostLoad() plan.Load {
	l := plan.DefaultLoad()
	l.MaxForeignCPU = 100
	return l
}

// parallelStep drives every target of the plan at once (experiment 10 of
// the studies: many instances with one synchronised measurement window).
type parallelStep struct {
	ParallelOptions `yaml:",inline"`

	experiment string
	targets    int
}

// parallelProgress is what a parallel step saves after each window: a
// resumed attempt keeps the complete windows and their runs.
type parallelProgress struct {
	Seed uint64 `json:"seed"`
	Done int    `json:"done"`
	// Keep are the runs of the windows done (the windows' own and their
	// targets'); every other counting run of the step is superseded.
	Keep []int64 `json:"keep"`
}

func (s *parallelStep) Prepare(p *plan.Plan) error {
	if len(p.Targets) < 2 {
		return fmt.Errorf("drives several targets at once: the plan has %d target", len(p.Targets))
	}
	if s.Repeat < 1 {
		return fmt.Errorf("repeat must be at least 1, got %d", s.Repeat)
	}
	if s.SkewTolerance < 0 {
		return fmt.Errorf("skew_tolerance must not be negative, got %s", s.SkewTolerance)
	}
	if err := s.driverOptions().Validate(); err != nil {
		return err
	}
	s.experiment, s.targets = p.Name, len(p.Targets)
	return nil
}

func (s *parallelStep) driverOptions() driver.Options {
	d := s.Load.Driver()
	d.VUs = s.VUs
	return d
}

func (s *parallelStep) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "parallel: %d VU(s) on each of %d targets at once", s.VUs, s.targets)
	if s.Repeat > 1 {
		fmt.Fprintf(&b, " × %d windows", s.Repeat)
	}
	fmt.Fprintf(&b, ", ramp-up %s, %s measured, skew tolerance %s", s.Rampup, s.Duration, s.SkewTolerance)
	return b.String()
}

// Connections: the virtual users and the connection that reads the
// counters.
func (s *parallelStep) Connections(*plan.Plan) int { return s.VUs + 1 }

func (s *parallelStep) Estimate(*plan.Plan, *plan.TargetSpec) time.Duration {
	per := s.Rampup + s.Duration + 2*time.Second // sessions, counters, storing
	return time.Duration(s.Repeat) * per
}

// targetsOf is the step's targets as the scenario takes them.
func targetsOf(rs []*Running) []scenario.ParallelTarget {
	out := make([]scenario.ParallelTarget, len(rs))
	for i, r := range rs {
		out[i] = scenario.ParallelTarget{Name: r.Spec.Name, DB: r.DB, Target: r.Target, Instance: r.Instance, OwnIO: r.OwnIO}
	}
	return out
}

// supersedeExcept marks every counting run of the step's schedule entry
// not in keep superseded: what an interrupted attempt left half-measured.
func supersedeExcept(ctx context.Context, x *Exec, keep []int64) error {
	st, ec := x.Env.Store, x.Env.Experiment
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: ec.ID, Counting: true})
	if err != nil {
		return &scenario.StoreError{Op: "read the step's runs", Err: err}
	}
	for _, r := range runs {
		if r.ExperimentSeq != ec.Seq || slices.Contains(keep, r.ID) {
			continue
		}
		if err := st.SupersedeRun(ctx, r.ID, "its step was interrupted before it finished; the step continued when the experiment resumed"); err != nil {
			return &scenario.StoreError{Op: "mark a run superseded", Err: err}
		}
	}
	return nil
}

func (s *parallelStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	var prog parallelProgress
	if len(x.Progress) > 0 {
		if err := json.Unmarshal(x.Progress, &prog); err != nil {
			return Outcome{}, fmt.Errorf("read the progress of the interrupted step: %w", err)
		}
	}
	d := s.driverOptions()
	switch {
	case prog.Seed != 0:
		d.Seed = prog.Seed
	case d.Seed == 0:
		d.Seed = drawSeed()
	}
	prog.Seed = d.Seed
	if err := supersedeExcept(ctx, x, prog.Keep); err != nil {
		return Outcome{}, err
	}
	oc := Outcome{RunIDs: slices.Clone(prog.Keep)}
	ws, err := x.Env.Parallel(ctx, targetsOf(x.Targets), scenario.ParallelOptions{
		Label: s.experiment + "/parallel", Driver: d, Repeat: s.Repeat, SkewTolerance: s.SkewTolerance, Done: prog.Done,
		Stored: func(ctx context.Context, w summary.ParallelWindow) error {
			ids := w.Runs()
			oc.RunIDs = append(oc.RunIDs, ids...)
			if !w.Complete {
				return nil
			}
			prog.Done = w.Repeat
			prog.Keep = append(prog.Keep, ids...)
			return x.Save(ctx, prog)
		}})
	var suspect *scenario.SuspectError
	if err != nil && !errors.As(err, &suspect) {
		return oc, err
	}
	all, serr := storedWindows(ctx, x.Env.Store, x.Env.Experiment.ID, x.Env.Experiment.Seq)
	if serr != nil {
		return oc, errors.Join(err, serr)
	}
	if len(all) == 0 {
		all = ws
	}
	oc.Headline = summary.SummarizeWindows(all, false).Headline()
	// A suspect window is measured and stored; the error says so, as a
	// suspect profile's does.
	return oc, err
}

// storedWindows reads the counting synchronised windows of one schedule
// entry, oldest first.
func storedWindows(ctx context.Context, st *store.Store, expID int64, seq int) ([]summary.ParallelWindow, error) {
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: expID, Kind: store.KindParallel, Counting: true})
	if err != nil {
		return nil, &scenario.StoreError{Op: "read the synchronised windows", Err: err}
	}
	return decodeWindows(runs, seq)
}

// decodeWindows decodes the summaries of the parallel runs of seq
// (given newest first), oldest first.
func decodeWindows(runs []store.Run, seq int) ([]summary.ParallelWindow, error) {
	var out []summary.ParallelWindow
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r.ExperimentSeq != seq || r.Kind != store.KindParallel || len(r.Summary) == 0 {
			continue
		}
		w, err := summary.DecodeParallel(r.Summary)
		if err != nil {
			return nil, &scenario.StoreError{Op: fmt.Sprintf("decode synchronised window %d", r.ID), Err: err}
		}
		out = append(out, w)
	}
	return out, nil
}

// Section is the parallel step's part of the report: each target's
// figures and the total over the synchronised windows, the spread
// between targets, and every window's alignment.
func (s *parallelStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	var sec report.Section
	units := rc.Units(index)
	if len(units) == 0 {
		return sec, nil
	}
	var runs []store.Run
	for _, u := range units {
		runs = append(runs, rc.Runs(u.Seq, store.KindParallel)...)
	}
	ws, err := decodeWindows(runs, units[0].Seq)
	if err != nil {
		return sec, err
	}
	if len(ws) == 0 {
		sec.Note = "No synchronised window was measured."
		return sec, nil
	}
	st := summary.SummarizeWindows(ws, rc.Include.Suspect)
	sec.Tables = append(sec.Tables, parallelTargetsTable(rc, st), parallelWindowsTable(ws), parallelAlignmentTable(ws))
	sec.Note = fmt.Sprintf("All targets ran at once: each opened its sessions, they were released together, ramped up and measured "+
		"one window planned as the same wall-clock interval on every target. Each target's NOPM and TPM come from its own "+
		"database's counters; the total is their sum. %d of %d window(s) complete.", st.Complete, st.Windows)
	switch {
	case st.Suspect > 0 && rc.Include.Suspect:
		sec.Note += fmt.Sprintf(" %d of them had a suspect target (its database figures disagreed with the driver's own counts): "+
			"counted in the statistics, as asked.", st.Suspect)
	case st.Suspect > 0:
		sec.Note += fmt.Sprintf(" %d of them had a suspect target (its database figures disagreed with the driver's own counts): "+
			"shown, but left out of the statistics (--include-suspect counts them).", st.Suspect)
	}
	if st.SkewExceeded > 0 {
		sec.Note += fmt.Sprintf(" %d window(s) had targets' windows further apart than the tolerance: their totals add figures of different intervals.", st.SkewExceeded)
	}
	if ch, ok := parallelChart(ctx, rc, ws); ok {
		sec.Charts = append(sec.Charts, ch)
	}
	return sec, nil
}

// parallelTargetsTable: each target over the complete windows, then the
// total.
func parallelTargetsTable(rc *ReportContext, st summary.ParallelStats) report.Table {
	t := report.Table{Title: "Targets and total",
		Note: "Mean over the complete synchronised windows with its 95% confidence interval (Student's t over the windows; " +
			"none with one window). Share: the target's part of the total NOPM.",
		Header: []string{"Target", "Windows", "NOPM", "NOPM 95% CI", "TPM", "TPM 95% CI", "Share of NOPM"},
		Right:  []bool{false, true, true, true, true, true, true}}
	targets := slices.Clone(st.Targets)
	slices.SortStableFunc(targets, func(a, b summary.TargetStats) int {
		return slices.Index(rc.Order, a.Name) - slices.Index(rc.Order, b.Name)
	})
	for _, ts := range targets {
		share := "—"
		if st.TotalNOPM.Mean > 0 && ts.NOPM.N > 0 {
			share = fmt.Sprintf("%.1f%%", 100*ts.NOPM.Mean/st.TotalNOPM.Mean)
		}
		t.Rows = append(t.Rows, []string{ts.Name, strconv.Itoa(ts.NOPM.N), mean(ts.NOPM), ci(ts.NOPM), mean(ts.TPM), ci(ts.TPM), share})
	}
	t.Rows = append(t.Rows, []string{"total", strconv.Itoa(st.TotalNOPM.N), mean(st.TotalNOPM), ci(st.TotalNOPM),
		mean(st.TotalTPM), ci(st.TotalTPM), "100%"})
	return t
}

// parallelWindowsTable: each window's total and the spread between its
// targets.
func parallelWindowsTable(ws []summary.ParallelWindow) report.Table {
	t := report.Table{Title: "Windows: totals and spread between targets",
		Note: "Spread: the lowest and highest target's NOPM in the window, their ratio, and the coefficient of variation " +
			"between targets (sd/mean). Skew: how far apart the targets' windows started or ended (the larger of the two).",
		Header: []string{"Window", "Total NOPM", "Total TPM", "NOPM min", "NOPM max", "max/min", "NOPM CV", "Skew ms", "Tolerance ms", "Flags"},
		Right:  []bool{true, true, true, true, true, true, true, true, true, false}}
	for _, w := range ws {
		var flags []string
		if w.SkewExceeded {
			flags = append(flags, "skew above tolerance")
		}
		if !w.Complete {
			flags = append(flags, "incomplete: a target did not measure the whole window")
		}
		if w.Suspect {
			flags = append(flags, "SUSPECT: a target's database figures disagree with the driver's own counts")
		}
		ratio := "—"
		if w.NOPM.Min > 0 {
			ratio = fmt.Sprintf("%.2f", w.NOPM.Max/w.NOPM.Min)
		}
		cv := "—"
		if w.NOPM.N > 1 {
			cv = fmt.Sprintf("%.1f%%", 100*w.NOPM.CV)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(w.Repeat), fmtNum(w.TotalNOPM), fmtNum(w.TotalTPM),
			fmtNum(w.NOPM.Min), fmtNum(w.NOPM.Max), ratio, cv, fmt.Sprintf("%.1f", w.MaxSkewMillis),
			fmt.Sprintf("%.0f", w.SkewToleranceMillis), strings.Join(flags, "; ")})
	}
	return t
}

// parallelAlignmentTable: each target's actual window against the
// planned one.
func parallelAlignmentTable(ws []summary.ParallelWindow) report.Table {
	t := report.Table{Title: "Window alignment",
		Note: "Each target's measured window against the planned one (the release of all targets plus the ramp-up): " +
			"a window starts once its target's start counters are read and ends when its end counters are read.",
		Header: []string{"Window", "Target", "Planned start (UTC)", "Start offset ms", "End offset ms", "Seconds", "NOPM", "TPM", "Status"},
		Right:  []bool{true, false, false, true, true, true, true, true, false}}
	for _, w := range ws {
		for _, tg := range w.Targets {
			secs := "—"
			if !tg.Start.IsZero() {
				secs = fmt.Sprintf("%.3f", tg.End.Sub(tg.Start).Seconds())
			}
			status := string(tg.Status)
			if tg.Error != "" {
				status += ": " + tg.Error
			}
			if len(tg.Suspect) > 0 {
				status += ": " + strings.Join(tg.Suspect, "; ")
			}
			t.Rows = append(t.Rows, []string{strconv.Itoa(w.Repeat), tg.Name, w.PlannedStart.UTC().Format("15:04:05.000"),
				fmt.Sprintf("%.1f", tg.StartOffsetMillis), fmt.Sprintf("%.1f", tg.EndOffsetMillis), secs,
				fmtNum(tg.NOPM), fmtNum(tg.TPM), status})
		}
	}
	return t
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) }

func mean(s profile.Summary) string {
	if s.N == 0 {
		return "—"
	}
	return fmtNum(s.Mean)
}

func ci(s profile.Summary) string {
	switch {
	case s.N > 0 && !s.HasCI():
		return "too few runs"
	case !s.HasCI():
		return "—"
	}
	return fmtNum(s.CILo) + "–" + fmtNum(s.CIHi)
}

// parallelChart draws every target's TPM second by second over the last
// complete window (else the last one), on one axis: seconds since the
// planned start of the window.
func parallelChart(ctx context.Context, rc *ReportContext, ws []summary.ParallelWindow) (report.TimeChart, bool) {
	w := ws[len(ws)-1]
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].Complete {
			w = ws[i]
			break
		}
	}
	var series [][]point
	var names []string
	for _, t := range w.Targets {
		if t.RunID == 0 || t.Start.IsZero() {
			continue
		}
		samples, err := rc.Store.Samples(ctx, t.RunID, store.SampleFilter{Source: store.SourceWorkload, Metric: summary.MetricTPM})
		if err != nil || len(samples) == 0 {
			continue
		}
		off := t.Start.Sub(w.PlannedStart).Seconds()
		var pts []point
		for _, s := range samples {
			pts = append(pts, point{T: off + float64(s.TMillis)/1000, V: s.Value})
		}
		series, names = append(series, pts), append(names, t.Name)
	}
	if len(series) == 0 {
		return report.TimeChart{}, false
	}
	x, values := alignSeries(series)
	tc := report.TimeChart{Title: fmt.Sprintf("TPM per second on each target, window %d", w.Repeat),
		Note: "Each target's completed transactions per second (as per-minute rates, the driver's counts) on one axis: " +
			"seconds since the planned start of the synchronised window; the total is their sum where every target has a second.",
		XLabel: "seconds since the planned window start", YLabel: "TPM (driver)", X: x,
		Spans: []report.Span{{Label: "measured window", From: 0, To: w.PlannedEnd.Sub(w.PlannedStart).Seconds(), Kind: report.SpanPhase}}}
	if len(series) > 1 {
		tc.Series = append(tc.Series, report.TimeSeries{Label: "total", Values: sumWhereAll(values, len(x))})
	}
	for i, n := range names {
		tc.Series = append(tc.Series, report.TimeSeries{Label: n, Values: values[i]})
	}
	return tc, true
}
