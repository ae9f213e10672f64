package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
)

const neighboursSynopsis = `neighbours --engine postgres|mariadb --data-dir DIR [--instances K] [--noisy NAMES] [--memory SIZE] [--warehouses W] [FLAGS]
       oltplab neighbours --on TARGET --on TARGET [...] --noisy NAMES [--backup-dir DIR] [FLAGS]`

const neighboursAbout = `Noisy neighbours: instances that share storage. In the baseline phase
every instance runs the TPC-C load over one synchronised window; in the
noisy phase the noisy instances stop their load and take a backup (with
the engine's own tool) every --interval, --cycles times, while the others
(the victims) run the same load over a window covering the backups. The
host is sampled every second throughout. The report gives each instance's
NOPM and TPM per phase with 95% intervals, each victim's loss against its
baseline, every backup's duration, and the shared device's IOPS and
latency over time with the phases and the backups marked.

With --engine and --data-dir, oltplab starts K managed instances itself,
n1..nK in DIR/n1..DIR/nK (so on the storage under DIR), builds
--warehouses on each and runs the scenario; the last is noisy unless
--noisy names others. With --on, it runs the scenario on databases that
are already built and running (URL, NAME=URL, or a managed instance's
NAME, as "oltplab parallel" takes them); --noisy is then required, and
--backup-dir when a noisy target is not a managed instance.

The command is an experiment of a "neighbours" step (see "oltplab
experiment --help"): stored as one, resumed with "oltplab experiment
resume ID", drawn with "oltplab report --experiment ID". --print-plan
prints that plan instead of running it.
`

// namesFlag collects a comma-separated list of names.
type namesFlag []string

func (n *namesFlag) String() string { return strings.Join(*n, ",") }
func (n *namesFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if !targetName.MatchString(s) {
			return fmt.Errorf("%q is not a target name", s)
		}
		*n = append(*n, s)
	}
	return nil
}
func (n *namesFlag) Type() string { return "NAMES" }

// neighboursOptions are the flags of `oltplab neighbours`: the managed
// instances to start (engine, dataDir, ...) or the targets already
// running (on), the options of the plan's neighbours step, and what to
// do with the plan.
type neighboursOptions struct {
	results    storeFlags
	on         onFlag
	engine     instance.Engine // after validate; engineName as given
	engineName string
	dataDir    string // absolute after validate
	instances  int
	warehouses int
	memory     instance.Size
	step       experiment.NeighboursOptions
	method     string // --backup-method, into step.Backup.Method by validate
	backupDir  string // --backup-dir, absolute into step.Backup.To by validate
	name       string
	dryRun     bool
	printPlan  bool
}

func (o *neighboursOptions) register(fs *pflag.FlagSet, env Env) {
	o.results.register(fs, env)
	fs.StringVar(&o.engineName, "engine", "", "`ENGINE` of the managed instances oltplab starts: postgres or mariadb")
	fs.StringVar(&o.dataDir, "data-dir", "", "`DIR` under which the managed instances keep their data (n1, n2, ...): the shared storage")
	fs.IntVar(&o.instances, "instances", 3, "managed instances to start, `K`")
	fs.Var(&o.memory, "memory", "each managed instance's buffer pool `SIZE` (default: the engine's)")
	fs.IntVar(&o.warehouses, "warehouses", 1, "warehouses to build on each managed instance")
	fs.Var(&o.on, "on", "a `TARGET` already built and running (repeat for each): URL, NAME=URL, or a managed instance's NAME")
	o.step = experiment.DefaultNeighbours()
	o.step.Rampup = 30 * time.Second
	fs.Var((*namesFlag)(&o.step.Noisy), "noisy", "the noisy targets, by `NAMES` (comma-separated); default with --engine: the last instance")
	fs.IntVar(&o.step.VUs, "vus", o.step.VUs, "virtual users on each target")
	o.step.Load.RegisterFlags(fs, o.step.OmitFields()...)
	fs.DurationVar(&o.step.Baseline, "baseline", o.step.Baseline, "the baseline's measured window (default: cycles × interval)")
	fs.IntVar(&o.step.Cycles, "cycles", o.step.Cycles, "backups per noisy target")
	fs.DurationVar(&o.step.Interval, "interval", o.step.Interval, "time between the starts of two backups; the noisy window lasts cycles × interval")
	fs.StringVar(&o.backupDir, "backup-dir", "", "`DIR` the backups go to, each noisy target's in DIR/NAME (default for a managed instance: NAME-backups beside its data)")
	fs.StringVar(&o.method, "backup-method", "", "backup `METHOD`: basebackup or dump (PostgreSQL), mariadb-backup (MariaDB); default: the engine's")
	fs.IntVar(&o.step.Backup.Jobs, "backup-jobs", o.step.Backup.Jobs, "parallel jobs of a dump or of mariadb-backup")
	fs.DurationVar(&o.step.SkewTolerance, "skew-tolerance", o.step.SkewTolerance, "how far apart the instances' windows may start or end before a phase is marked")
	fs.StringVar(&o.name, "name", "neighbours", "the experiment's `NAME`")
	fs.BoolVar(&o.dryRun, "dry-run", false, "check the plan and the host and print the schedule; run nothing")
	fs.BoolVar(&o.printPlan, "print-plan", false, "print the plan this command runs (to edit and run with oltplab experiment run) and stop")
}

// managed reports whether o starts its instances itself (--engine,
// --data-dir) rather than taking targets already running (--on).
func (o *neighboursOptions) managed() bool { return o.engineName != "" || o.dataDir != "" }

// validate checks what the flags alone tell and completes the step's
// options from them; the step's options are checked as the plan's
// (plan.Decode).
func (o *neighboursOptions) validate() error {
	if o.method != "" {
		if err := o.step.Backup.Method.UnmarshalText([]byte(o.method)); err != nil {
			return usageErrorf("neighbours: --backup-method: %v", err)
		}
	}
	switch {
	case o.managed() && len(o.on) > 0:
		return usageErrorf("neighbours: give --engine and --data-dir (instances oltplab starts) or --on targets, not both")
	case o.managed():
		if o.engineName == "" || o.dataDir == "" {
			return usageErrorf("neighbours: --engine and --data-dir go together (the managed instances' engine and storage)")
		}
		if err := o.engine.UnmarshalText([]byte(o.engineName)); err != nil || o.engine == instance.SQLite {
			return usageErrorf("neighbours: --engine %q: want postgres or mariadb", o.engineName)
		}
		if o.instances < 2 {
			return usageErrorf("neighbours: --instances must be at least 2 (a noisy one and a victim), got %d", o.instances)
		}
		if o.warehouses < 1 {
			return usageErrorf("neighbours: --warehouses must be at least 1, got %d", o.warehouses)
		}
		abs, err := filepath.Abs(o.dataDir)
		if err != nil {
			return usageErrorf("neighbours: --data-dir: %v", err)
		}
		o.dataDir = abs
		if len(o.step.Noisy) == 0 {
			o.step.Noisy = []string{"n" + strconv.Itoa(o.instances)}
		}
	default:
		if len(o.on) < 2 {
			return usageErrorf("neighbours: want --engine and --data-dir, or at least two --on targets (see `oltplab neighbours --help`)")
		}
		if len(o.step.Noisy) == 0 {
			return usageErrorf("neighbours: --noisy is required with --on: the targets that back up")
		}
	}
	if o.backupDir != "" {
		abs, err := filepath.Abs(o.backupDir)
		if err != nil {
			return usageErrorf("neighbours: --backup-dir: %v", err)
		}
		o.step.Backup.To = abs
	}
	return nil
}

// plan is the plan o runs: K managed instances n1..nK, built, or the
// targets ts already built at w warehouses.
func (o *neighboursOptions) plan(ts []*plan.TargetSpec, w int) *plan.File {
	f := &plan.File{Comment: "# oltplab neighbours: a baseline with every instance loaded, then backups on the noisy ones.",
		Name: o.name, Warehouses: w, Targets: ts, Steps: []string{"neighbours"}}
	if o.managed() {
		f.Warehouses, f.Targets = o.warehouses, nil
		for i := 1; i <= o.instances; i++ {
			n := "n" + strconv.Itoa(i)
			f.Targets = append(f.Targets, &plan.TargetSpec{Name: n,
				Instance: plan.InstanceSpec{Engine: o.engine, DataDir: filepath.Join(o.dataDir, n), Memory: o.memory}})
		}
		f.Sections = append(f.Sections, plan.Section{Kind: "build",
			Options: experiment.BuildOptions{Workers: min(o.warehouses, 4), Drop: true}})
		f.Steps = []string{"build", "neighbours"}
	}
	f.Sections = append(f.Sections, plan.Section{Kind: "neighbours", Options: o.step})
	return f
}

func runNeighbours(ctx context.Context, a *app, args []string) error {
	return neighboursCmd(ctx, a, args, a.neighbours)
}

// neighboursCmd parses args into neighboursOptions, checks them and hands
// them to run: a.neighbours, or a test's function that keeps them.
func neighboursCmd(ctx context.Context, a *app, args []string, run func(context.Context, *neighboursOptions) error) error {
	o := &neighboursOptions{}
	fs := newFlagSet("neighbours")
	o.register(fs, a.env)
	if err := a.parseFlags(fs, neighboursSynopsis, args); err != nil {
		if errors.Is(err, errHelp) {
			fmt.Fprintf(a.stdio.Out, "\n%s", neighboursAbout)
		}
		return helpOK(err)
	}
	if err := o.validate(); err != nil {
		return err
	}
	return run(ctx, o)
}

// neighbours runs the plan of o (or prints it, or checks it): on targets
// already running, after resolving them and reading their scale.
func (a *app) neighbours(ctx context.Context, o *neighboursOptions) error {
	var ts []*plan.TargetSpec
	w := 0
	if !o.managed() {
		var err error
		if ts, err = a.resolveTargets("neighbours", o.on); err != nil {
			return err
		}
		if w, err = a.schemaScale(ctx, "neighbours", ts); err != nil {
			return err
		}
	}
	return a.runGeneratedPlan(ctx, "neighbours", o.results, o.plan(ts, w), o.dryRun, o.printPlan)
}
