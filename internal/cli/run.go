package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/report"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

const runSynopsis = "run --target URL [--mode tproc-c|tpc-c] [--vus N|LIST|fib:N|pow2:N|geo:FROM:TO:F] [--rate R] [--terminals N|LIST] [--sessions N] [--rampup D] [--duration D] [--repeat N|auto [--precision P%]] [--label L] [--client-sql] [--json] [--metrics-listen ADDR] [--shard I/N [--start-at TIME] [--shard-group NAME] [--shard-wait D]]"

// defaultVUs is the virtual users of a tproc-c run without --vus.
const defaultVUs = "4"

// runOptions are the flags of `oltplab run`.
type runOptions struct {
	// include is what the printed summary counts besides ok runs (the
	// quickstart counts contaminated ones, labelled).
	include   report.Include
	target    targetFlags
	results   storeFlags
	mode      string
	vus       string
	terminals string
	vusGiven  bool // --vus was given, not defaulted
	steps     []int
	repeat    plan.Repeat
	// adaptive is --precision, --min-repeats and --max-repeats: the
	// stopping rule of --repeat auto; adaptiveGiven: one was given.
	adaptive      plan.Adaptive
	adaptiveGiven bool
	interleave    bool
	label         string
	json          bool
	quiet         bool // no live lines (quickstart prints its own)
	checkpoint    bool // --checkpoint-before
	reset         bool // --reset-between
	// terminateSessions: --terminate-sessions
	terminateSessions bool
	agent             agentFlags // --agent: oltplab agent on the database's host
	metricsListen     string     // --metrics-listen (run only)
	shard             string     // --shard I/N (run only)
	startAt           string     // --start-at TIME (run only)
	shardGroup        string     // --shard-group NAME (run only)
	shardWait         time.Duration
	rendezvousTimeout time.Duration
	metrics           *liveMetrics
	// load holds the options a plan's profile step shares (plan.Load);
	// driver the run's own (mode, rate, sessions, answer timeout), and
	// after validate all of them.
	load   plan.Load
	driver driver.Options
}

func (o *runOptions) register(fs *pflag.FlagSet, a *app) {
	d := driver.Defaults()
	o.driver, o.load = d, plan.DefaultLoad()
	o.target.register(fs, a.env)
	o.results.register(fs, a.env)
	fs.StringVar(&o.mode, "mode", driver.ModeTPROCC.String(), "`MODE`: tproc-c, virtual users back to back (or at --rate), NOPM and TPM; or tpc-c, terminals with the specification's keying and think times, deferred Delivery, response-time constraints, tpmC")
	fs.StringVar(&o.vus, "vus", defaultVUs, "`VUS` (tproc-c): a number, a list 1,2,4 or a sequence fib:89, pow2:128, geo:256:1024:1.41 of virtual users (each is one step)")
	fs.Float64Var(&o.driver.Rate, "rate", 0, "`RATE` (tproc-c): pace each virtual user at RATE transactions per second, at most 100000 (latency counts from each scheduled start); 0: back to back")
	fs.StringVar(&o.terminals, "terminals", "", "`TERMINALS` (tpc-c): a number or a sequence as --vus (default: 10 per warehouse, the only count whose figure may be called tpmC; any other is labelled non-conforming)")
	fs.IntVar(&o.driver.Sessions, "sessions", 0, fmt.Sprintf("`N` (tpc-c): sessions the terminals share, each held only while a transaction runs (default: one per terminal, at most %d)", driver.DefaultSessionsMax))
	fs.IntVar(&o.driver.DeliverySessions, "delivery-sessions", 0, fmt.Sprintf("`N` (tpc-c): sessions that execute the deferred Deliveries (default: one per %d terminals)", driver.DeliveryTerminalsPerSession))
	o.load.RegisterFlags(fs)
	o.repeat, o.adaptive = plan.Repeat{N: 1}, plan.DefaultAdaptive()
	fs.Var(&o.repeat, "repeat", "run each step `N` times, 3 or more (mean, spread and 95% confidence interval per step, from 3 runs on: "+
		"two give none), or auto: until the 95% interval of the step's mean NOPM is within --precision, at least --min-repeats "+
		"and at most --max-repeats runs (Kalibera and Jones's precision, decided as the runs come: see README, \"Repeats that adapt\")")
	fs.Var(&o.adaptive.Precision, "precision", "with --repeat auto: the widest 95% interval accepted, as a `PERCENT` of the mean")
	fs.IntVar(&o.adaptive.MinRepeats, "min-repeats", o.adaptive.MinRepeats, "with --repeat auto: the fewest runs of a step, `N` at least 3")
	fs.IntVar(&o.adaptive.MaxRepeats, "max-repeats", o.adaptive.MaxRepeats, "with --repeat auto: the most runs of a step (`N`), the budget")
	fs.BoolVar(&o.interleave, "interleave", false, "with --repeat: run the whole sequence once per repeat, alternating direction, to spread drift")
	fs.StringVar(&o.label, "label", "", "`NAME` of this profile, for oltplab compare and oltplab report (e.g. nvme)")
	fs.DurationVar(&o.driver.AnswerTimeout, "answer-timeout", d.AnswerTimeout,
		"`DURATION` a call may wait for the server's answer before its connection is taken for dead (a path gone silent "+
			"without closing) and reopened as after a lost one, the outage recorded; 0: never")
	fs.BoolVar(&o.checkpoint, "checkpoint-before", false, "write dirty pages and log before each step (PostgreSQL CHECKPOINT; InnoDB flush; SQLite WAL checkpoint)")
	fs.BoolVar(&o.reset, "reset-between", false,
		"return the database to its post-build state before each step and repeat, so repeats start equal. Needs a database "+
			"fresh from oltplab build (no run since). Keeps a full copy of it while the profile runs (PostgreSQL and MariaDB: "+
			"database DB_oltplab_base; SQLite: FILE.oltplab-base), after checking the free space when the database is on this "+
			"machine; the copy is dropped at the end (oltplab clean --target URL removes one left behind). The copy carries "+
			"oltplab's mark: a database or file of that name without it is the user's and is never replaced or dropped. PostgreSQL copies "+
			"need the database to itself: other sessions make the reset fail, naming them (see --terminate-sessions)")
	fs.BoolVar(&o.terminateSessions, "terminate-sessions", false,
		"with --reset-between on PostgreSQL: end the other sessions of the same database user on the database before each reset (never another user's); without it oltplab ends none")
	fs.BoolVar(&o.json, "json", false, "print results as JSON")
	registerAgent(fs, &o.agent)
}

// agentFlags are --agent and how to trust it.
type agentFlags struct{ addr, fingerprint, tokenFile string }

// registerAgent adds --agent to a command that samples the host.
func registerAgent(fs *pflag.FlagSet, v *agentFlags) {
	fs.StringVar(&v.addr, "agent", "", "`HOST:PORT` of an oltplab agent running on the database's host, when that is another machine: "+
		"its CPU, memory and disks are measured too (start it there with: oltplab agent --listen :7300 --token-file FILE)")
	fs.StringVar(&v.fingerprint, "agent-fingerprint", "", "the `SHA256` fingerprint of the agent's certificate, as the agent prints it when it starts (required off loopback)")
	fs.StringVar(&v.tokenFile, "agent-token-file", "", "`FILE` holding the agent's token on its first line (or set OLTPLAB_AGENT_TOKEN)")
}

// client is the agent the flags name (zero without --agent).
func (f agentFlags) client(a *app) (agent.Client, error) {
	if f.addr == "" {
		return agent.Client{}, nil
	}
	c := agent.Client{Addr: f.addr, Fingerprint: f.fingerprint}
	switch {
	case f.tokenFile != "":
		tok, err := agent.ReadToken(f.tokenFile)
		if err != nil {
			return c, usageErrorf("--agent-token-file: %v", err)
		}
		c.Token = tok
	case a.env["OLTPLAB_AGENT_TOKEN"] != "":
		tok, err := agent.CheckToken(a.env["OLTPLAB_AGENT_TOKEN"], "OLTPLAB_AGENT_TOKEN")
		if err != nil {
			return c, usageErrorf("%v", err)
		}
		c.Token = tok
	}
	return c, nil
}

func (o *runOptions) validate() error {
	if err := o.driver.Mode.UnmarshalText([]byte(o.mode)); err != nil {
		return usageErrorf("run: --mode: %v", err)
	}
	if err := o.parseSteps(); err != nil {
		return err
	}
	steps := o.steps
	if o.adaptiveGiven && !o.repeat.Auto {
		return usageErrorf("run: --precision, --min-repeats and --max-repeats go with --repeat auto")
	}
	if err := o.adaptive.Validate(o.repeat); err != nil {
		return usageErrorf("run: --repeat auto: %v", err)
	}
	if o.repeat.Auto && (o.driver.Shard.Active() || o.startAt != "") {
		return usageErrorf("run: --repeat auto decides each step's runs as they come; shards need a number of repeats they share")
	}
	if err := profile.CheckSlots(len(steps), o.runs()); err != nil {
		return usageErrorf("run: --vus and --repeat: %v", err)
	}
	if o.terminateSessions && !o.reset {
		return usageErrorf("run: --terminate-sessions goes with --reset-between")
	}
	if err := checkLabel("run", o.label); err != nil {
		return err
	}
	if o.load.Seed == 0 {
		o.load.Seed = drawSeed()
	}
	o.load.ApplyTo(&o.driver)
	d := o.driver
	if d.Mode == driver.ModeTPCC {
		d.Terminals = steps[0]
	} else {
		d.VUs = steps[0]
	}
	d.Shard = driver.Shard{} // split per step, once the warehouses are known
	if err := d.Validate(); err != nil {
		return usageErrorf("run: %v", err)
	}
	return nil
}

// runs is the most runs of each step: --repeat, or auto's budget.
func (o *runOptions) runs() int { return o.adaptive.Runs(o.repeat) }

// parseSteps reads the users of each step: virtual users (tproc-c) or
// terminals (tpc-c, 0 for ten per warehouse), refusing the flags of the
// other mode.
func (o *runOptions) parseSteps() error {
	var err error
	if o.driver.Mode == driver.ModeTPCC {
		if o.vusGiven {
			return usageErrorf("run: --vus belongs to the tproc-c mode; tpc-c runs --terminals (default 10 per warehouse)")
		}
		if o.terminals == "" {
			o.steps = []int{0}
			return nil
		}
		if o.steps, err = profile.ParseVUs(o.terminals); err != nil {
			return usageErrorf("run: --terminals: %v", err)
		}
		return nil
	}
	if o.terminals != "" || o.driver.Sessions != 0 || o.driver.DeliverySessions != 0 {
		return usageErrorf("run: --terminals, --sessions and --delivery-sessions belong to --mode tpc-c")
	}
	if o.steps, err = profile.ParseVUs(o.vus); err != nil {
		return usageErrorf("run: --vus: %v", err)
	}
	return nil
}

func runRun(ctx context.Context, a *app, args []string) error {
	var o runOptions
	fs := newFlagSet("run")
	o.register(fs, a)
	registerMetrics(fs, &o.metricsListen)
	fs.StringVar(&o.shard, "shard", "", "`I/N`: be shard I (from 0) of N drivers sharing the run, e.g. on N hosts or as a Kubernetes Indexed Job "+
		"(JOB_COMPLETION_INDEX): drive 1/N of each step's virtual users with home warehouses in the I-th of N ranges. Each shard stores "+
		"its own result; with --start-at or --shard-group, shard 0 reads the database-wide counters for the shared window, waits for the others "+
		"(--shard-wait) and stores their merge as one profile of the same label (histograms added, NOPM from the database; "+
		"a shard that stored no result makes it partial, exit 21)")
	registerShardFlags(fs, &o)
	if err := a.parseFlags(fs, runSynopsis, args); err != nil {
		return helpOK(err)
	}
	o.vusGiven = fs.Changed("vus")
	o.adaptiveGiven = fs.Changed("precision") || fs.Changed("min-repeats") || fs.Changed("max-repeats")
	if o.shard != "" {
		sh, err := driver.ParseShard(o.shard)
		if err != nil {
			return usageErrorf("run: --shard: %v", err)
		}
		if o.reset {
			return usageErrorf("run: --shard and --reset-between do not go together: each shard would reset the database under the others")
		}
		if o.driver.Mode == driver.ModeTPCC {
			return usageErrorf("run: --shard splits the virtual users of the tproc-c mode; it does not split tpc-c terminals yet")
		}
		o.driver.Shard = sh
	}
	if err := o.shardStart(time.Now(), fs.Changed("seed")); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	// A wrong --metrics-listen fails before any database work.
	lm, err := a.startMetrics("run", o.metricsListen)
	if err != nil {
		return err
	}
	defer lm.close()
	o.metrics = lm
	return a.withTarget(ctx, o.results, o.target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
		if lm != nil {
			lm.m.Profile(o.label, db.Name())
		}
		out, err := a.profile(ctx, st, db, tg, o)
		if o.driver.Shard.Active() && o.driver.Shard.Index == 0 && o.shardGroup != "" && out.Measured && ctx.Err() == nil {
			return errors.Join(err, a.mergeShards(ctx, st, o))
		}
		return err
	})
}

// scenarioOptions turns the flags into the profile scenario's options.
func (o runOptions) scenarioOptions() scenario.ProfileOptions {
	spec := o.vus
	if o.driver.Mode == driver.ModeTPCC {
		spec = o.terminals
	}
	so := scenario.ProfileOptions{
		Label: o.label, Steps: o.steps, VUsSpec: spec, Repeat: o.runs(), Interleave: o.interleave,
		Checkpoint: o.checkpoint, Reset: o.reset, TerminateSessions: o.terminateSessions, Driver: o.driver,
		ShardGroup: o.shardGroup,
	}
	if o.repeat.Auto {
		so.Adaptive = &scenario.AdaptiveOptions{Rule: o.adaptive.Rule()}
	}
	return so
}

// profile runs every step and repeat of o as one stored profile, printing
// each run as it is stored and, for more than one run, the profile's
// statistics at the end.
func (a *app) profile(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, o runOptions) (scenario.ProfileOutcome, error) {
	var printErr error
	obs := scenario.Observer{
		// What was measured is printed before it is stored: a store that
		// cannot take it must not cost the user the result.
		RunMeasured: func(r scenario.RunStored) {
			if o.json {
				if err := writeJSON(a.out(), map[string]any{"run_id": r.ID, "profile_id": r.ProfileID, "status": r.Status,
					"result": r.Result, "monitor": r.Monitor}); err != nil && printErr == nil {
					printErr = err
				}
				return
			}
			a.printRunResult(r.Result, r.ID, tg)
			if r.Monitor != nil {
				a.printMonitorSummary(*r.Monitor)
			}
		},
		RunStored: func(r scenario.RunStored) {
			if !o.json {
				fmt.Fprintf(a.out(), "stored as run %d in %s\n", r.ID, r.StorePath)
			}
		},
	}
	if !o.json {
		ew := a.errw()
		obs.Note = func(msg string) { fmt.Fprintln(ew, msg) }
	}
	if !o.quiet {
		ew := a.errw()
		obs.Live = func(l driver.Live) {
			if !l.Line {
				return // a gauge's update, not a line
			}
			fmt.Fprintf(ew, "  %6s  %-8s TPM %9.0f  NOPM %9.0f  errors %d\n",
				l.Elapsed.Round(time.Second), l.Phase, l.TPM, l.NOPM, l.Errors)
		}
	}
	o.metrics.observe(&obs)
	env := a.scenarioEnv(st, obs)
	ac, aerr := o.agent.client(a)
	if aerr != nil {
		return scenario.ProfileOutcome{}, aerr
	}
	env.Agent = ac
	so := o.scenarioOptions()
	so.Rendezvous = o.rendezvous(env)
	out, err := env.Profile(ctx, db, tg, so)
	if len(o.steps)*o.runs() > 1 && !o.json && out.Measured {
		// The profile is stored: its statistics print even after Ctrl-C.
		if perr := a.printProfileSummary(context.WithoutCancel(ctx), st, out.ID, o.include); perr != nil {
			return out, errors.Join(err, perr)
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return out, withCode(exitInterrupted, errors.New("interrupted: what was measured is stored, marked partial"))
		}
		return out, err
	}
	return out, printErr
}

// registerShardFlags adds the flags of a sharded run's shared start.
func registerShardFlags(fs *pflag.FlagSet, o *runOptions) {
	fs.StringVar(&o.startAt, "start-at", "", "`TIME` (RFC 3339, e.g. 2026-11-25T10:00:00Z): the wall-clock instant every shard starts its ramp-up; "+
		"the measured window is TIME+rampup to TIME+rampup+duration on every shard (each later step and repeat "+
		"ramps up ramp-up+duration+grace+10s after the previous one). At most 24 h ahead; a time passed exits 20")
	fs.StringVar(&o.shardGroup, "shard-group", "", "`NAME` shared by the shards of one run, to find each other in the results store (default: LABEL@TIME). "+
		"Without --start-at the shards meet there: each records its arrival, waits for all N (--rendezvous-timeout; exit 22 when they "+
		"do not come) and all start their ramp-up 10 s after the last arrival")
	fs.DurationVar(&o.rendezvousTimeout, "rendezvous-timeout", 10*time.Minute, "`DURATION` a shard waits at the rendezvous (--shard-group without --start-at) for the others")
	fs.DurationVar(&o.shardWait, "shard-wait", 2*time.Minute, "`DURATION` shard 0 waits, after its own last step, for the other shards to store theirs before merging")
}
