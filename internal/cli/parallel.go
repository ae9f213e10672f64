package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

const parallelSynopsis = "parallel --on TARGET --on TARGET [--on TARGET ...] [--vus N] [--rampup D] [--duration D] [--repeat N] [--skew-tolerance D] [--name NAME] [--dry-run] [--print-plan]"

const parallelAbout = `Drives every target at the same time with one synchronised measured
window: each target opens its sessions, they all start together, ramp up,
and measure the same wall-clock interval; each target's NOPM and TPM come
from its own database's counters, the total is their sum. Every window
records each target's actual start and end and the skew between them,
checked against --skew-tolerance (a window above it is marked).

TARGET is a URL (postgres://..., mysql://..., sqlite:PATH), NAME=URL to
name it, or the NAME of a managed instance running under "oltplab
instance start" (its URL and password file are taken from it). Targets
hold a TPC-C schema already (oltplab build); all of the same scale.
Passwords: in a password file (a managed instance's), PGPASSWORD,
MYSQL_PWD or ~/.pgpass, so that "oltplab experiment resume" can reconnect
(a password in a URL is removed from what is stored).

The command is an experiment of one "parallel" step over the targets (see
"oltplab experiment --help"): it is stored as one, resumed with "oltplab
experiment resume ID" and drawn with "oltplab report --experiment ID".
--print-plan prints that plan instead of running it.
`

// onFlag collects repeated --on TARGET.
type onFlag []string

func (o *onFlag) String() string { return strings.Join(*o, " ") }
func (o *onFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("want a target URL, NAME=URL or a managed instance's NAME")
	}
	*o = append(*o, v)
	return nil
}
func (o *onFlag) Type() string { return "TARGET" }

var _ pflag.Value = (*onFlag)(nil)

// targetName is what may name a target (as a plan's).
var targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`)

// resolveTargets turns --on values into a plan's targets: URLs (named t1,
// t2, ... unless NAME=URL), or managed instances from the registry.
func (a *app) resolveTargets(cmd string, on []string) ([]*plan.TargetSpec, error) {
	var out []*plan.TargetSpec
	seen := map[string]bool{}
	for i, v := range on {
		t := &plan.TargetSpec{Name: "t" + strconv.Itoa(i+1), URL: v}
		if n, u, ok := strings.Cut(v, "="); ok && targetName.MatchString(n) && strings.Contains(u, ":") {
			t.Name, t.URL = n, u
		}
		if !strings.Contains(t.URL, ":") {
			if !targetName.MatchString(t.URL) {
				return nil, usageErrorf("%s: --on %q: want a URL, NAME=URL or a managed instance's NAME", cmd, v)
			}
			e, _, err := a.findInstance(t.URL)
			if errors.Is(err, instance.ErrNotRegistered) || (err == nil && (e.Stale || e.ServerPID == 0)) {
				return nil, usageErrorf("%s: --on %s: no managed instance of that name runs (see `oltplab instance list`)", cmd, t.URL)
			}
			if err != nil {
				return nil, err
			}
			t.Name, t.URL, t.PasswordFile = e.Name, e.Target, e.PasswordFile
		}
		if seen[t.Name] {
			return nil, usageErrorf("%s: two targets are named %s: name them with --on NAME=URL", cmd, t.Name)
		}
		seen[t.Name] = true
		tg, err := dialect.ParseTarget(t.URL, t.PasswordFile)
		if err != nil {
			return nil, usageErrorf("%s: --on %s: %v", cmd, v, err)
		}
		a.secrets = append(a.secrets, tg.Password)
		out = append(out, t)
	}
	return out, nil
}

// schemaScale opens each target and reads its schema: every target must
// hold one, of the same number of warehouses, which it returns.
func (a *app) schemaScale(ctx context.Context, cmd string, ts []*plan.TargetSpec) (int, error) {
	w := 0
	for _, t := range ts {
		tg, err := dialect.ParseTarget(t.URL, t.PasswordFile)
		if err != nil {
			return 0, usageErrorf("%s: %s: %v", cmd, t.Name, err)
		}
		db, err := dialect.Open(ctx, tg)
		if err != nil {
			if errors.Is(err, dialect.ErrUnknownScheme) {
				return 0, usageErrorf("%s: %s: %v", cmd, t.Name, err)
			}
			return 0, fmt.Errorf("target %s: %w", t.Name, err)
		}
		meta, err := scenario.ReadSchema(ctx, db, tg)
		db.Close()
		if err != nil {
			return 0, fmt.Errorf("target %s: %w (build it first: oltplab build)", t.Name, err)
		}
		if w != 0 && meta.Warehouses != w {
			return 0, usageErrorf("%s: %s holds %d warehouse(s), %s %d: targets measured together must be built at one scale",
				cmd, t.Name, meta.Warehouses, ts[0].Name, w)
		}
		w = meta.Warehouses
	}
	return w, nil
}

// parallelOptions are the flags of `oltplab parallel`: the targets, the
// options of the plan's one parallel step, and what to do with the plan.
type parallelOptions struct {
	results   storeFlags
	on        onFlag
	step      experiment.ParallelOptions
	name      string
	dryRun    bool
	printPlan bool
}

func (o *parallelOptions) register(fs *pflag.FlagSet, env Env) {
	o.results.register(fs, env)
	fs.Var(&o.on, "on", "a `TARGET` to drive (repeat for each): URL, NAME=URL, or a managed instance's NAME")
	o.step = experiment.DefaultParallel()
	o.step.Rampup, o.step.Duration = 30*time.Second, 2*time.Minute
	fs.IntVar(&o.step.VUs, "vus", o.step.VUs, "virtual users on each target")
	o.step.Load.RegisterFlags(fs, o.step.OmitFields()...)
	fs.Lookup("duration").Usage = "`DURATION` of each synchronised measured window"
	fs.IntVar(&o.step.Repeat, "repeat", o.step.Repeat, "synchronised windows, one after the other (each target's mean with its 95% CI over them)")
	fs.DurationVar(&o.step.SkewTolerance, "skew-tolerance", o.step.SkewTolerance, "how far apart targets' windows may start or end before the window is marked")
	fs.StringVar(&o.name, "name", "parallel", "the experiment's `NAME`")
	fs.BoolVar(&o.dryRun, "dry-run", false, "check the targets and print the schedule; run nothing")
	fs.BoolVar(&o.printPlan, "print-plan", false, "print the plan this command runs (to edit and run with oltplab experiment run) and stop")
}

// validate checks what the flags alone tell; the step's options are
// checked as the plan's (plan.Decode).
func (o *parallelOptions) validate() error {
	if len(o.on) < 2 {
		return usageErrorf("parallel: want at least two targets (--on TARGET --on TARGET)")
	}
	return nil
}

// plan is the plan o runs on targets ts built at w warehouses.
func (o *parallelOptions) plan(ts []*plan.TargetSpec, w int) *plan.File {
	return &plan.File{Comment: "# oltplab parallel: the targets driven at once with one synchronised window.",
		Name: o.name, Warehouses: w, Targets: ts, Steps: []string{"parallel"},
		Sections: []plan.Section{{Kind: "parallel", Options: o.step}}}
}

func runParallel(ctx context.Context, a *app, args []string) error {
	return parallelCmd(ctx, a, args, a.parallel)
}

// parallelCmd parses args into parallelOptions, checks them and hands
// them to run: a.parallel, or a test's function that keeps them (as gh's
// NewCmdX(f, runF) does).
func parallelCmd(ctx context.Context, a *app, args []string, run func(context.Context, *parallelOptions) error) error {
	o := &parallelOptions{}
	fs := newFlagSet("parallel")
	o.register(fs, a.env)
	if err := a.parseFlags(fs, parallelSynopsis, args); err != nil {
		if errors.Is(err, errHelp) {
			fmt.Fprintf(a.stdio.Out, "\n%s", parallelAbout)
		}
		return helpOK(err)
	}
	if err := o.validate(); err != nil {
		return err
	}
	return run(ctx, o)
}

// parallel resolves o's targets, reads their scale and runs the plan of
// one parallel step over them (or prints it, or checks it).
func (a *app) parallel(ctx context.Context, o *parallelOptions) error {
	ts, err := a.resolveTargets("parallel", o.on)
	if err != nil {
		return err
	}
	w, err := a.schemaScale(ctx, "parallel", ts)
	if err != nil {
		return err
	}
	return a.runGeneratedPlan(ctx, "parallel", o.results, o.plan(ts, w), o.dryRun, o.printPlan)
}

// runGeneratedPlan writes a plan a command built, decodes it as
// `experiment run` would read it, checks it against the host and prints
// it, its schedule, or runs it as an experiment.
func (a *app) runGeneratedPlan(ctx context.Context, cmd string, sf storeFlags, f *plan.File, dryRun, printPlan bool) error {
	src, err := f.Encode()
	if err != nil {
		return err
	}
	if printPlan {
		_, err := a.out().Write(src)
		return err
	}
	p, err := plan.Decode("("+cmd+")", src)
	if err != nil {
		var ye *yamldoc.Error
		if errors.As(err, &ye) {
			// The plan is the flags': say which, without a file and line.
			return usageErrorf("%s: %s: %v (see `oltplab %s --help`)", cmd, ye.Path, ye.Err, cmd)
		}
		return err
	}
	if err := plan.Validate(ctx, p); err != nil {
		var ye *yamldoc.Error
		if errors.As(err, &ye) {
			return fmt.Errorf("%s: %s: %w", cmd, ye.Path, ye.Err)
		}
		return err
	}
	if dryRun {
		a.printSchedule(p)
		return nil
	}
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	id, err := a.experimentRunner(st).Run(ctx, p)
	return a.experimentEnded(ctx, st, id, err)
}
