package experiment

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/sysstat"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

func init() {
	plan.Register(plan.Kind{Name: "neighbours", Scope: plan.OverTargets,
		Summary: "noisy neighbours: a baseline where every target runs the load, then the noisy targets back up every interval while the others run it; each victim's loss, the backups and the shared device over time (options: noisy, vus, rampup, baseline, cycles, interval, grace, backup, skew_tolerance, client_sql, all_warehouses, max_retries, seed)",
		New:     func() plan.Step { return &neighboursStep{NeighboursOptions: DefaultNeighbours()} }})
}

// What the neighbours kind is, checked by the compiler.
var (
	_ Step                = (*neighboursStep)(nil)
	_ Reporter            = (*neighboursStep)(nil)
	_ plan.ConnectionUser = (*neighboursStep)(nil)
)

var (
	_ Step                = (*neighboursStep)(nil)
	_ Reporter            = (*neighboursStep)(nil)
	_ plan.ConnectionUser = (*neighboursStep)(nil)
)

// NeighboursOptions are the options of a neighbours step, as a plan's
// neighbours section writes them and `oltplab neighbours` takes them.
//
//	neighbours:
//	  noisy: [n3]          # the targets that back up in the noisy phase
//	  vus: 4               # virtual users on each target running the load
//	  rampup: 10s          # before each phase's measured window
//	  baseline: 90s        # the baseline's window (default: cycles × interval)
//	  cycles: 3            # backups per noisy target, one every interval
//	  interval: 30s        # the noisy phase's window is cycles × interval
//	  backup: {to: /var/tmp/backups, method: basebackup, jobs: 1}
type NeighboursOptions struct {
	Noisy []string `yaml:"noisy"`
	VUs   int      `yaml:"vus"`
	// Load: ramp-up, grace and the driver's other options; each phase
	// has its own window (Baseline, Cycles × Interval).
	plan.Load `yaml:",inline"`
	// Baseline is the baseline's window; 0: Cycles × Interval.
	Baseline      time.Duration    `yaml:"baseline,omitempty"`
	Cycles        int              `yaml:"cycles"`
	Interval      time.Duration    `yaml:"interval"`
	SkewTolerance time.Duration    `yaml:"skew_tolerance"`
	Backup        NeighboursBackup `yaml:"backup,omitempty"`
}

// OmitFields: the phases time their own windows, and a neighbours step
// runs with the driver's own reconnection time, failure limit, stall
// share and interference limits (its noise is the interference).
func (NeighboursOptions) OmitFields() []string {
	return []string{"duration", "reconnect_for", "max_failure_rate", "max_stall", "max_foreign_cpu", "max_steal"}
}

// NeighboursBackup is how the noisy targets back up.
type NeighboursBackup struct {
	// To is the directory backups go to (each noisy target's in
	// TO/NAME); default: NAME-backups beside a managed instance's
	// data_dir, on the storage the instances share.
	To     string                `yaml:"to,omitempty"`
	Method instance.BackupMethod `yaml:"method,omitempty"`
	Jobs   int                   `yaml:"jobs,omitempty"`
}

// DefaultNeighbours is a neighbours step's options when the plan gives
// none.
func DefaultNeighbours() NeighboursOptions {
	return NeighboursOptions{VUs: driver.Defaults().VUs, Load: sharedHostLoad(), Cycles: 10, Interval: 100 * time.Second,
		SkewTolerance: defaultSkewTolerance}
}

// neighboursStep is the noisy-neighbour scenario (METHODOLOGY.md
// experiment 7) over the plan's targets, which share storage.
type neighboursStep struct {
	NeighboursOptions `yaml:",inline"`

	experiment string
	targets    int
	// to is each noisy target's backup directory.
	to map[string]string
}

func (s *neighboursStep) Prepare(p *plan.Plan) error {
	if len(s.Noisy) == 0 {
		return errors.New("noisy is required: the targets that back up in the noisy phase (e.g. noisy: [" + p.Targets[len(p.Targets)-1].Name + "])")
	}
	s.to = map[string]string{}
	for _, n := range s.Noisy {
		t := p.Target(n)
		if t == nil {
			return fmt.Errorf("noisy: no target named %q%s", n, yamldoc.Suggest(n, p.TargetNames()))
		}
		if _, dup := s.to[n]; dup {
			return fmt.Errorf("noisy: %s is named twice", n)
		}
		switch {
		case s.Backup.To != "":
			s.to[n] = filepath.Join(p.Resolve(s.Backup.To), n)
		case t.Managed() && t.Instance.Engine != instance.SQLite:
			s.to[n] = filepath.Join(filepath.Dir(t.Instance.DataDir), n+"-backups")
		case t.LocalDir() != "":
			s.to[n] = filepath.Join(t.LocalDir(), n+"-backups")
		default:
			return fmt.Errorf("backup.to is required: %s is not a managed instance, so where its backups go must be given", n)
		}
	}
	if len(s.Noisy) >= len(p.Targets) {
		return fmt.Errorf("noisy names every target: at least one must run the load as the victim")
	}
	if s.Cycles < 1 {
		return fmt.Errorf("cycles must be at least 1, got %d", s.Cycles)
	}
	if s.Interval < time.Second {
		return fmt.Errorf("interval must be at least 1s, got %s", s.Interval)
	}
	if s.Baseline < 0 {
		return fmt.Errorf("baseline must not be negative, got %s", s.Baseline)
	}
	if s.SkewTolerance < 0 {
		return fmt.Errorf("skew_tolerance must not be negative, got %s", s.SkewTolerance)
	}
	if s.Backup.Jobs < 0 {
		return fmt.Errorf("backup.jobs must not be negative, got %d", s.Backup.Jobs)
	}
	if err := s.options().Validate(); err != nil {
		return err
	}
	s.experiment, s.targets = p.Name, len(p.Targets)
	return nil
}

// baseline is the baseline's window: as given, else as long as the
// noisy phase's.
func (s *neighboursStep) baseline() time.Duration {
	if s.Baseline > 0 {
		return s.Baseline
	}
	return time.Duration(s.Cycles) * s.Interval
}

func (s *neighboursStep) options() scenario.NeighboursOptions {
	d := s.Load.Driver()
	d.VUs = s.VUs
	return scenario.NeighboursOptions{Label: s.experiment + "/neighbours", Driver: d, Baseline: s.baseline(),
		Cycles: s.Cycles, Interval: s.Interval, SkewTolerance: s.SkewTolerance, NoiseDirs: s.to}
}

func (s *neighboursStep) Describe() string {
	return fmt.Sprintf("neighbours: baseline of %s with all %d targets loaded (%d VU(s) each), then %s back up %d time(s) every %s while the others run the load; ramp-up %s",
		s.baseline(), s.targets, s.VUs, strings.Join(s.Noisy, ", "), s.Cycles, s.Interval, s.Rampup)
}

// Connections: the virtual users, the counters' connection and the
// backup tools' (a dump's jobs, a base backup's WAL stream).
func (s *neighboursStep) Connections(*plan.Plan) int { return s.VUs + 1 + max(s.Backup.Jobs, 1) + 2 }

func (s *neighboursStep) Estimate(*plan.Plan, *plan.TargetSpec) time.Duration {
	return 2*(s.Rampup+s.Grace+2*time.Second) + s.baseline() + time.Duration(s.Cycles)*s.Interval
}

func (s *neighboursStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	// An interrupted attempt is measured again from the start: its
	// phases would not compare with a new attempt's.
	if err := supersedeExcept(ctx, x, nil); err != nil {
		return Outcome{}, err
	}
	o := s.options()
	if o.Driver.Seed == 0 {
		o.Driver.Seed = drawSeed()
	}
	var ns []scenario.Neighbour
	var methods []string
	for _, r := range x.Targets {
		n := scenario.Neighbour{ParallelTarget: targetsOf([]*Running{r})[0], DataDir: dataDirOf(ctx, r, x.Env)}
		if slices.Contains(s.Noisy, r.Spec.Name) {
			bs, err := x.Env.NewBackups(ctx, scenario.BackupSource{DB: r.DB, Target: r.Target, Instance: r.Managed},
				scenario.BackupOptions{Label: s.experiment + "/neighbours/" + r.Spec.Name, Cycles: s.Cycles,
					To: s.to[r.Spec.Name], Method: s.Backup.Method, Jobs: s.Backup.Jobs})
			if err != nil {
				return Outcome{}, fmt.Errorf("prepare the backups of %s: %w", r.Spec.Name, err)
			}
			defer func() {
				if err := bs.Close(); err != nil {
					x.Env.Log.Warn("neighbours: clean up the backups", "target", r.Spec.Name, "err", err)
				}
			}()
			if m := string(bs.Info().Method); !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
			n.Noise = func(ctx context.Context, c int) (scenario.NoiseRun, error) {
				bc, err := bs.Cycle(ctx, c)
				return scenario.NoiseRun{Started: bc.Backup.Started, Ended: bc.Backup.Ended, Bytes: bc.Backup.Bytes, Detail: bc}, err
			}
		}
		ns = append(ns, n)
	}
	o.Noise = "backup with " + strings.Join(methods, ", ")
	out, err := x.Env.Neighbours(ctx, ns, o)
	oc := Outcome{RunIDs: out.Runs, Headline: out.Neighbours.Headline()}
	return oc, err
}

// dataDirOf is where a target's data is on this host ("" when unknown).
func dataDirOf(ctx context.Context, r *Running, e *scenario.Env) string {
	if d := r.Spec.LocalDir(); d != "" {
		return d
	}
	return e.LocalDataDir(ctx, r.DB, r.Target)
}

func pct(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) + "%" }

// storedNeighbours reads the newest counting noisy-neighbour run of one
// schedule entry.
func storedNeighbours(rc *ReportContext, seq int) (summary.Neighbours, store.Run, bool, error) {
	for _, r := range rc.Runs(seq, store.KindNeighbours) {
		if len(r.Summary) == 0 {
			continue
		}
		s, err := summary.DecodeNeighbours(r.Summary)
		if err != nil {
			return s, r, false, &scenario.StoreError{Op: fmt.Sprintf("decode noisy-neighbour run %d", r.ID), Err: err}
		}
		return s, r, true, nil
	}
	return summary.Neighbours{}, store.Run{}, false, nil
}

// Section is the neighbours step's part of the report: each instance in
// each phase, each victim's loss, the backups, the shared device by
// phase, and the device's IOPS and latency second by second with the
// phases and every backup marked.
func (s *neighboursStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	var sec report.Section
	units := rc.Units(index)
	if len(units) == 0 {
		return sec, nil
	}
	sum, run, ok, err := storedNeighbours(rc, units[0].Seq)
	if err != nil {
		return sec, err
	}
	if !ok {
		sec.Note = "The scenario stored nothing."
		return sec, nil
	}
	shared := ", their data on the shared device " + sum.Device
	if !sum.Shared {
		shared = "; their data is not all on one device: the device shown, " + sum.Device + ", holds most of it"
	}
	sec.Note = fmt.Sprintf("Baseline: every instance runs the load. Noisy: the noisy instance(s) %s take a %s %d time(s), one every %.0f s, "+
		"while the victims %s run the load%s. %s",
		strings.Join(sum.Noisy, ", "), sum.Noise, sum.Cycles, sum.Interval, strings.Join(sum.Victims, ", "), shared, sum.CI)
	switch run.Status {
	case store.StatusOK:
	case store.StatusSuspect:
		sec.Note += " The scenario is suspect: an instance's database figures disagreed with the driver's own counts in a phase " +
			"(its runs are marked); a victim's loss from such a run is shown, flagged, and left out of the headline."
	default:
		sec.Note += fmt.Sprintf(" The scenario is %s: %s.", run.Status, run.Error)
	}
	sec.Tables = append(sec.Tables, instancesTable(sum), lossTable(sum), whileNoisyTable(sum), backupsTable(sum), deviceTable(sum))
	charts, err := neighboursCharts(ctx, rc, run.ID, sum)
	if err != nil {
		return sec, err
	}
	sec.Charts = charts
	neighboursFindings(&sec, sum)
	return sec, nil
}

// neighboursFindings states what the scenario exists for first: each
// victim's NOPM while the backups ran against between them; then its
// loss against the baseline phase, a gain said as one and explained, an
// interval too wide to mean anything said to be so; then the backups.
// It draws both losses per victim.
func neighboursFindings(sec *report.Section, s summary.Neighbours) {
	clauses := map[string]string{}
	for _, w := range s.WhileNoisy {
		f := fmt.Sprintf("Noisy neighbours: while %s's backups ran, victim %s %s of its NOPM against the seconds between backups%s",
			strings.Join(s.Noisy, ", "), w.Name, summary.LossWords(w.NOPMLossPct), lossWords(w.HasCI, w.TooFew, w.Significant, w.NOPMLo, w.NOPMHi))
		if w.NOPMLossPct < 0 {
			f += " (a negative loss: it ran faster while the backups ran)"
		}
		sec.Findings = append(sec.Findings, f+".")
		clauses[w.Name] = summary.LossWords(w.NOPMLossPct) + " of its NOPM while the neighbour's backups ran"
	}
	for _, l := range s.Losses {
		f := fmt.Sprintf("Against the baseline phase, where the noisy instances ran the load too, %s %s of its NOPM%s",
			l.Name, summary.LossWords(l.NOPMLossPct), lossWords(l.HasCI, l.TooFew, l.Significant, l.NOPMLo, l.NOPMHi))
		if l.NOPMLossPct < 0 {
			f += ": a negative loss, the victim gained, as the noisy instances stopped their own load to back up and left it their share of the CPU and the device"
		}
		if l.Suspect {
			f += " (SUSPECT: a phase's database figures disagree with the driver's own counts)"
		}
		sec.Findings = append(sec.Findings, f+".")
		if clauses[l.Name] == "" {
			clauses[l.Name] = summary.LossWords(l.NOPMLossPct) + " of its NOPM against the baseline phase"
		}
	}
	if d := s.NoiseSeconds; d.N > 0 {
		sec.Findings = append(sec.Findings, fmt.Sprintf("The noisy neighbour's %d backup(s) took %s on average.", d.N, secondsWords(d)))
		for _, n := range s.Noisy {
			clauses[n] = fmt.Sprintf("is the noisy neighbour, its backups %.1f s on average", d.Mean)
		}
	}
	var answers []report.Answer
	for _, name := range slices.Concat(s.Victims, s.Noisy) {
		if c := clauses[name]; c != "" {
			answers = append(answers, report.Answer{Target: name, Text: c})
		}
	}
	sec.Answers = answers
	if len(s.WhileNoisy)+len(s.Losses) > 0 {
		sec.Bars = append(sec.Bars, lossBars(s))
	}
}

// lossWords is a loss's interval in words: " (95% CI 22.9% to 73.2%)",
// or that it is too wide to conclude, too few or not significant.
func lossWords(has, tooFew, significant bool, lo, hi float64) string {
	switch {
	case tooFew:
		return fmt.Sprintf(" (too few batches or cycles to conclude, under %d)", profile.MinRepeats)
	case !has:
		return ""
	case summary.LossTooWide(lo, hi):
		return fmt.Sprintf("; its 95%% interval, %s to %s, is too wide to say how much", pct(lo), pct(hi))
	case !significant:
		return fmt.Sprintf(" (95%% CI %s to %s: not significant)", pct(lo), pct(hi))
	}
	return fmt.Sprintf(" (95%% CI %s to %s)", pct(lo), pct(hi))
}

// lossBars draws each victim's NOPM loss while the backups ran and
// against the baseline phase, the whisker its interval when it has a
// meaningful one.
func lossBars(s summary.Neighbours) report.BarChart {
	c := report.BarChart{Title: "Victims' NOPM loss (%)", YLabel: "loss %",
		Note: "Loss = 1 − rate with the noise / rate without, in percent; below zero the victim gained. Whiskers: the 95% interval, " +
			"left out where it spans more than 100 points (too wide to conclude)."}
	for _, w := range s.WhileNoisy {
		c.Categories = append(c.Categories, w.Name)
	}
	for _, l := range s.Losses {
		if !slices.Contains(c.Categories, l.Name) {
			c.Categories = append(c.Categories, l.Name)
		}
	}
	during := report.BarSeries{Label: "while backups ran", Values: make([]*float64, len(c.Categories)),
		Lo: make([]*float64, len(c.Categories)), Hi: make([]*float64, len(c.Categories))}
	against := report.BarSeries{Label: "against the baseline phase", Values: make([]*float64, len(c.Categories)),
		Lo: make([]*float64, len(c.Categories)), Hi: make([]*float64, len(c.Categories))}
	set := func(bs *report.BarSeries, name string, loss, lo, hi float64, has bool) {
		i := slices.Index(c.Categories, name)
		bs.Values[i] = ptr(loss)
		if has && !summary.LossTooWide(lo, hi) {
			bs.Lo[i], bs.Hi[i] = ptr(lo), ptr(hi)
		}
	}
	for _, w := range s.WhileNoisy {
		set(&during, w.Name, w.NOPMLossPct, w.NOPMLo, w.NOPMHi, w.HasCI)
	}
	for _, l := range s.Losses {
		set(&against, l.Name, l.NOPMLossPct, l.NOPMLo, l.NOPMHi, l.HasCI)
	}
	c.Series = []report.BarSeries{during, against}
	return c
}

func instancesTable(s summary.Neighbours) report.Table {
	t := report.Table{Title: "Instances by phase",
		Note:   "NOPM and TPM from each instance's database counters over its phase's synchronised window, with the 95% interval of the batch means.",
		Header: []string{"Instance", "Role", "Phase", "NOPM", "NOPM 95% CI", "TPM", "TPM 95% CI", "Batches", "Status"},
		Right:  []bool{false, false, false, true, true, true, true, true, false}}
	for _, ip := range s.Instances {
		t.Rows = append(t.Rows, []string{ip.Name, ip.Role, ip.Phase, mean(ip.NOPM), ci(ip.NOPM), mean(ip.TPM), ci(ip.TPM),
			fmt.Sprintf("%d × %.0f s", ip.Batches, ip.BatchSeconds), string(ip.Status)})
	}
	return t
}

func lossTable(s summary.Neighbours) report.Table {
	t := report.Table{Title: "Victims' loss against their baseline",
		Note: "Loss = 1 − noisy/baseline, in percent (negative: the victim gained, faster in the noisy phase, as the noisy instances stopped their own load to back up), with the 95% interval of the ratio of the two phases' means " +
			"(on the log scale, so it never crosses zero). \"not significant\": the interval contains no loss.",
		Header: []string{"Victim", "NOPM baseline", "NOPM noisy", "NOPM loss", "95% CI", "TPM loss", "95% CI", ""},
		Right:  []bool{false, true, true, true, true, true, true, false}}
	for _, l := range s.Losses {
		b, _ := findInstance(s, l.Name, summary.PhaseBaseline)
		n, _ := findInstance(s, l.Name, summary.PhaseNoisy)
		nci, tci, sig := "—", "—", ""
		switch {
		case l.HasCI:
			nci, tci = pct(l.NOPMLo)+" to "+pct(l.NOPMHi), pct(l.TPMLo)+" to "+pct(l.TPMHi)
			sig = significance(l.Significant, l.TooFew)
			if summary.LossTooWide(l.NOPMLo, l.NOPMHi) && !l.TooFew {
				sig = "interval too wide to conclude"
			}
		case l.TooFew:
			sig = significance(false, true)
		case l.Unbounded: // stored by oltplab before intervals were taken on the log scale
			nci, sig = "unbounded", "not significant"
		}
		if l.Suspect {
			sig = strings.TrimPrefix(sig+"; SUSPECT: a phase's database figures disagree with the driver's own counts", "; ")
		}
		t.Rows = append(t.Rows, []string{l.Name, mean(b.NOPM), mean(n.NOPM), pct(l.NOPMLossPct), nci, pct(l.TPMLossPct), tci, sig})
	}
	return t
}

func whileNoisyTable(s summary.Neighbours) report.Table {
	t := report.Table{Title: "Victims while the backups run",
		Note: "Within the noisy phase, each victim's rate while a backup ran against its rate from that backup's end to the next " +
			"one's start, cycle by cycle (the driver's per-second counts, per-minute rates; a second counts where its middle falls). " +
			"Loss = 1 − during/between with the 95% interval of the ratio over the cycles. The same instances are loaded in both, so the noisy " +
			"instances' stopped load does not count here, as it does against the baseline.",
		Header: []string{"Victim", "Cycles", "NOPM during", "NOPM between", "NOPM loss", "95% CI", "TPM during", "TPM between", "TPM loss", ""},
		Right:  []bool{false, true, true, true, true, true, true, true, true, false}}
	for _, w := range s.WhileNoisy {
		nci, sig := "—", ""
		switch {
		case w.HasCI:
			nci = pct(w.NOPMLo) + " to " + pct(w.NOPMHi)
			sig = significance(w.Significant, w.TooFew)
			if summary.LossTooWide(w.NOPMLo, w.NOPMHi) && !w.TooFew {
				sig = "interval too wide to conclude"
			}
		case w.TooFew:
			sig = significance(false, true)
		case w.Unbounded: // stored by oltplab before intervals were taken on the log scale
			nci, sig = "unbounded", "not significant"
		}
		t.Rows = append(t.Rows, []string{w.Name, strconv.Itoa(w.NOPMDuring.N), mean(w.NOPMDuring), mean(w.NOPMBetween), pct(w.NOPMLossPct), nci,
			mean(w.TPMDuring), mean(w.TPMBetween), pct(w.TPMLossPct), sig})
	}
	return t
}

// significance marks a loss's interval that does not support a
// conclusion.
func significance(significant, tooFew bool) string {
	switch {
	case tooFew:
		return fmt.Sprintf("too few to conclude (under %d batches or cycles)", profile.MinRepeats)
	case !significant:
		return "not significant"
	}
	return ""
}

func findInstance(s summary.Neighbours, name, phase string) (summary.InstancePhase, bool) {
	for _, ip := range s.Instances {
		if ip.Name == name && ip.Phase == phase {
			return ip, true
		}
	}
	return summary.InstancePhase{}, false
}

func backupsTable(s summary.Neighbours) report.Table {
	t := report.Table{Title: "Backups",
		Note: fmt.Sprintf("Each backup cycle: when it was due (every %.0f s from the noisy window's start), when it ran on the time "+
			"series' axis, its duration and rate, and what the shared device did meanwhile. Durations: %s.", s.Interval, durations(s)),
		Header: []string{"Instance", "Cycle", "Start s", "End s", "Seconds", "MB", "MB/s", "Device IOPS", "Device latency ms", "In the window", "Error"},
		Right:  []bool{false, true, true, true, true, true, true, true, true, false, false}}
	for _, c := range s.NoiseRuns {
		iops, lat := "—", "—"
		if d := c.Device; d != nil {
			iops, lat = fmtNum(d.ReadIOPS+d.WriteIOPS), fmt.Sprintf("%.2f", d.LatencyMillis)
		}
		in := "yes"
		if !c.InWindow {
			in = "no: ended after the victims' window"
		}
		t.Rows = append(t.Rows, []string{c.Target, strconv.Itoa(c.Cycle), secs(c.Window.FromMillis), secs(c.Window.ToMillis),
			fmt.Sprintf("%.1f", c.Seconds), fmt.Sprintf("%.0f", float64(c.Bytes)/1e6), fmt.Sprintf("%.1f", c.MBps), iops, lat, in, c.Error})
	}
	return t
}

func durations(s summary.Neighbours) string {
	d := s.NoiseSeconds
	if d.N == 0 {
		return "none finished"
	}
	out := fmt.Sprintf("mean %.1f s, min %.1f s, max %.1f s over %d", d.Mean, d.Min, d.Max, d.N)
	if d.HasCI() {
		out += fmt.Sprintf(" (95%% CI of the mean %.1f–%.1f s)", d.CILo, d.CIHi)
	}
	return out
}

func secs(ms int64) string { return fmt.Sprintf("%.1f", float64(ms)/1000) }

func deviceTable(s summary.Neighbours) report.Table {
	t := report.Table{Title: "Shared device " + s.Device + " by phase",
		Note: "Averages over each phase's measured window of the whole device (every process's I/O counts) and of the host's CPU. " +
			"Latency: the mean of per-second average latencies; p99: " + "the 99th percentile of those per-second averages.",
		Header: []string{"Phase", "From s", "To s", "Read IOPS", "Write IOPS", "Write MB/s", "Latency ms", "Latency p99 ms", "Utilisation", "CPU busy", "CPU iowait", "Skew ms"},
		Right:  []bool{false, true, true, true, true, true, true, true, true, true, true, true}}
	for _, ph := range s.Phases {
		row := []string{ph.Name, secs(ph.Window.FromMillis), secs(ph.Window.ToMillis)}
		if d := ph.Device; d != nil {
			row = append(row, fmtNum(d.ReadIOPS), fmtNum(d.WriteIOPS), fmt.Sprintf("%.1f", d.WriteMBps), fmt.Sprintf("%.2f", d.LatencyMillis),
				fmt.Sprintf("%.2f", d.LatencyP99Millis), fmt.Sprintf("%.0f%%", d.UtilPct))
		} else {
			row = append(row, "—", "—", "—", "—", "—", "—")
		}
		skew := fmt.Sprintf("%.1f", ph.SkewMs)
		if ph.SkewOver {
			skew += " (above tolerance)"
		}
		row = append(row, fmt.Sprintf("%.0f%%", ph.CPU.BusyPct), fmt.Sprintf("%.0f%%", ph.CPU.IOWaitPct), skew)
		t.Rows = append(t.Rows, row)
	}
	return t
}

// neighboursCharts draws the shared device's IOPS and latency, the
// host's CPU and the instances' TPM second by second on the scenario's
// time axis, with the phases and every backup marked.
func neighboursCharts(ctx context.Context, rc *ReportContext, runID int64, s summary.Neighbours) ([]report.TimeChart, error) {
	samples, err := rc.Store.Samples(ctx, runID, store.SampleFilter{Source: store.SourceHost})
	if err != nil {
		return nil, &scenario.StoreError{Op: "read the noisy-neighbour samples", Err: err}
	}
	series := func(metric, device string) []point {
		var out []point
		for _, sm := range samples {
			if sm.Metric == metric && sm.Device == device {
				out = append(out, point{T: float64(sm.TMillis) / 1000, V: sm.Value})
			}
		}
		return out
	}
	var spans []report.Span
	for _, ph := range s.Phases {
		if ph.Window.ToMillis > ph.Window.FromMillis {
			spans = append(spans, report.Span{Label: ph.Name, From: float64(ph.Window.FromMillis) / 1000, To: float64(ph.Window.ToMillis) / 1000, Kind: report.SpanPhase})
		}
	}
	for _, c := range s.NoiseRuns {
		if c.Window.ToMillis > 0 {
			spans = append(spans, report.Span{Label: fmt.Sprintf("backup %d (%s)", c.Cycle, c.Target),
				From: float64(c.Window.FromMillis) / 1000, To: float64(c.Window.ToMillis) / 1000, Kind: report.SpanEvent})
		}
	}
	const xLabel = "seconds since the scenario started"
	var charts []report.TimeChart
	if s.Device != "" {
		x, v := alignSeries([][]point{series(sysstat.MetricDiskReadIOPS, s.Device), series(sysstat.MetricDiskWriteIOPS, s.Device), series(sysstat.MetricDiskLatencyMillis, s.Device)})
		if len(x) > 0 {
			charts = append(charts, report.TimeChart{Title: "Shared device " + s.Device + ": IOPS and latency per second",
				Note:   "The whole device, every second, over both phases; phases shaded, each backup outlined from its start to its end.",
				XLabel: xLabel, YLabel: "IOPS", Y2Label: "latency ms", X: x, Spans: spans,
				Series: []report.TimeSeries{{Label: "read IOPS", Values: v[0]}, {Label: "write IOPS", Values: v[1]},
					{Label: "latency (ms)", Values: v[2], Right: true, Dash: true}}})
		}
	}
	x, v := alignSeries([][]point{series(sysstat.MetricCPUBusyPct, ""), series(sysstat.MetricCPUIOWaitPct, "")})
	if len(x) > 0 {
		charts = append(charts, report.TimeChart{Title: "Host CPU per second", XLabel: xLabel, YLabel: "% of CPU time", X: x, Spans: spans,
			Series: []report.TimeSeries{{Label: "CPU busy", Values: v[0]}, {Label: "CPU iowait", Values: v[1], Dash: true}}})
	}
	if tc, ok := instancesChart(ctx, rc, s, spans, xLabel); ok {
		charts = append(charts, tc)
	}
	return charts, nil
}

// instancesChart draws every instance's TPM second by second, each run
// placed on the scenario's axis by its window's start.
func instancesChart(ctx context.Context, rc *ReportContext, s summary.Neighbours, spans []report.Span, xLabel string) (report.TimeChart, bool) {
	byName := map[string][]point{}
	var names []string
	for _, ph := range s.Phases {
		windows, err := storedWindow(ctx, rc.Store, ph.WindowRun)
		if err != nil {
			continue
		}
		for _, t := range windows.Targets {
			if t.RunID == 0 || t.Start.IsZero() {
				continue
			}
			samples, err := rc.Store.Samples(ctx, t.RunID, store.SampleFilter{Source: store.SourceWorkload, Metric: summary.MetricTPM})
			if err != nil {
				continue
			}
			off := float64(ph.Window.FromMillis)/1000 + t.StartOffsetMillis/1000
			if _, seen := byName[t.Name]; !seen {
				names = append(names, t.Name)
			}
			for _, sm := range samples {
				byName[t.Name] = append(byName[t.Name], point{T: off + float64(sm.TMillis)/1000, V: sm.Value})
			}
		}
	}
	if len(names) == 0 {
		return report.TimeChart{}, false
	}
	var all [][]point
	for _, n := range names {
		all = append(all, byName[n])
	}
	x, v := alignSeries(all)
	tc := report.TimeChart{Title: "Each instance's TPM per second", XLabel: xLabel, YLabel: "TPM (driver)", X: x, Spans: spans,
		Note: "Completed transactions per second (as per-minute rates, the driver's counts) of each instance's load in each phase's window."}
	for i, n := range names {
		tc.Series = append(tc.Series, report.TimeSeries{Label: n, Values: v[i]})
	}
	return tc, true
}

// storedWindow reads the synchronised window stored as run id.
func storedWindow(ctx context.Context, st *store.Store, id int64) (summary.ParallelWindow, error) {
	r, err := st.GetRun(ctx, id)
	if err != nil {
		return summary.ParallelWindow{}, err
	}
	return summary.DecodeParallel(r.Summary)
}
