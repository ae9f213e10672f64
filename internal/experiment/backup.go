package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/sysstat"
)

func init() {
	plan.Register(plan.Kind{Name: "backup", Scope: plan.PerTarget,
		Summary: "timed backup and restore cycles with the engine's own tools, each restored copy checked, as `oltplab backup` (options: to, cycles, method, jobs, interval, restore, restore_dir, keep)",
		New: func() plan.Step {
			d := scenario.DefaultBackupOptions()
			return &backupStep{Cycles: d.Cycles, Restore: d.Restore, Jobs: min(runtime.NumCPU(), 8)}
		}})
}

// What the backup kind is, checked by the compiler.
var (
	_ Step               = (*backupStep)(nil)
	_ Reporter           = (*backupStep)(nil)
	_ plan.TargetChecker = (*backupStep)(nil)
	_ plan.RemoteChecker = (*backupStep)(nil)
)

var (
	_ Step               = (*backupStep)(nil)
	_ Reporter           = (*backupStep)(nil)
	_ plan.TargetChecker = (*backupStep)(nil)
)

// backupStep is `oltplab backup` on one target (scenario.Env.Backup). On
// a managed instance the tools run inside the instance's cgroups, so its
// io_limit holds for its backups, and each restore starts an instance
// like it.
//
//	backup:
//	  to: /mnt/backupdisk   # where the backups go (required; relative to the plan)
//	  cycles: 3
//	  method: dump          # PostgreSQL: basebackup (default) or dump
//	  jobs: 4               # pg_dump/pg_restore -j, mariadb-backup --parallel
//	  interval: 100s        # pause between cycles
//	  restore: true         # restore each backup and check it (default)
//	  restore_dir: /mnt/x   # where restores go (default: to)
//	  keep: false           # keep each cycle's backup and restored copy
type backupStep struct {
	To         string                `yaml:"to"`
	Cycles     int                   `yaml:"cycles"`
	Method     instance.BackupMethod `yaml:"method"`
	Jobs       int                   `yaml:"jobs"`
	Interval   time.Duration         `yaml:"interval"`
	Restore    bool                  `yaml:"restore"`
	RestoreDir string                `yaml:"restore_dir"`
	Keep       bool                  `yaml:"keep"`

	experiment string
	warehouses int
	rawTo      string // as the plan gave it
	// rawRestoreDir is restore_dir as the plan gave it.
	rawRestoreDir string
}

func (b *backupStep) options() scenario.BackupOptions {
	return scenario.BackupOptions{Cycles: b.Cycles, To: b.To, Method: b.Method, Jobs: b.Jobs, Interval: b.Interval,
		Restore: b.Restore, RestoreDir: b.RestoreDir, Keep: b.Keep}
}

func (b *backupStep) Prepare(p *plan.Plan) error {
	b.rawTo, b.rawRestoreDir = b.To, b.RestoreDir
	b.To, b.RestoreDir = p.Resolve(b.To), p.Resolve(b.RestoreDir)
	if err := b.options().Validate(); err != nil {
		return err
	}
	b.experiment, b.warehouses = p.Name, p.Warehouses
	return nil
}

func (b *backupStep) Describe() string {
	method := string(b.Method)
	if method == "" {
		method = "the engine's default method"
	}
	s := fmt.Sprintf("backup: %d cycle(s) with %s into %s", b.Cycles, method, b.To)
	if b.Restore {
		s += ", each restored and checked"
	}
	if b.Interval > 0 {
		s += fmt.Sprintf(", %s apart", b.Interval)
	}
	return s
}

// backupCostPerWarehouse is what one cycle takes per warehouse on a busy
// 2-core machine (10 warehouses on PostgreSQL: backup 30 s, restore 22 s,
// the check of the restored copy 70 s), rounded up.
const (
	backupSecondsPerWarehouse  = 4
	restoreSecondsPerWarehouse = 3 + 7 // the restore and its check
	backupCycleOverhead        = 10 * time.Second
)

func (b *backupStep) Estimate(p *plan.Plan, t *plan.TargetSpec) time.Duration {
	per := backupSecondsPerWarehouse
	if b.Restore {
		per += restoreSecondsPerWarehouse
	}
	cycle := time.Duration(per*b.warehouses)*time.Second + backupCycleOverhead
	return time.Duration(b.Cycles)*cycle + time.Duration(b.Cycles-1)*b.Interval
}

// CheckTarget refuses a backup whose directories oltplab would not write
// in (a system directory, a link or directory another user could change
// on the way: internal/claim), or whose cycle would not fit on the file
// systems under to and restore_dir (a backup, and a restored copy, of
// about the build's size at a time; all of them with keep).
func (b *backupStep) CheckTarget(p *plan.Plan, t *plan.TargetSpec) error {
	eng := t.Instance.Engine
	if !t.Managed() {
		eng, _ = instance.EngineOf(t.Parsed().Scheme)
	}
	if err := instance.CheckBackupDirs(eng, b.To, b.RestoreDir); err != nil {
		return err
	}
	size := scenario.BuildBytes(t.Dialect(), b.warehouses)
	copies := int64(1)
	if b.Keep {
		copies = int64(b.Cycles)
	}
	need := map[string]int64{b.To: size * copies}
	if b.Restore {
		rd := b.RestoreDir
		if rd == "" {
			rd = b.To
		}
		need[rd] += size * copies
	}
	for dir, n := range need {
		free, err := sysstat.FreeBytes(nearestExisting(dir))
		if err != nil {
			return fmt.Errorf("free space under %s: %w", dir, err)
		}
		if free < n {
			return &SpaceError{Dir: dir, NeedBytes: n, FreeBytes: free}
		}
	}
	return nil
}

// CheckRemote refuses what a backup on an agent's host cannot do: its
// directories must be that host's (absolute paths there, below its
// agent's --allow-dir roots, which the agent checks).
func (b *backupStep) CheckRemote(p *plan.Plan, t *plan.TargetSpec) error {
	if !filepath.IsAbs(b.rawTo) {
		return fmt.Errorf("to %q: want an absolute path on host %s (below one of its agent's --allow-dir roots)", b.rawTo, t.Host)
	}
	if b.rawRestoreDir != "" && !filepath.IsAbs(b.rawRestoreDir) {
		return fmt.Errorf("restore_dir %q: want an absolute path on host %s (below one of its agent's --allow-dir roots)", b.rawRestoreDir, t.Host)
	}
	return nil
}

// nearestExisting is dir, or its nearest parent that exists.
func nearestExisting(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			return d
		}
	}
}

func (b *backupStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	// A backup step that ran before (interrupted, failed) starts over
	// from its first cycle: what the earlier attempt stored no longer
	// counts.
	if x.Attempt > 1 && x.Env.Experiment != nil {
		runs, err := x.Env.Store.ListRuns(ctx, store.RunFilter{ExperimentID: x.Env.Experiment.ID, Counting: true})
		if err != nil {
			return Outcome{}, &scenario.StoreError{Op: "read the experiment's runs", Err: err}
		}
		for _, r := range runs {
			if r.ExperimentSeq == x.Env.Experiment.Seq {
				if err := x.Env.Store.SupersedeRun(ctx, r.ID, "the backup step ran again from its first cycle"); err != nil {
					return Outcome{}, &scenario.StoreError{Op: "mark a run superseded", Err: err}
				}
			}
		}
	}
	o := b.options()
	o.Label = b.experiment + "/" + x.Target.Spec.Name
	src := scenario.BackupSource{DB: x.Target.DB, Target: x.Target.Target, Instance: x.Target.Managed}
	if rm := x.Target.Remote; rm != nil {
		src.Remote = &scenario.RemoteInstance{Client: rm.Client, ID: rm.Info.ID, Host: rm.Host.Name, Secret: rm.secret}
		besideTheData(x.Env, "the backup tools ran beside the data on the database's host")
	}
	out, err := x.Env.Backup(ctx, src, o)
	oc := Outcome{RunIDs: nonZero(out.RunID)}
	for _, c := range out.Cycles {
		if c.Check != nil && c.Check.RunID != 0 {
			oc.RunIDs = append(oc.RunIDs, c.Check.RunID)
		}
	}
	if err != nil {
		return oc, err
	}
	oc.Headline = out.Backup.Headline()
	if n := out.Stats.ChecksFailed; n > 0 {
		return oc, fmt.Errorf("the restored database failed the consistency check in %d cycle(s) (result %d)", n, out.RunID)
	}
	return oc, nil
}

// Section is the backup step's part of the report: every cycle of each
// target, with what the device under the backups did meanwhile.
func (b *backupStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	t := report.Table{Title: "Backup and restore cycles",
		Note: "Each target's last stored backup run of this step. MB/s: the backup's size (restore: the restored database's size) over its time, " +
			"10^6 bytes per second. Device: the device under the backups as the kernel saw it during the backup (all I/O on it).",
		Header: []string{"Target", "Method", "Cycle", "Backup s", "Backup MB", "Backup MB/s", "Device write MB/s", "Device latency ms",
			"Restore s", "Restore MB/s", "Check"},
		Right: []bool{false, false, true, true, true, true, true, true, true, true, false}}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	var measured []backupOf
	for _, u := range rc.inOrder(rc.Units(index)) {
		runs := rc.Runs(u.Seq, store.KindBackup)
		if len(runs) == 0 || len(runs[0].Summary) == 0 {
			t.Rows = append(t.Rows, []string{u.Target, "—", "—", "—", "—", "—", "—", "—", "—", "—", string(u.State)})
			continue
		}
		sum, err := summary.DecodeBackup(runs[0].Summary)
		if err != nil {
			return report.Section{}, &scenario.StoreError{Op: fmt.Sprintf("decode backup %d", runs[0].ID), Err: err}
		}
		measured = append(measured, backupOf{u.Target, sum})
		for _, c := range sum.Cycles {
			row := []string{u.Target, string(sum.Info.Method), strconv.Itoa(c.Cycle), f(c.Backup.Seconds),
				f(float64(c.Backup.Bytes) / 1e6), f(c.Backup.MBps), "—", "—", "—", "—", "—"}
			if d := backupDevice(c.Backup.Host); d != nil {
				row[6], row[7] = f(d.WriteMBps), strconv.FormatFloat(d.LatencyMillis, 'f', 2, 64)
			}
			if r := c.Restore; r != nil && c.Failed != "restore" {
				row[8], row[9] = f(r.Seconds), f(r.MBps)
			}
			switch {
			case c.Failed != "":
				row[10] = c.Failed + " failed"
			case c.Check != nil && c.Check.Passed:
				row[10] = "passed"
			case c.Check != nil:
				row[10] = "FAILED"
			}
			t.Rows = append(t.Rows, row)
		}
	}
	sec := report.Section{Tables: []report.Table{t}}
	backupFindings(rc, &sec, measured)
	return sec, nil
}

// backupOf is one target's stored backup run.
type backupOf struct {
	target string
	sum    summary.Backup
}

// backupFindings states each target's backup and restore time and rate
// against the baseline's, and draws them: the mean of each target with
// its interval, and every cycle.
func backupFindings(rc *ReportContext, sec *report.Section, ms []backupOf) {
	if len(ms) == 0 {
		return
	}
	var base *backupOf
	if ms[0].target == rc.Order[0] {
		base = &ms[0]
	}
	clauses := map[string]string{}
	for _, m := range ms {
		st := m.sum.Stats
		if st.BackupSeconds.N == 0 {
			sec.Findings = append(sec.Findings, fmt.Sprintf("Backup: no backup of %s finished.", m.target))
			clauses[m.target] = "no backup finished"
			continue
		}
		who := m.target
		if base != nil && m.target == base.target {
			who += " (the baseline)"
		}
		s := fmt.Sprintf("Backup: %s backs up in %s at %.1f MB/s over %d cycle(s)", who, secondsWords(st.BackupSeconds), st.BackupMBps.Mean, st.BackupSeconds.N)
		clause := fmt.Sprintf("backs up in %.1f s", st.BackupSeconds.Mean)
		other := base != nil && m.target != base.target && base.sum.Stats.BackupSeconds.N > 0
		if other {
			r := profile.Ratio(st.BackupSeconds, base.sum.Stats.BackupSeconds)
			s += ", " + ratioWords(r, "cycles") + " the time of " + base.target
			clause += fmt.Sprintf(" (%.2f× %s's time)", r.Ratio, base.target)
		}
		if rs := st.RestoreSeconds; rs.N > 0 {
			s += fmt.Sprintf("; restores in %s at %.1f MB/s", secondsWords(rs), st.RestoreMBps.Mean)
			clause += fmt.Sprintf(" and restores in %.1f s", rs.Mean)
			if other && base.sum.Stats.RestoreSeconds.N > 0 {
				r := profile.Ratio(rs, base.sum.Stats.RestoreSeconds)
				s += ", " + ratioWords(r, "cycles") + " the time of " + base.target
				clause += fmt.Sprintf(" (%.2f×)", r.Ratio)
			}
		}
		if n := st.ChecksFailed; n > 0 {
			s += fmt.Sprintf("; %d RESTORED COPY(IES) FAILED THE CONSISTENCY CHECK", n)
			clause += fmt.Sprintf(", %d restored copy(ies) failing the check", n)
		}
		sec.Findings = append(sec.Findings, s+".")
		clauses[m.target] = clause
	}
	sec.Answers = answersOf(rc, clauses)
	sec.Bars = append(sec.Bars, backupMeanBars(ms), backupCycleBars(ms))
}

// backupMeanBars draws each target's mean backup and restore time, the
// whisker its 95% interval.
func backupMeanBars(ms []backupOf) report.BarChart {
	c := report.BarChart{Title: "Backup and restore time per target (s)", YLabel: "seconds", Categories: []string{"backup", "restore"},
		Note: fmt.Sprintf("Mean over the cycles; the whisker is the 95%% confidence interval of the mean (from %d cycles on).", profile.MinRepeats)}
	for _, m := range ms {
		s := report.BarSeries{Label: m.target, Values: make([]*float64, 2), Lo: make([]*float64, 2), Hi: make([]*float64, 2)}
		for i, sm := range []profile.Summary{m.sum.Stats.BackupSeconds, m.sum.Stats.RestoreSeconds} {
			if sm.N == 0 {
				continue
			}
			s.Values[i] = ptr(sm.Mean)
			if sm.HasCI() {
				s.Lo[i], s.Hi[i] = ptr(sm.CILo), ptr(sm.CIHi)
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// backupCycleBars draws every cycle's backup and restore time, one
// group per target and cycle.
func backupCycleBars(ms []backupOf) report.BarChart {
	c := report.BarChart{Title: "Backup and restore time per cycle (s)", YLabel: "seconds",
		Note: "Each cycle of each target: the backup, then the restore of that backup (n/a: it failed or was not run)."}
	b := report.BarSeries{Label: "backup"}
	r := report.BarSeries{Label: "restore"}
	restored := false
	for _, m := range ms {
		for _, cy := range m.sum.Cycles {
			c.Categories = append(c.Categories, fmt.Sprintf("%s cycle %d", m.target, cy.Cycle))
			var bv, rv *float64
			if cy.Failed != "backup" {
				bv = ptr(cy.Backup.Seconds)
			}
			if cy.Restore != nil && cy.Failed != "restore" {
				rv, restored = ptr(cy.Restore.Seconds), true
			}
			b.Values, r.Values = append(b.Values, bv), append(r.Values, rv)
		}
	}
	c.Series = []report.BarSeries{b}
	if restored {
		c.Series = append(c.Series, r)
	}
	return c
}

func ptr(x float64) *float64 { return &x }

// backupDevice is the device under the backups in a phase's summary.
func backupDevice(h *sampler.StepSummary) *sampler.DeviceSummary {
	if h == nil {
		return nil
	}
	for i, d := range h.Devices {
		if slices.Contains(d.Roles, "backup") {
			return &h.Devices[i]
		}
	}
	return nil
}
