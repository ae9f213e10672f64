package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/tpcc"
)

const runSynopsis = "run --target URL [--vus N|LIST|fib:N|pow2:N|geo:FROM:TO:F] [--rampup D] [--duration D] [--repeat N] [--label L] [--client-sql] [--json]"

// runOptions are the flags of `oltplab run`.
type runOptions struct {
	target     targetFlags
	results    storeFlags
	vus        string
	steps      []int
	repeat     int
	interleave bool
	label      string
	clientSQL  bool
	json       bool
	quiet      bool // no live lines (quickstart prints its own)
	checkpoint bool // --checkpoint-before
	reset      bool // --reset-between
	driver     driver.Options
}

func (o *runOptions) register(fs *flag.FlagSet, a *app) {
	d := driver.Defaults()
	o.driver = d
	o.target.register(fs, a.env)
	o.results.register(fs, a.env)
	fs.StringVar(&o.vus, "vus", "4", "virtual users: a number, a list `1,2,4` or a sequence fib:89, pow2:128, geo:256:1024:1.41 (each is one step)")
	fs.DurationVar(&o.driver.Rampup, "rampup", d.Rampup, "ramp-up before each measured window (executed, not measured)")
	fs.DurationVar(&o.driver.Duration, "duration", d.Duration, "measured window of each step")
	fs.DurationVar(&o.driver.Grace, "grace", d.Grace, "time in-flight transactions get to finish after the window (not measured)")
	fs.IntVar(&o.repeat, "repeat", 1, "run each step `N` times (mean, spread and 95% confidence interval per step)")
	fs.BoolVar(&o.interleave, "interleave", false, "with --repeat: run the whole sequence once per repeat, alternating direction, to spread drift")
	fs.StringVar(&o.label, "label", "", "name of this profile, for `oltplab compare` and `oltplab report` (e.g. nvme)")
	fs.Uint64Var(&o.driver.Seed, "seed", 0, "random seed (default: drawn and recorded with the result)")
	fs.BoolVar(&o.driver.AllWarehouses, "all-warehouses", false, "spread each virtual user over several warehouses (HammerDB's \"use all warehouses\")")
	fs.BoolVar(&o.clientSQL, "client-sql", false, "send each statement from the client instead of calling stored procedures")
	fs.IntVar(&o.driver.MaxRetries, "max-retries", d.MaxRetries, "retries of one transaction after a serialization failure, deadlock or lock timeout")
	fs.BoolVar(&o.checkpoint, "checkpoint-before", false, "write dirty pages and log before each step (PostgreSQL CHECKPOINT; InnoDB flush; SQLite WAL checkpoint)")
	fs.BoolVar(&o.reset, "reset-between", false, "return the database to its post-build state before each step and repeat (template copy, file copy or table copy), so repeats start equal")
	fs.BoolVar(&o.json, "json", false, "print results as JSON")
}

func (o *runOptions) validate() error {
	steps, err := profile.ParseVUs(o.vus)
	if err != nil {
		return usageErrorf("run: --vus: %v", err)
	}
	o.steps = steps
	if o.repeat < 1 {
		return usageErrorf("run: --repeat must be at least 1, got %d", o.repeat)
	}
	if err := checkLabel("run", o.label); err != nil {
		return err
	}
	if o.driver.Seed == 0 {
		o.driver.Seed = drawSeed()
	}
	if o.clientSQL {
		o.driver.Style = dialect.StyleClientSQL
	}
	d := o.driver
	d.VUs = steps[0]
	if err := d.Validate(); err != nil {
		return usageErrorf("run: %v", err)
	}
	return nil
}

func runRun(ctx context.Context, a *app, args []string) error {
	var o runOptions
	fs := newFlagSet("run")
	o.register(fs, a)
	if err := a.parseFlags(fs, runSynopsis, args); err != nil {
		return helpOK(err)
	}
	if err := o.validate(); err != nil {
		return err
	}
	return a.withTarget(ctx, o.results, o.target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
		_, err := a.profile(ctx, st, db, tg, o)
		return err
	})
}

// profileOutcome is what a profile (one or more steps, repeated) produced.
type profileOutcome struct {
	ID      int64
	Runs    []int64
	Partial bool
}

// profile runs every step and repeat of o as one stored profile.
func (a *app) profile(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, o runOptions) (profileOutcome, error) {
	meta, err := readSchema(ctx, db, tg)
	if err != nil {
		return profileOutcome{}, err
	}
	if o.driver.Style == dialect.StyleProcedures && (!db.Caps().Procedures || !meta.Procedures) {
		// The dialect (SQLite) or this build has no stored procedures.
		o.driver.Style = dialect.StyleClientSQL
	}
	h, err := newHygiene(ctx, db, tg, o)
	if err != nil {
		return profileOutcome{}, err
	}
	rc := a.gatherContext(ctx, db, tg, &meta)
	params := map[string]any{
		"checkpoint_before": o.checkpoint, "reset_between": o.reset,
		"vus": o.steps, "vus_spec": o.vus, "repeat": o.repeat, "interleave": o.interleave,
		"rampup_seconds": o.driver.Rampup.Seconds(), "duration_seconds": o.driver.Duration.Seconds(),
		"grace_seconds": o.driver.Grace.Seconds(), "seed": o.driver.Seed, "style": o.driver.Style.String(),
		"all_warehouses": o.driver.AllWarehouses, "max_retries": o.driver.MaxRetries,
		"warehouses": meta.Warehouses, "dialect": db.Name(), "target": tg.String(),
		"mode": "tproc-c (no keying or think time)",
	}
	pid, err := st.CreateProfile(ctx, store.Profile{Label: o.label, Params: mustJSON(params), Context: mustJSON(rc)})
	if err != nil {
		return profileOutcome{}, withCode(exitStore, fmt.Errorf("record the profile: %w", err))
	}
	out := profileOutcome{ID: pid}
	slots := profile.Order(len(o.steps), o.repeat, o.interleave)
	var results []*driver.Result
	var runErr error
	for i, slot := range slots {
		vus := o.steps[slot.Step]
		d := o.driver
		d.VUs = vus
		// Each repeat draws its own streams, reproducibly from the seed.
		d.Seed = o.driver.Seed + uint64(i)
		if len(slots) > 1 && !o.json {
			fmt.Fprintf(a.errw(), "step %d/%d: %d virtual user(s), repeat %d/%d\n", i+1, len(slots), vus, slot.Repeat+1, o.repeat)
		}
		prep, err := h.before(ctx, i > 0)
		if err != nil {
			runErr = err
			break
		}
		id, res, err := a.timedRun(ctx, st, db, tg, meta, d, rc, pid, slot, o, prep)
		if id != 0 {
			out.Runs = append(out.Runs, id)
		}
		if res != nil {
			results = append(results, res)
			if res.Partial {
				out.Partial = true
			}
		}
		if err != nil || ctx.Err() != nil {
			runErr = err
			break
		}
	}
	if err := h.finish(context.WithoutCancel(ctx)); err != nil && runErr == nil {
		runErr = err
	}
	status := store.StatusOK
	switch {
	case runErr != nil && len(results) == 0:
		status = store.StatusFailed
	case runErr != nil || out.Partial || ctx.Err() != nil:
		status = store.StatusPartial
	}
	var saved *store.SavedError
	if errors.As(runErr, &saved) {
		// The store did not take the last run: it will not take this
		// either. The profile is marked abandoned once this process ends.
		return out, runErr
	}
	if err := st.FinishProfile(context.WithoutCancel(ctx), pid, status); err != nil {
		return out, withCode(exitStore, errors.Join(runErr, fmt.Errorf("record the profile result: %w", err)))
	}
	if len(slots) > 1 && !o.json && len(results) > 0 {
		if err := a.printProfileSummary(ctx, st, pid); err != nil {
			return out, err
		}
	}
	if runErr != nil {
		return out, runErr
	}
	if ctx.Err() != nil {
		return out, withCode(exitInterrupted, errors.New("interrupted: what was measured is stored, marked partial"))
	}
	return out, nil
}

// timedRun runs one step once and stores it.
func (a *app) timedRun(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, meta tpcc.Meta,
	d driver.Options, rc runContext, pid int64, slot profile.Slot, o runOptions, prep preparation) (int64, *driver.Result, error) {
	seed := int64(d.Seed)
	id, err := st.CreateRun(ctx, store.Run{
		Kind: store.KindRun, Label: o.label, ProfileID: pid, Step: slot.Step + 1, Repeat: slot.Repeat + 1, VUs: d.VUs,
		Target: tg.String(), Dialect: db.Name(), ToolVersion: version(), Seed: &seed,
		Params: mustJSON(map[string]any{"driver": d, "preparation": prep}), Context: mustJSON(rc),
	})
	if err != nil {
		return 0, nil, withCode(exitStore, fmt.Errorf("record the run: %w", err))
	}
	var live func(driver.Live)
	if !o.quiet {
		ew := a.errw()
		live = func(l driver.Live) {
			fmt.Fprintf(ew, "  %6s  %-8s TPM %9.0f  NOPM %9.0f  errors %d\n",
				l.Elapsed.Round(time.Second), l.Phase, l.TPM, l.NOPM, l.Errors)
		}
	}
	smp := a.startSampling(ctx, db, tg, rc, time.Second)
	res, rerr := driver.Run(ctx, db, meta, d, live)
	var mon *monitorSummary
	var hostSamples []store.Sample
	if res != nil && !res.Window.Start.IsZero() {
		// Host and database samples share the driver's time axis: t = 0 is
		// the start of the measured window.
		smp.SetStart(res.Window.Start)
		m, samples := stopSampling(smp, time.Duration(res.Window.Seconds*float64(time.Second)))
		mon, hostSamples = &m, samples
	} else {
		smp.Stop()
	}

	fctx := context.WithoutCancel(ctx)
	status := store.StatusOK
	errText := ""
	switch {
	case rerr != nil && res == nil:
		status = store.StatusFailed
	case rerr != nil || (res != nil && res.Partial):
		status = store.StatusPartial
	}
	if rerr != nil {
		errText = a.scrub(rerr.Error())
	}
	out := store.Outcome{Status: status, Error: errText}
	if res != nil {
		out.Histograms = map[string]*hdrhistogram.Histogram{}
		for k, h := range res.Histograms() {
			out.Histograms[k.String()] = h
		}
		if len(res.Series) > 0 {
			out.Samples = append(workloadSamples(res), hostSamples...)
		}
		out.Summary = mustJSON(runSummary{Result: res, Monitor: mon})
		// What was measured is printed first: a store that cannot take it
		// must not cost the user the result (storeOutcome).
		if o.json {
			if err := writeJSON(a.out(), map[string]any{"run_id": id, "profile_id": pid, "status": status, "result": res, "monitor": mon}); err != nil {
				return id, res, err
			}
		} else {
			a.printRunResult(res, id, tg)
			if mon != nil {
				a.printMonitorSummary(*mon)
			}
		}
	}
	if err := a.storeOutcome(fctx, st, id, out); err != nil {
		return id, res, withCode(exitStore, errors.Join(rerr, err))
	}
	if res != nil && !o.json {
		fmt.Fprintf(a.out(), "stored as run %d in %s\n", id, st.Path())
	}
	if rerr != nil {
		code := exitRunFailed
		if c := exitCode(rerr); c != exitFailure {
			code = c
		}
		return id, res, withCode(code, fmt.Errorf("run: %w (what was measured is stored as run %d, marked %s)", rerr, id, status))
	}
	return id, res, nil
}

// runSummary is what a run stores as its summary: the driver's result and,
// beside it, what the samplers saw in the measured window.
type runSummary struct {
	*driver.Result
	Monitor *monitorSummary `json:"monitor,omitempty"`
}

// workloadSamples turns the per-second series into stored samples.
func workloadSamples(res *driver.Result) []store.Sample {
	out := make([]store.Sample, 0, len(res.Series)*5)
	for _, s := range res.Series {
		t := s.T.Milliseconds()
		add := func(metric string, v float64) {
			out = append(out, store.Sample{TMillis: t, Source: store.SourceWorkload, Metric: metric, Value: v})
		}
		add("tpm", s.TPM)
		add("nopm", s.NOPM)
		add("errors", float64(s.Errors))
		add("p50_ms", float64(s.P50Micros)/1000)
		add("p99_ms", float64(s.P99Micros)/1000)
	}
	return out
}
