package cli

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

func runNeighbours(ctx context.Context, a *app, args []string) error {
	var (
		sf                       storeFlags
		on                       onFlag
		noisy                    namesFlag
		lf                       loadFlags
		engine, dataDir          string
		instances, warehouses    int
		memory                   instance.Size
		baseline, interval, skew time.Duration
		cycles, jobs             int
		backupDir, method, name  string
		dryRun, printPlan        bool
	)
	fs := newFlagSet("neighbours")
	sf.register(fs, a.env)
	fs.StringVar(&engine, "engine", "", "`ENGINE` of the managed instances oltplab starts: postgres or mariadb")
	fs.StringVar(&dataDir, "data-dir", "", "`DIR` under which the managed instances keep their data (n1, n2, ...): the shared storage")
	fs.IntVar(&instances, "instances", 3, "managed instances to start, `K`")
	fs.Var(&memory, "memory", "each managed instance's buffer pool `SIZE` (default: the engine's)")
	fs.IntVar(&warehouses, "warehouses", 1, "warehouses to build on each managed instance")
	fs.Var(&on, "on", "a `TARGET` already built and running (repeat for each): URL, NAME=URL, or a managed instance's NAME")
	fs.Var(&noisy, "noisy", "the noisy targets, by `NAMES` (comma-separated); default with --engine: the last instance")
	d := driver.Defaults()
	d.Rampup = 30 * time.Second
	lf.phases = true // each phase has its own window
	lf.register(fs, d)
	fs.DurationVar(&baseline, "baseline", 0, "the baseline's measured window (default: cycles × interval)")
	fs.IntVar(&cycles, "cycles", 10, "backups per noisy target")
	fs.DurationVar(&interval, "interval", 100*time.Second, "time between the starts of two backups; the noisy window lasts cycles × interval")
	fs.StringVar(&backupDir, "backup-dir", "", "`DIR` the backups go to, each noisy target's in DIR/NAME (default for a managed instance: NAME-backups beside its data)")
	fs.StringVar(&method, "backup-method", "", "backup `METHOD`: basebackup or dump (PostgreSQL), mariadb-backup (MariaDB); default: the engine's")
	fs.IntVar(&jobs, "backup-jobs", 0, "parallel jobs of a dump or of mariadb-backup")
	fs.DurationVar(&skew, "skew-tolerance", time.Second, "how far apart the instances' windows may start or end before a phase is marked")
	fs.StringVar(&name, "name", "neighbours", "the experiment's `NAME`")
	fs.BoolVar(&dryRun, "dry-run", false, "check the plan and the host and print the schedule; run nothing")
	fs.BoolVar(&printPlan, "print-plan", false, "print the plan this command runs (to edit and run with oltplab experiment run) and stop")
	if err := a.parseFlags(fs, neighboursSynopsis, args); err != nil {
		if errors.Is(err, errHelp) {
			fmt.Fprintf(a.stdio.Out, "\n%s", neighboursAbout)
		}
		return helpOK(err)
	}
	if method != "" {
		var m instance.BackupMethod
		if err := m.UnmarshalText([]byte(method)); err != nil {
			return usageErrorf("neighbours: --backup-method: %v", err)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# oltplab neighbours: a baseline with every instance loaded, then backups on the noisy ones.\nname: %q\n", name)
	var ts []planTarget
	managed := engine != "" || dataDir != ""
	switch {
	case managed && len(on) > 0:
		return usageErrorf("neighbours: give --engine and --data-dir (instances oltplab starts) or --on targets, not both")
	case managed:
		if engine == "" || dataDir == "" {
			return usageErrorf("neighbours: --engine and --data-dir go together (the managed instances' engine and storage)")
		}
		var e instance.Engine
		if err := e.UnmarshalText([]byte(engine)); err != nil || e == instance.SQLite {
			return usageErrorf("neighbours: --engine %q: want postgres or mariadb", engine)
		}
		if instances < 2 {
			return usageErrorf("neighbours: --instances must be at least 2 (a noisy one and a victim), got %d", instances)
		}
		if warehouses < 1 {
			return usageErrorf("neighbours: --warehouses must be at least 1, got %d", warehouses)
		}
		abs, err := filepath.Abs(dataDir)
		if err != nil {
			return usageErrorf("neighbours: --data-dir: %v", err)
		}
		if len(noisy) == 0 {
			noisy = namesFlag{"n" + strconv.Itoa(instances)}
		}
		fmt.Fprintf(&b, "warehouses: %d\nbuild: {workers: %d, drop: true}\n", warehouses, min(warehouses, 4))
		b.WriteString("targets:\n")
		for i := 1; i <= instances; i++ {
			fmt.Fprintf(&b, "  - name: n%d\n    engine: %s\n    data_dir: %q\n", i, e, filepath.Join(abs, "n"+strconv.Itoa(i)))
			if memory != 0 {
				fmt.Fprintf(&b, "    memory: %s\n", memory)
			}
		}
	default:
		if len(on) < 2 {
			return usageErrorf("neighbours: want --engine and --data-dir, or at least two --on targets (see `oltplab neighbours --help`)")
		}
		if len(noisy) == 0 {
			return usageErrorf("neighbours: --noisy is required with --on: the targets that back up")
		}
		var err error
		if ts, err = a.resolveTargets("neighbours", on); err != nil {
			return err
		}
		w, err := a.schemaScale(ctx, "neighbours", ts)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "warehouses: %d\n", w)
		writePlanTargets(&b, ts)
	}
	b.WriteString("neighbours:\n")
	fmt.Fprintf(&b, "  noisy: [%s]\n", strings.Join(slices.Clone(noisy), ", "))
	lf.yaml(&b)
	if baseline > 0 {
		fmt.Fprintf(&b, "  baseline: %s\n", baseline)
	}
	fmt.Fprintf(&b, "  cycles: %d\n  interval: %s\n  skew_tolerance: %s\n", cycles, interval, skew)
	if backupDir != "" || method != "" || jobs != 0 {
		b.WriteString("  backup:\n")
		if backupDir != "" {
			abs, err := filepath.Abs(backupDir)
			if err != nil {
				return usageErrorf("neighbours: --backup-dir: %v", err)
			}
			fmt.Fprintf(&b, "    to: %q\n", abs)
		}
		if method != "" {
			fmt.Fprintf(&b, "    method: %s\n", method)
		}
		if jobs != 0 {
			fmt.Fprintf(&b, "    jobs: %d\n", jobs)
		}
	}
	if managed {
		b.WriteString("steps: [build, neighbours]\n")
	} else {
		b.WriteString("steps: [neighbours]\n")
	}
	return a.runGeneratedPlan(ctx, "neighbours", sf, b.String(), dryRun, printPlan)
}
