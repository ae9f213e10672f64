package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

const experimentSynopsis = `experiment run PLAN.yaml [--dry-run] [--results PATH] [--metrics-listen ADDR]
       oltplab experiment resume ID [--plan PLAN.yaml] [--results PATH]
       oltplab experiment list [--limit N] [--json]
       oltplab experiment show ID [--json]`

func experimentCommands() []command {
	return []command{
		{name: "run", run: experimentRun, summary: "run a plan file"},
		{name: "resume", run: experimentResume, summary: "continue an interrupted experiment"},
		{name: "list", run: experimentList, summary: "list stored experiments"},
		{name: "show", run: experimentShow, summary: "show an experiment's schedule and headlines"},
	}
}

func runExperiment(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usageErrorf("experiment: want a subcommand: run PLAN.yaml, resume ID, list or show ID (see `oltplab experiment --help`)")
	}
	if c, ok := findCommand(experimentCommands(), args[0]); ok {
		return c.run(ctx, a, args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		a.experimentHelp(a.stdio.Out)
		return nil
	}
	return usageErrorf("experiment: unknown subcommand %q (want run, resume, list or show)", args[0])
}

func (a *app) experimentHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: oltplab %s\n\n", experimentSynopsis)
	fmt.Fprint(w, `One plan file names the targets (database instances oltplab starts itself,
written one by one or as a matrix, and external URLs), the scale and the
steps; "experiment run" runs every step on every target, one target at a
time, and stores everything as one experiment. "--dry-run" checks the plan
and the host (binaries, directories, CPUs, devices, free space, servers)
and prints the schedule with an estimated duration, running nothing.
An interrupted experiment (Ctrl-C, a crash, a lost connection) continues
with "experiment resume ID": finished steps are skipped, an interrupted
profile keeps its complete runs and measures the rest, and runs that were
cut short never count. "oltplab report --experiment ID" draws it.

Relative paths in a plan are relative to the plan file. Steps:
`)
	for _, k := range plan.Kinds() {
		fmt.Fprintf(w, "  %-10s %s, %s\n", k.Name, k.Scope, k.Summary)
	}
	fmt.Fprintf(w, "\nA plan, with every field explained:\n\n%s", plan.Example)
}

// readPlanFile reads a plan file: a regular file of at most
// plan.MaxPlanBytes, its size checked before it is read.
func readPlanFile(cmd, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErrorf("%s: cannot read plan %s: %v", cmd, path, errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, usageErrorf("%s: cannot read plan %s: %v", cmd, path, errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() || fi.Size() > plan.MaxPlanBytes {
		return nil, usageErrorf("%s: plan %s is not a file of at most %d bytes", cmd, path, plan.MaxPlanBytes)
	}
	src, err := io.ReadAll(io.LimitReader(f, plan.MaxPlanBytes+1))
	if err != nil {
		return nil, usageErrorf("%s: cannot read plan %s: %v", cmd, path, errors.Unwrap(err))
	}
	return src, nil
}

// readPlan reads and decodes a plan file, registering its passwords.
func (a *app) readPlan(path string) (*plan.Plan, error) {
	src, err := readPlanFile("experiment", path)
	if err != nil {
		return nil, err
	}
	p, err := plan.Decode(path, src)
	if err != nil {
		return nil, err
	}
	for _, t := range p.Targets {
		a.secrets = append(a.secrets, dialect.Secret(t.Secret()))
	}
	return p, nil
}

// experimentRunOptions are the arguments of `oltplab experiment run`.
type experimentRunOptions struct {
	results       storeFlags
	plan          string // the plan file
	dryRun        bool
	metricsListen string
}

const experimentRunSynopsis = "experiment run PLAN.yaml [--dry-run] [--results PATH] [--metrics-listen ADDR]"

func (o *experimentRunOptions) register(fs *pflag.FlagSet, env Env) {
	o.results.register(fs, env)
	fs.BoolVar(&o.dryRun, "dry-run", false, "check the plan and the host and print the schedule with its estimated duration; run nothing")
	registerMetrics(fs, &o.metricsListen)
}

func experimentRun(ctx context.Context, a *app, args []string) error {
	return experimentRunCmd(ctx, a, args, a.experimentRun)
}

// experimentRunCmd parses args into experimentRunOptions and hands them
// to run: a.experimentRun, or a test's function that keeps them.
func experimentRunCmd(ctx context.Context, a *app, args []string, run func(context.Context, *experimentRunOptions) error) error {
	o := &experimentRunOptions{}
	fs := newFlagSet("experiment run")
	o.register(fs, a.env)
	pos, err := a.parseWithArgs(fs, experimentRunSynopsis, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) != 1 {
		return usageErrorf("experiment run: want exactly one plan file (see `oltplab experiment --help`)")
	}
	o.plan = pos[0]
	return run(ctx, o)
}

// experimentRun reads, checks and runs the plan o names (or prints its
// schedule).
func (a *app) experimentRun(ctx context.Context, o *experimentRunOptions) error {
	p, err := a.readPlan(o.plan)
	if err != nil {
		return err
	}
	if err := plan.Validate(ctx, p); err != nil {
		return err
	}
	if o.dryRun {
		a.printSchedule(p)
		return nil
	}
	sf := o.results
	if sf.path == "" && p.Results != "" {
		sf.path = p.Results
	}
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	lm, err := a.startMetrics("experiment run", o.metricsListen)
	if err != nil {
		return err
	}
	defer lm.close()
	r := a.experimentRunner(st)
	lm.observe(&r.Observer.Scenario)
	id, err := r.Run(ctx, p)
	return a.experimentEnded(ctx, st, id, err)
}

// experimentResumeOptions are the arguments of `oltplab experiment
// resume`.
type experimentResumeOptions struct {
	results storeFlags
	id      int64
	plan    string // --plan: the plan file, when the stored copy lacks a password
}

const experimentResumeSynopsis = "experiment resume ID [--plan PLAN.yaml] [--results PATH]"

func (o *experimentResumeOptions) register(fs *pflag.FlagSet, env Env) {
	o.results.register(fs, env)
	fs.StringVar(&o.plan, "plan", "", "the plan `FILE` the experiment started with, when its stored copy lacks a password it needs")
}

func experimentResume(ctx context.Context, a *app, args []string) error {
	return experimentResumeCmd(ctx, a, args, a.experimentResume)
}

// experimentResumeCmd parses args into experimentResumeOptions and hands
// them to run: a.experimentResume, or a test's function that keeps them.
func experimentResumeCmd(ctx context.Context, a *app, args []string, run func(context.Context, *experimentResumeOptions) error) error {
	o := &experimentResumeOptions{}
	fs := newFlagSet("experiment resume")
	o.register(fs, a.env)
	pos, err := a.parseWithArgs(fs, experimentResumeSynopsis, args)
	if err != nil {
		return helpOK(err)
	}
	if o.id, err = experimentID("experiment resume", pos); err != nil {
		return err
	}
	return run(ctx, o)
}

// experimentResume continues the experiment o names.
func (a *app) experimentResume(ctx context.Context, o *experimentResumeOptions) error {
	var src []byte
	if o.plan != "" {
		var err error
		if src, err = readPlanFile("experiment resume", o.plan); err != nil {
			return err
		}
	}
	st, err := a.openStore(ctx, o.results)
	if err != nil {
		return err
	}
	defer st.Close()
	_, p, err := experiment.Load(ctx, st, o.id, src)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return usageErrorf("experiment resume: no experiment %d (see `oltplab experiment list`)", o.id)
		}
		return err
	}
	for _, t := range p.Targets {
		a.secrets = append(a.secrets, dialect.Secret(t.Secret()))
	}
	if err := plan.Validate(ctx, p); err != nil {
		return err
	}
	err = a.experimentRunner(st).Resume(ctx, o.id, src)
	return a.experimentEnded(ctx, st, o.id, err)
}

func experimentID(cmd string, pos []string) (int64, error) {
	if len(pos) != 1 {
		return 0, usageErrorf("%s: want exactly one experiment ID (see `oltplab experiment list`)", cmd)
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErrorf("%s: %q is not an experiment ID (a positive number)", cmd, pos[0])
	}
	return id, nil
}

// experimentRunner renders an experiment's progress on stderr and its
// stored runs' headlines on stdout.
func (a *app) experimentRunner(st *store.Store) *experiment.Runner {
	ew, ow := a.errw(), a.out()
	pr := newBuildProgress(ew, isTerminal(a.stdio.Err))
	started := map[int]time.Time{}
	obs := experiment.Observer{
		Started: func(id int64, units []plan.Unit, resumed bool) {
			verb := "running"
			if resumed {
				verb = "resuming"
			}
			fmt.Fprintf(ew, "%s experiment %d: %d step(s); results in %s\n", verb, id, len(units), st.Path())
		},
		Note: func(msg string) { fmt.Fprintln(ew, msg) },
		Unit: func(e experiment.UnitEvent) {
			u := e.Unit
			where := u.TargetName()
			if where == "" {
				where = "all targets"
			}
			head := fmt.Sprintf("[%d/%d] %s: %s", u.Seq, e.Of, where, u.Step.Kind.Name)
			switch {
			case e.Skipped:
				fmt.Fprintf(ew, "%s: done before\n", head)
			case e.State == store.StepRunning:
				started[u.Seq] = time.Now()
				attempt := ""
				if e.Attempt > 1 {
					attempt = fmt.Sprintf(" (attempt %d)", e.Attempt)
				}
				fmt.Fprintf(ew, "\n%s%s: %s, about %s\n", head, attempt, u.Step.Step.Describe(), u.Estimate.Round(time.Second))
			case e.State == store.StepDone:
				pr.Finish()
				took := time.Since(started[u.Seq]).Round(time.Second)
				line := fmt.Sprintf("%s: done in %s", head, took)
				if e.Outcome.Headline != "" {
					line += ": " + e.Outcome.Headline
				}
				fmt.Fprintln(ow, line)
			default:
				pr.Finish()
				fmt.Fprintf(ew, "%s: %s\n", head, e.State)
			}
		},
		Scenario: scenario.Observer{
			Note:          func(msg string) { fmt.Fprintln(ew, "  "+msg) },
			BuildProgress: pr.Update,
			Live: func(l driver.Live) {
				if !l.Line {
					return // a gauge's update, not a line
				}
				fmt.Fprintf(ew, "    %s%6s  %-8s TPM %9.0f  NOPM %9.0f  errors %d\n",
					targetPrefix(l.Target), l.Elapsed.Round(time.Second), l.Phase, l.TPM, l.NOPM, l.Errors)
			},
			RunStored: func(r scenario.RunStored) {
				state := ""
				if r.Status != store.StatusOK {
					state = " (" + string(r.Status) + ")"
				}
				switch {
				case r.Result.ServerFailed():
					state = " (" + string(r.Status) + ": " + r.Result.ServerFailure[0] + ")"
				case len(r.Result.Contaminated) > 0:
					state = " (" + string(r.Status) + ": " + r.Result.Contaminated[0] + ")"
				}
				fmt.Fprintf(ew, "  %srun %d: %d VU(s), NOPM %s, TPM %s%s\n", targetPrefix(r.Target), r.ID, r.Result.Options.VUs,
					thousands(r.Result.NOPM), thousands(r.Result.TPM), state)
			},
		},
	}
	wait, _ := a.storeWait() // checked when the store was opened
	return &experiment.Runner{Store: st, Log: a.log, Scrub: a.scrub, ToolVersion: version(), Observer: obs, StoreWait: wait,
		NoCrossCheck: a.noCrossCheck,
		Secret:       func(s string) { a.secrets = append(a.secrets, dialect.Secret(s)) }}
}

// targetPrefix starts a progress line of one target of several, "NAME: ".
func targetPrefix(name string) string {
	if name == "" {
		return ""
	}
	return name + ": "
}

// experimentEnded says how an experiment ended and what to do next.
func (a *app) experimentEnded(ctx context.Context, st *store.Store, id int64, err error) error {
	if id == 0 {
		return err
	}
	switch {
	case err == nil:
		fmt.Fprintf(a.out(), "experiment %d finished; report: %s\n", id, a.reportHint(st, id))
		return nil
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return withCode(exitInterrupted, fmt.Errorf("interrupted: what was measured is stored; continue with `oltplab experiment resume %d`", id))
	}
	var still *experiment.StillRunningError
	if errors.As(err, &still) || errors.Is(err, experiment.ErrFinished) || errors.Is(err, experiment.ErrPlanChanged) {
		return err
	}
	if experiment.OnlyContaminated(err) {
		fmt.Fprintf(a.out(), "experiment %d finished, contaminated; report: %s\n", id, a.reportHint(st, id))
		return fmt.Errorf("experiment %d finished with contaminated runs, left out of its figures: %w", id, err)
	}
	return fmt.Errorf("experiment %d stopped: %w (after fixing it: oltplab experiment resume %d)", id, err, id)
}

// reportHint is the command that draws experiment id from st.
func (a *app) reportHint(st *store.Store, id int64) string {
	hint := fmt.Sprintf("oltplab report --experiment %d -o report.html", id)
	if def, err := store.DefaultPath(func(k string) string { return a.env[k] }); err != nil || def != st.Path() {
		hint += " --results " + st.Path()
	}
	return hint
}

// printSchedule prints a checked plan's schedule with its estimate.
func (a *app) printSchedule(p *plan.Plan) {
	w := a.out()
	scale := fmt.Sprintf("%d warehouse(s), ", p.Warehouses)
	if p.Warehouses == 0 {
		scale = "" // no step uses the TPC-C schema
	}
	fmt.Fprintf(w, "plan %s: experiment %s, %s%d target(s), baseline %s: checks passed\n\n",
		p.File, p.Name, scale, len(p.Targets), p.Baseline)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tDATABASE")
	for _, t := range p.Targets {
		fmt.Fprintf(tw, "%s\t%s\n", t.Name, t.Display())
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTARGET\tSTEP\tWHAT\tESTIMATE")
	for _, u := range p.Schedule() {
		where := u.TargetName()
		if where == "" {
			where = "all targets"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", u.Seq, where, u.Step.Kind.Name, u.Step.Step.Describe(), u.Estimate.Round(time.Second))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nestimated duration: %s, target starts included (a busy or slower machine takes longer)\n", p.Estimate().Round(time.Second))
}

func experimentList(ctx context.Context, a *app, args []string) error {
	var (
		sf     storeFlags
		limit  int
		asJSON bool
	)
	fs := newFlagSet("experiment list")
	sf.register(fs, a.env)
	fs.IntVar(&limit, "limit", 50, "at most `N` experiments, newest first (0: all)")
	fs.BoolVar(&asJSON, "json", false, "print as JSON")
	if err := a.parseFlags(fs, "experiment list [--limit N] [--json]", args); err != nil {
		return helpOK(err)
	}
	if limit < 0 {
		return usageErrorf("experiment list: --limit must be 0 (all) or more, got %d", limit)
	}
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	es, err := st.ListExperiments(ctx, limit)
	if err != nil {
		return withCode(exitStore, fmt.Errorf("list experiments: %w", err))
	}
	if asJSON {
		return writeJSON(a.out(), es)
	}
	if len(es) == 0 {
		fmt.Fprintf(a.out(), "no experiments in %s yet\n", st.Path())
		return nil
	}
	tw := tabwriter.NewWriter(a.out(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTARTED\tSTATUS\tSTEPS DONE\tPLAN")
	for _, e := range es {
		steps, err := st.ExperimentSteps(ctx, e.ID)
		if err != nil {
			return withCode(exitStore, err)
		}
		done := 0
		for _, s := range steps {
			if s.State == store.StepDone {
				done++
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%s\n", e.ID, e.Name, e.CreatedAt.Local().Format("2006-01-02 15:04:05"),
			experimentStatus(e), done, len(steps), e.PlanFile)
	}
	return tw.Flush()
}

// experimentStatus is the stored status, saying "running" only of an
// experiment whose process is alive.
func experimentStatus(e store.Experiment) string {
	if e.Status == store.StatusRunning && !experiment.OwnerAlive(e.Owner) {
		return "stopped (its process ended; resume it)"
	}
	if e.Status == store.StatusPartial {
		return "interrupted"
	}
	return string(e.Status)
}

func experimentShow(ctx context.Context, a *app, args []string) error {
	var (
		sf     storeFlags
		asJSON bool
	)
	fs := newFlagSet("experiment show")
	sf.register(fs, a.env)
	fs.BoolVar(&asJSON, "json", false, "print the experiment and its steps as JSON")
	pos, err := a.parseWithArgs(fs, "experiment show ID [--json]", args)
	if err != nil {
		return helpOK(err)
	}
	id, err := experimentID("experiment show", pos)
	if err != nil {
		return err
	}
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	e, err := st.GetExperiment(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return usageErrorf("experiment show: no experiment %d (see `oltplab experiment list`)", id)
		}
		return withCode(exitStore, err)
	}
	steps, err := st.ExperimentSteps(ctx, id)
	if err != nil {
		return withCode(exitStore, err)
	}
	var params experiment.Params
	if err := json.Unmarshal(e.Params, &params); err != nil {
		return withCode(exitStore, fmt.Errorf("decode the plan of experiment %d: %w", id, err))
	}
	if asJSON {
		return writeJSON(a.out(), map[string]any{"experiment": e, "params": params, "steps": steps})
	}
	w := a.out()
	fmt.Fprintf(w, "experiment %d: %s, %s\n", e.ID, e.Name, experimentStatus(e))
	fmt.Fprintf(w, "  plan     %s (sha256 %.12s)\n", e.PlanFile, e.PlanSHA256)
	fmt.Fprintf(w, "  started  %s\n", e.CreatedAt.Local().Format(time.RFC3339))
	if !e.EndedAt.IsZero() {
		fmt.Fprintf(w, "  ended    %s\n", e.EndedAt.Local().Format(time.RFC3339))
	}
	if e.Error != "" {
		fmt.Fprintf(w, "  error    %s\n", e.Error)
	}
	fmt.Fprintf(w, "  scale    %d warehouse(s); baseline %s\n\n", params.Warehouses, params.Baseline)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tDATABASE")
	for _, t := range params.Targets {
		fmt.Fprintf(tw, "%s\t%s\n", t.Name, t.Display)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTARGET\tSTEP\tSTATE\tATTEMPTS\tRESULT")
	for _, s := range steps {
		var oc experiment.Outcome
		if len(s.Outcome) > 0 {
			_ = json.Unmarshal(s.Outcome, &oc) // the headline is a nicety
		}
		result := oc.Headline
		if s.Error != "" {
			result = s.Error
		}
		target := s.Target
		if target == "" {
			target = "all targets"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", s.Seq, target, s.Kind, s.State, s.Attempts, strings.TrimSpace(result))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nreport: %s\n", a.reportHint(st, id))
	return nil
}
