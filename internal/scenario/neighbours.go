package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// NoiseCycle runs cycle n (from 1) of a noisy neighbour's work (a
// backup) and says what it did. It must stop when ctx ends.
type NoiseCycle func(ctx context.Context, n int) (NoiseRun, error)

// NoiseRun is one cycle of a noisy neighbour's work.
type NoiseRun struct {
	Started, Ended time.Time
	Bytes          int64
	// Detail is the work's own record of the cycle (a backup's), stored
	// with it.
	Detail any
}

// Neighbour is one instance of a noisy-neighbour scenario: it runs the
// load in both phases, or, when Noise is set, the load in the baseline
// and Noise's cycles in the noisy phase.
type Neighbour struct {
	ParallelTarget
	Noise NoiseCycle
	// DataDir is where its data lives on this host ("" when unknown):
	// the device under it is sampled as the shared one.
	DataDir string
}

// NeighboursOptions describe a noisy-neighbour scenario (METHODOLOGY.md
// experiment 7).
type NeighboursOptions struct {
	// Label labels its run; the instances' load runs are
	// Label/baseline/NAME and Label/noisy/NAME.
	Label string
	// Driver is every instance's load: virtual users, ramp-up (before
	// each phase's window), grace, seed; Duration is set per phase.
	Driver driver.Options
	// Baseline is the baseline phase's measured window.
	Baseline time.Duration
	// Cycles noisy cycles, one every Interval from the start of the noisy
	// phase's window, which lasts Cycles × Interval.
	Cycles   int
	Interval time.Duration
	// Noise says what the noisy instances do, for the record ("backup
	// with basebackup").
	Noise         string
	SkewTolerance time.Duration
	// NoiseDirs are directories the noise writes to (backups), by name:
	// their devices are marked in the samples.
	NoiseDirs map[string]string
}

// Validate checks the options on their own.
func (o NeighboursOptions) Validate() error {
	switch {
	case o.Cycles < 1:
		return fmt.Errorf("cycles must be at least 1, got %d", o.Cycles)
	case o.Interval < time.Second:
		return fmt.Errorf("interval must be at least 1s, got %s", o.Interval)
	case o.Baseline < time.Second:
		return fmt.Errorf("baseline must be at least 1s, got %s", o.Baseline)
	case o.SkewTolerance < 0:
		return fmt.Errorf("skew tolerance must not be negative, got %s", o.SkewTolerance)
	}
	d := o.Driver
	d.Duration = o.Baseline
	return d.Validate()
}

// NeighboursOutcome is a stored noisy-neighbour scenario.
type NeighboursOutcome struct {
	RunID  int64        `json:"run_id"`
	Status store.Status `json:"status"`
	// Runs are every run it stored: its own, its windows' and the
	// instances'.
	Runs []int64 `json:"runs"`
	summary.Neighbours
}

// batchNote says how the intervals are made, stored with the summary.
const batchNote = "95% confidence intervals by batch means: each phase's measured window is cut into as many batches as " +
	"there are noise cycles (in the noisy phase one batch per cycle interval), a batch's rate is taken from the driver's " +
	"per-second counts and scaled so that the batches' mean is the database counter's figure, and the interval is Student's t " +
	"over the batches. Batches, not seconds: consecutive seconds are correlated, so per-second samples would give intervals " +
	"far too narrow. The loss's interval is that of the ratio of the two phases' means, on the log scale."

// Neighbours runs the noisy-neighbour scenario: a baseline phase (every
// instance runs the load over one synchronised window), then a noisy
// phase (the instances with Noise run its cycles, one every Interval,
// while the others run the load over a window covering them). The host
// is sampled throughout, the device under the instances' data marked;
// the scenario is stored as one run of kind neighbours with those
// samples, each phase as a synchronised window (kind parallel) and each
// instance's load as a run of its own. A failure stops it and stores
// what was measured (partial); cancellation likewise, returning ctx's
// error.
func (e *Env) Neighbours(ctx context.Context, ns []Neighbour, o NeighboursOptions) (NeighboursOutcome, error) {
	var out NeighboursOutcome
	if err := o.Validate(); err != nil {
		return out, err
	}
	var all, victims []ParallelTarget
	noise := map[string]NoiseCycle{}
	dirs := map[string]string{}
	sum := summary.Neighbours{Noise: o.Noise, Cycles: o.Cycles, Interval: o.Interval.Seconds(), CI: batchNote}
	for _, n := range ns {
		all = append(all, n.ParallelTarget)
		if n.Noise != nil {
			noise[n.Name] = n.Noise
			sum.Noisy = append(sum.Noisy, n.Name)
		} else {
			victims = append(victims, n.ParallelTarget)
			sum.Victims = append(sum.Victims, n.Name)
		}
		if n.DataDir != "" {
			dirs["data:"+n.Name] = n.DataDir
		}
	}
	if len(noise) == 0 || len(victims) == 0 {
		return out, fmt.Errorf("want at least one noisy instance and one victim, got %d and %d", len(noise), len(victims))
	}
	for name, d := range o.NoiseDirs {
		// The noise's own preparation made it (Env.NewBackups), so that
		// the sampler finds the device under it.
		dirs["noise:"+name] = d
	}
	rc := e.GatherContext(ctx, nil, dialect.Target{}, nil)
	params := map[string]any{"driver": o.Driver, "baseline_seconds": o.Baseline.Seconds(), "cycles": o.Cycles,
		"interval_seconds": o.Interval.Seconds(), "noise": o.Noise, "noisy": sum.Noisy, "victims": sum.Victims,
		"skew_tolerance_seconds": o.SkewTolerance.Seconds(), "dirs": dirs, "mode": o.Driver.Mode.String(), "mode_label": o.Driver.ModeLabel()}
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{Kind: store.KindNeighbours, Label: o.Label, VUs: o.Driver.VUs,
		ToolVersion: e.ToolVersion, ExperimentID: expID, ExperimentSeq: expSeq, Params: JSON(params), Context: JSON(rc)})
	if err != nil {
		return out, storeErr("record the noisy-neighbour scenario", err)
	}
	out.RunID = id
	out.Runs = []int64{id}

	t0 := time.Now()
	smp := sampler.Start(ctx, sampler.Options{Start: t0, Interval: time.Second, Dirs: dirs, Logger: e.logger()})
	var windows []summary.ParallelWindow
	var runErr error

	// Baseline: every instance runs the load.
	e.note("baseline: %d instance(s) run the load, %s measured", len(all), o.Baseline)
	bd := o.Driver
	bd.Duration = o.Baseline
	w, err := e.Window(ctx, all, WindowOptions{Label: o.Label + "/" + summary.PhaseBaseline, Phase: summary.PhaseBaseline, Repeat: 1,
		Driver: bd, SkewTolerance: o.SkewTolerance})
	if w.RunID != 0 {
		windows = append(windows, w)
	}
	runErr = err

	// Noisy: the noisy instances' cycles beside the victims' load.
	var mu sync.Mutex
	var cycles []summary.NoiseCycleResult
	if runErr == nil && ctx.Err() == nil {
		e.note("noisy: %s on %v, %d cycle(s) every %s, while %d instance(s) run the load", o.Noise, sum.Noisy, o.Cycles, o.Interval, len(victims))
		nd := o.Driver
		nd.Duration = time.Duration(o.Cycles) * o.Interval
		nd.Seed += uint64(len(all))
		w, err := e.Window(ctx, victims, WindowOptions{Label: o.Label + "/" + summary.PhaseNoisy, Phase: summary.PhaseNoisy, Repeat: 1,
			Driver: nd, SkewTolerance: o.SkewTolerance,
			Beside: func(ctx context.Context, start, end time.Time) error {
				var g sync.WaitGroup
				var errs []error
				for _, name := range sum.Noisy {
					g.Go(func() {
						for c := 1; c <= o.Cycles; c++ {
							due := start.Add(time.Duration(c-1) * o.Interval)
							if err := sleepUntil(ctx, due); err != nil {
								return
							}
							r, err := noise[name](ctx, c)
							cr := summary.NoiseCycleResult{Target: name, Cycle: c, Due: due, Started: r.Started, Ended: r.Ended,
								Bytes: r.Bytes, InWindow: !r.Ended.IsZero() && !r.Ended.After(end)}
							if !r.Started.IsZero() && !r.Ended.IsZero() {
								cr.Seconds = r.Ended.Sub(r.Started).Seconds()
								if cr.Seconds > 0 {
									cr.MBps = float64(r.Bytes) / 1e6 / cr.Seconds
								}
							}
							if r.Detail != nil {
								cr.Detail = JSON(r.Detail)
							}
							if err != nil {
								cr.Error = e.scrub(err.Error())
							}
							mu.Lock()
							cycles = append(cycles, cr)
							if err != nil && ctx.Err() == nil {
								errs = append(errs, fmt.Errorf("%s: noise cycle %d: %w", name, c, err))
							}
							mu.Unlock()
							if err != nil {
								return
							}
						}
					})
				}
				g.Wait()
				return errors.Join(errs...)
			}})
		if w.RunID != 0 {
			windows = append(windows, w)
		}
		runErr = err
	}
	m, samples := StopSampling(smp, time.Since(t0), rc.Placement)
	sum.Monitor = m
	sum.Interrupted = ctx.Err() != nil
	slices.SortFunc(cycles, func(a, b summary.NoiseCycleResult) int {
		return cmp.Or(a.Due.Compare(b.Due), cmp.Compare(a.Target, b.Target))
	})
	settleNeighbours(&sum, t0, windows, cycles, samples, o)

	for _, w := range windows {
		out.Runs = append(out.Runs, w.Runs()...)
	}
	var suspect SuspectError
	for _, w := range windows {
		suspect.add(w, o.Driver.VUs)
	}
	status := summary.Status(summary.Facts{Measured: len(windows) > 0, Failed: runErr != nil,
		Incomplete: sum.Interrupted || len(windows) < 2, Suspect: len(suspect.Runs) > 0})
	errText := ""
	switch {
	case runErr != nil:
		errText = e.scrub(runErr.Error())
	case sum.Interrupted || len(windows) < 2:
		errText = "interrupted"
	}
	out.Status, out.Neighbours = status, sum
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: JSON(sum), Error: errText, Samples: samples}); err != nil {
		return out, errors.Join(runErr, err)
	}
	if runErr == nil && sum.Interrupted {
		runErr = ctx.Err()
	}
	if runErr == nil {
		runErr = suspect.orNil()
	}
	return out, runErr
}

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// settleNeighbours fills the summary from the windows, the noise cycles and the
// samples (their time axis starting at t0).
func settleNeighbours(s *summary.Neighbours, t0 time.Time, windows []summary.ParallelWindow, cycles []summary.NoiseCycleResult,
	samples []store.Sample, o NeighboursOptions) {
	s.DeviceRoles = s.Monitor.DeviceRoles
	s.Device, s.Shared = sharedDevice(s.DeviceRoles, len(s.Noisy)+len(s.Victims))
	onAxis := func(from, to time.Time) summary.Span { return summary.SpanOf(t0, from, to) }
	device := func(w summary.Span) (*sampler.DeviceSummary, sampler.CPUSummary) {
		h := sampler.Summarize(samples, w.From(), w.To())
		for _, d := range h.Devices {
			if d.Device == s.Device {
				return &d, h.CPU
			}
		}
		return nil, h.CPU
	}
	// One batch per noise cycle; at least two, for an interval.
	batches := max(o.Cycles, 2)
	for _, w := range windows {
		ph := summary.NeighbourPhase{Name: w.Phase, WindowRun: w.RunID, SkewMs: w.MaxSkewMillis, SkewOver: w.SkewExceeded, Complete: w.Complete}
		if !w.PlannedStart.IsZero() {
			ph.Window = onAxis(w.PlannedStart, w.PlannedEnd)
			ph.Device, ph.CPU = device(ph.Window)
		}
		for _, t := range w.Targets {
			ph.Targets = append(ph.Targets, t.Name)
			role := "victim"
			if slices.Contains(s.Noisy, t.Name) {
				role = "noisy"
			}
			ip := summary.InstancePhase{Name: t.Name, Phase: w.Phase, Role: role, RunID: t.RunID, Status: t.Status}
			if t.Result != nil && t.Whole() {
				ip.NOPM, ip.TPM, ip.BatchSeconds = batchSummaries(t.Result, batches)
				ip.Batches = ip.NOPM.N
			}
			s.Instances = append(s.Instances, ip)
		}
		s.Phases = append(s.Phases, ph)
	}
	for _, v := range s.Victims {
		base, okB := instanceIn(s, v, summary.PhaseBaseline)
		noisy, okN := instanceIn(s, v, summary.PhaseNoisy)
		if !okB || !okN || base.NOPM.N == 0 || noisy.NOPM.N == 0 {
			continue
		}
		l := loss(v, base, noisy)
		l.Suspect = base.Status == store.StatusSuspect || noisy.Status == store.StatusSuspect
		s.Losses = append(s.Losses, l)
	}
	var secs []float64
	for i := range cycles {
		c := &cycles[i]
		if !c.Started.IsZero() && !c.Ended.IsZero() {
			c.Window = onAxis(c.Started, c.Ended)
			c.Device, _ = device(c.Window)
			if c.Error == "" {
				secs = append(secs, c.Seconds)
			}
		}
	}
	s.NoiseRuns = cycles
	s.NoiseSeconds = profile.Summarize(secs)

	// The victims while the noise ran, against between its cycles.
	var spans [][2]float64
	for _, c := range cycles {
		if c.Started.IsZero() || c.Ended.IsZero() {
			continue
		}
		from, to := c.Window.FromMillis, c.Window.ToMillis
		if i := c.Cycle - 1; i < len(spans) {
			if math.IsNaN(spans[i][0]) {
				spans[i] = [2]float64{float64(from) / 1000, float64(to) / 1000}
			} else {
				spans[i] = [2]float64{math.Min(spans[i][0], float64(from)/1000), math.Max(spans[i][1], float64(to)/1000)}
			}
			continue
		}
		for len(spans) < c.Cycle-1 {
			spans = append(spans, [2]float64{math.NaN(), math.NaN()}) // a cycle that never ran
		}
		spans = append(spans, [2]float64{float64(from) / 1000, float64(to) / 1000})
	}
	spans = slices.DeleteFunc(spans, func(sp [2]float64) bool { return math.IsNaN(sp[0]) })
	for _, w := range windows {
		if w.Phase != summary.PhaseNoisy || w.PlannedStart.IsZero() || len(spans) == 0 {
			continue
		}
		end := float64(w.PlannedEnd.Sub(t0).Milliseconds()) / 1000
		for _, t := range w.Targets {
			if t.Result == nil || t.Start.IsZero() {
				continue
			}
			start := float64(t.Start.Sub(t0).Milliseconds()) / 1000
			s.WhileNoisy = append(s.WhileNoisy, whileNoisy(t.Name, t.Result.Series, start, spans, end))
		}
	}
}

// instanceIn is one instance's load in one phase of s.
func instanceIn(s *summary.Neighbours, name, phase string) (summary.InstancePhase, bool) {
	for _, ip := range s.Instances {
		if ip.Name == name && ip.Phase == phase {
			return ip, true
		}
	}
	return summary.InstancePhase{}, false
}

// sharedDevice is the device under most instances' data ("data:NAME"
// roles), and whether it is under all n of them.
func sharedDevice(roles map[string][]string, n int) (string, bool) {
	best, count := "", 0
	for _, dev := range slices.Sorted(maps.Keys(roles)) {
		c := 0
		for _, r := range roles[dev] {
			if len(r) > 5 && r[:5] == "data:" {
				c++
			}
		}
		if c > count {
			best, count = dev, c
		}
	}
	return best, n > 0 && count == n
}

// batchSummaries cuts a run's per-second series into n batches of equal
// length and summarises the batches' NOPM and TPM, each scaled so that
// their mean is the run's database-counter figure (NOPM, TPM): the
// counters are read only at the window's edges, the driver's counts
// every second. It returns the batch length in seconds.
func batchSummaries(r *driver.Result, n int) (nopm, tpm profile.Summary, batchSeconds float64) {
	total := 0.0
	for _, s := range r.Series {
		total += s.IntervalSeconds
	}
	if n < 2 || total <= 0 || len(r.Series) < n {
		// Too short to cut: the counters' figure, without an interval.
		return profile.Summarize([]float64{r.NOPM}), profile.Summarize([]float64{r.TPM}), total
	}
	batchSeconds = total / float64(n)
	no := make([]float64, n)
	tx := make([]float64, n)
	secs := make([]float64, n)
	at := 0.0
	for _, s := range r.Series {
		// A second belongs to the batch its middle falls in.
		b := min(n-1, int((at+s.IntervalSeconds/2)/batchSeconds))
		at += s.IntervalSeconds
		no[b] += float64(s.NewOrders)
		tx[b] += float64(s.Transactions)
		secs[b] += s.IntervalSeconds
	}
	rates := func(counts []float64, db float64) profile.Summary {
		xs := make([]float64, n)
		var m float64
		for i := range counts {
			if secs[i] > 0 {
				xs[i] = counts[i] * 60 / secs[i]
			}
			m += xs[i] / float64(n)
		}
		if m > 0 && db > 0 {
			for i := range xs {
				xs[i] *= db / m
			}
		}
		return profile.Summarize(xs)
	}
	return rates(no, r.NOPM), rates(tx, r.TPM), batchSeconds
}

// lossOf is 1 − after/before in percent, with the interval of the ratio
// of the means (profile.Ratio, on the log scale).
type lossOf struct {
	pct, lo, hi                float64
	hasCI, tooFew, significant bool
}

func lossBetween(after, before profile.Summary) lossOf {
	r := profile.Ratio(after, before)
	pct := func(x float64) float64 { return 100 * (1 - x) }
	l := lossOf{pct: pct(r.Ratio)}
	if !r.Defined || math.IsNaN(l.pct) {
		l.pct = 0
	}
	l.lo, l.hi = l.pct, l.pct
	l.tooFew = r.TooFew
	if r.HasCI {
		l.hasCI, l.significant = true, r.Significant
		l.lo, l.hi = pct(r.Hi), pct(r.Lo)
	}
	return l
}

// loss is a victim's loss against its baseline, from the two phases'
// batch summaries.
func loss(name string, base, noisy summary.InstancePhase) summary.VictimLoss {
	n, t := lossBetween(noisy.NOPM, base.NOPM), lossBetween(noisy.TPM, base.TPM)
	return summary.VictimLoss{Name: name, NOPMLossPct: n.pct, NOPMLo: n.lo, NOPMHi: n.hi, TPMLossPct: t.pct, TPMLo: t.lo, TPMHi: t.hi,
		HasCI: n.hasCI, TooFew: n.tooFew, Significant: n.significant}
}

// whileNoisy compares a victim's rates while each noise cycle ran (any
// noisy instance's cycle c, from the first start to the last end) with
// its rates from that cycle's end to the next cycle's start (or the
// window's end). series is the victim's per-second series, the first
// second starting at start on the samples' axis (seconds); cycles are
// the cycles' [from, to] on that axis, in order; end is the window's end.
func whileNoisy(name string, series []driver.SecondSample, start float64, cycles [][2]float64, end float64) summary.WhileNoisy {
	type acc struct{ no, tx, secs float64 }
	during := make([]acc, len(cycles))
	between := make([]acc, len(cycles))
	at := start
	for _, s := range series {
		mid := at + s.IntervalSeconds/2
		at += s.IntervalSeconds
		for c, cy := range cycles {
			next := end
			if c+1 < len(cycles) {
				next = cycles[c+1][0]
			}
			var a *acc
			switch {
			case mid >= cy[0] && mid <= cy[1]:
				a = &during[c]
			case mid > cy[1] && mid < next:
				a = &between[c]
			default:
				continue
			}
			a.no += float64(s.NewOrders)
			a.tx += float64(s.Transactions)
			a.secs += s.IntervalSeconds
		}
	}
	var dn, dt, bn, bt []float64
	for c := range cycles {
		d, b := during[c], between[c]
		if d.secs <= 0 || b.secs <= 0 {
			continue // a cycle that filled its interval has nothing to compare with
		}
		dn, dt = append(dn, d.no*60/d.secs), append(dt, d.tx*60/d.secs)
		bn, bt = append(bn, b.no*60/b.secs), append(bt, b.tx*60/b.secs)
	}
	w := summary.WhileNoisy{Name: name, NOPMDuring: profile.Summarize(dn), NOPMBetween: profile.Summarize(bn),
		TPMDuring: profile.Summarize(dt), TPMBetween: profile.Summarize(bt)}
	n, t := lossBetween(w.NOPMDuring, w.NOPMBetween), lossBetween(w.TPMDuring, w.TPMBetween)
	w.NOPMLossPct, w.NOPMLo, w.NOPMHi = n.pct, n.lo, n.hi
	w.TPMLossPct, w.TPMLo, w.TPMHi = t.pct, t.lo, t.hi
	w.HasCI, w.TooFew, w.Significant = n.hasCI, n.tooFew, n.significant
	return w
}
