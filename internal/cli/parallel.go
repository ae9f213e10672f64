package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/scenario"
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

// planTarget is one target of a generated plan.
type planTarget struct {
	name, url, passwordFile string
}

// resolveTargets turns --on values into named targets: URLs (named t1,
// t2, ... unless NAME=URL), or managed instances from the registry.
func (a *app) resolveTargets(cmd string, on []string) ([]planTarget, error) {
	var out []planTarget
	seen := map[string]bool{}
	for i, v := range on {
		t := planTarget{name: "t" + strconv.Itoa(i+1), url: v}
		if n, u, ok := strings.Cut(v, "="); ok && targetName.MatchString(n) && strings.Contains(u, ":") {
			t.name, t.url = n, u
		}
		if !strings.Contains(t.url, ":") {
			if !targetName.MatchString(t.url) {
				return nil, usageErrorf("%s: --on %q: want a URL, NAME=URL or a managed instance's NAME", cmd, v)
			}
			reg, err := a.registry()
			if err != nil {
				return nil, err
			}
			e, err := reg.Get(t.url)
			if errors.Is(err, instance.ErrNotRegistered) || (err == nil && (e.Stale || e.ServerPID == 0)) {
				return nil, usageErrorf("%s: --on %s: no managed instance of that name runs (see `oltplab instance list`)", cmd, t.url)
			}
			if err != nil {
				return nil, err
			}
			t.name, t.url, t.passwordFile = e.Name, e.Target, e.PasswordFile
		}
		if seen[t.name] {
			return nil, usageErrorf("%s: two targets are named %s: name them with --on NAME=URL", cmd, t.name)
		}
		seen[t.name] = true
		tg, err := dialect.ParseTarget(t.url, t.passwordFile)
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
func (a *app) schemaScale(ctx context.Context, cmd string, ts []planTarget) (int, error) {
	w := 0
	for _, t := range ts {
		tg, err := dialect.ParseTarget(t.url, t.passwordFile)
		if err != nil {
			return 0, usageErrorf("%s: %s: %v", cmd, t.name, err)
		}
		db, err := dialect.Open(ctx, tg)
		if err != nil {
			if errors.Is(err, dialect.ErrUnknownScheme) {
				return 0, usageErrorf("%s: %s: %v", cmd, t.name, err)
			}
			return 0, fmt.Errorf("target %s: %w", t.name, err)
		}
		meta, err := scenario.ReadSchema(ctx, db, tg)
		db.Close()
		if err != nil {
			return 0, fmt.Errorf("target %s: %w (build it first: oltplab build)", t.name, err)
		}
		if w != 0 && meta.Warehouses != w {
			return 0, usageErrorf("%s: %s holds %d warehouse(s), %s %d: targets measured together must be built at one scale",
				cmd, t.name, meta.Warehouses, ts[0].name, w)
		}
		w = meta.Warehouses
	}
	return w, nil
}

// writePlanTargets writes the targets section of a generated plan.
func writePlanTargets(b *strings.Builder, ts []planTarget) {
	b.WriteString("targets:\n")
	for _, t := range ts {
		fmt.Fprintf(b, "  - name: %s\n    url: %q\n", t.name, t.url)
		if t.passwordFile != "" {
			fmt.Fprintf(b, "    password_file: %q\n", t.passwordFile)
		}
	}
}

// loadFlags are the run flags a generated plan's load takes.
type loadFlags struct {
	vus       int
	driver    driver.Options
	clientSQL bool
	// phases: the step times its windows itself (no --duration).
	phases bool
}

func (l *loadFlags) register(fs *pflag.FlagSet, d driver.Options) {
	l.driver = d
	fs.IntVar(&l.vus, "vus", d.VUs, "virtual users on each target")
	fs.DurationVar(&l.driver.Rampup, "rampup", d.Rampup, "ramp-up before each measured window (executed, not measured)")
	if !l.phases {
		fs.DurationVar(&l.driver.Duration, "duration", d.Duration, "the measured window")
	}
	fs.DurationVar(&l.driver.Grace, "grace", d.Grace, "time in-flight transactions get to finish after the window (not measured)")
	fs.Uint64Var(&l.driver.Seed, "seed", 0, "random seed (default: drawn and recorded)")
	fs.BoolVar(&l.driver.AllWarehouses, "all-warehouses", false, "spread each virtual user over several warehouses")
	fs.BoolVar(&l.clientSQL, "client-sql", false, "send each statement from the client instead of calling stored procedures")
	fs.IntVar(&l.driver.MaxRetries, "max-retries", d.MaxRetries, "retries of one transaction after a serialization failure, deadlock or lock timeout")
}

// yaml writes the load options as plan fields.
func (l *loadFlags) yaml(b *strings.Builder) {
	d := l.driver
	fmt.Fprintf(b, "  vus: %d\n  rampup: %s\n  grace: %s\n", l.vus, d.Rampup, d.Grace)
	if !l.phases {
		fmt.Fprintf(b, "  duration: %s\n", d.Duration)
	}
	if d.Seed != 0 {
		fmt.Fprintf(b, "  seed: %d\n", d.Seed)
	}
	if d.AllWarehouses {
		b.WriteString("  all_warehouses: true\n")
	}
	if l.clientSQL {
		b.WriteString("  client_sql: true\n")
	}
	if d.MaxRetries != driver.Defaults().MaxRetries {
		fmt.Fprintf(b, "  max_retries: %d\n", d.MaxRetries)
	}
}

func runParallel(ctx context.Context, a *app, args []string) error {
	var (
		sf        storeFlags
		on        onFlag
		lf        loadFlags
		repeat    int
		tolerance time.Duration
		name      string
		dryRun    bool
		printPlan bool
	)
	fs := newFlagSet("parallel")
	sf.register(fs, a.env)
	fs.Var(&on, "on", "a `TARGET` to drive (repeat for each): URL, NAME=URL, or a managed instance's NAME")
	d := driver.Defaults()
	d.Rampup, d.Duration = 30*time.Second, 2*time.Minute
	lf.register(fs, d)
	fs.IntVar(&repeat, "repeat", 1, "synchronised windows, one after the other (each target's mean with its 95% CI over them)")
	fs.DurationVar(&tolerance, "skew-tolerance", time.Second, "how far apart targets' windows may start or end before the window is marked")
	fs.StringVar(&name, "name", "parallel", "the experiment's `NAME`")
	fs.BoolVar(&dryRun, "dry-run", false, "check the targets and print the schedule; run nothing")
	fs.BoolVar(&printPlan, "print-plan", false, "print the plan this command runs (to edit and run with oltplab experiment run) and stop")
	if err := a.parseFlags(fs, parallelSynopsis, args); err != nil {
		if errors.Is(err, errHelp) {
			fmt.Fprintf(a.stdio.Out, "\n%s", parallelAbout)
		}
		return helpOK(err)
	}
	if len(on) < 2 {
		return usageErrorf("parallel: want at least two targets (--on TARGET --on TARGET)")
	}
	ts, err := a.resolveTargets("parallel", on)
	if err != nil {
		return err
	}
	w, err := a.schemaScale(ctx, "parallel", ts)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# oltplab parallel: the targets driven at once with one synchronised window.\nname: %q\nwarehouses: %d\nparallel:\n", name, w)
	lf.yaml(&b)
	fmt.Fprintf(&b, "  repeat: %d\n  skew_tolerance: %s\n", repeat, tolerance)
	writePlanTargets(&b, ts)
	b.WriteString("steps: [parallel]\n")
	return a.runGeneratedPlan(ctx, "parallel", sf, b.String(), dryRun, printPlan)
}

// runGeneratedPlan decodes a plan a command wrote, checks it against the
// host and prints it, its schedule, or runs it as an experiment.
func (a *app) runGeneratedPlan(ctx context.Context, cmd string, sf storeFlags, src string, dryRun, printPlan bool) error {
	if printPlan {
		_, err := io.WriteString(a.out(), src)
		return err
	}
	p, err := experiment.Decode("("+cmd+")", []byte(src))
	if err != nil {
		var pe *experiment.PlanError
		if errors.As(err, &pe) {
			// The plan is the flags': say which, without a file and line.
			return usageErrorf("%s: %s: %v (see `oltplab %s --help`)", cmd, pe.Path, pe.Err, cmd)
		}
		return err
	}
	if err := experiment.Validate(ctx, p); err != nil {
		var pe *experiment.PlanError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s: %s: %w", cmd, pe.Path, pe.Err)
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
