package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// ProfileOptions describe one performance profile: a sequence of
// virtual-user steps, each repeated, with optional hygiene before each.
type ProfileOptions struct {
	Label string
	// Steps are the users of each step: virtual users (tproc-c) or
	// terminals (tpc-c; 0 means ten per warehouse).
	Steps      []int
	VUsSpec    string // the sequence as the user wrote it, recorded
	Repeat     int
	Interleave bool
	// Checkpoint writes dirty pages and log before each step; Reset
	// returns the database to its post-build state before each step.
	Checkpoint, Reset bool
	// TerminateSessions lets Reset end the database user's other sessions
	// when its method needs the database to itself; without it none is
	// ended and a reset fails naming them.
	TerminateSessions bool
	// Driver is the template of every run, its Mode the profile's; VUs
	// (or Terminals) is set per step and Seed is the base of each run's
	// seed.
	Driver driver.Options
	// Continue is the id of a stored profile to continue instead of
	// starting a new one (a resumed experiment): its slots measured
	// completely are kept, every other run of it (interrupted, failed,
	// or left running by a process that died) is marked superseded and
	// its slot measured again. Steps, repeats and order must be the ones
	// the profile was started with.
	Continue int64
	// Adaptive, when set, measures each step until the stopping rule ends
	// it (`repeat: auto`); Repeat is then its most runs.
	Adaptive *AdaptiveOptions
	// Remeasure, when continuing, says why a slot's runs are measured
	// again (an experiment's retry after a failed server, its re-measure
	// of contaminated runs) instead of the resumed experiment's words;
	// RedoContaminated measures contaminated slots again too (a resume
	// keeps them: they were measured completely).
	Remeasure        string
	RedoContaminated bool
	// ShardGroup names the sharded run this profile is one shard of
	// (Driver.Shard active, Driver.StartAt its shared start): the shards'
	// profiles are found by it and merged (MergeShardGroup).
	ShardGroup string
	// Rendezvous, when set, is called once the profile is stored and
	// before its first run: it returns the shared start (Driver.StartAt)
	// the shards agreed on (Env.Rendezvous). An error fails the profile.
	Rendezvous func(ctx context.Context) (time.Time, error)
	// Started, when set, is called with the profile's id before the first
	// run; an error stops the profile before it measures anything.
	Started func(ctx context.Context, profileID int64) error
}

// AdaptiveOptions make a profile measure each step until the 95%
// interval of what it estimates is within a precision, or the step's
// budget of runs ends (`repeat: auto`): profile.StopRule.
type AdaptiveOptions struct {
	Rule profile.StopRule
	// Baseline, when set, gives the NOPM of a baseline's counting runs at
	// a step's users (nil when it has none there): the rule then bounds
	// the ratio of this profile's mean NOPM to the baseline's, named
	// BaselineName. Without it (or at a step the baseline lacks) the rule
	// bounds this profile's own mean NOPM.
	Baseline     func(users int) []float64
	BaselineName string
}

// ProfileOutcome is what a profile produced.
type ProfileOutcome struct {
	ID      int64
	Runs    []int64
	Partial bool
	// Measured reports whether at least one run returned a result.
	Measured bool
	// Suspect lists the runs whose database figures disagreed with the
	// driver's own counts (stored with status suspect).
	Suspect []SuspectRun
	// Failures lists the runs with more failed transactions than allowed
	// (stored with status failures).
	Failures []SuspectRun
	// Stops is what the stopping rule decided for each step of an
	// adaptive profile (ProfileOptions.Adaptive); nil otherwise.
	Stops []profile.Stop
	// Contaminated lists the runs measured while others took more of the
	// CPU than allowed (stored with status contaminated); ServerFailed
	// the run whose server failed under it (stored with status failed),
	// at which the profile stopped.
	Contaminated []SuspectRun
	ServerFailed []SuspectRun
}

// Profile runs every step and repeat of o on db as one stored profile. A
// run that fails stops the profile; what was measured before stays stored.
// When ctx is canceled the profile stops, is stored as partial and the
// error wraps context.Canceled. With o.Adaptive each step is measured
// until the stopping rule ends it.
func (e *Env) Profile(ctx context.Context, db dialect.Database, tg dialect.Target, o ProfileOptions) (ProfileOutcome, error) {
	p, err := e.OpenProfile(ctx, db, tg, o)
	if err != nil {
		return p.Outcome(), err
	}
	if o.Adaptive != nil {
		return p.Finish(ctx, p.measureAdaptive(ctx))
	}
	for i, slot := range profile.Order(len(o.Steps), o.Repeat, o.Interleave) {
		if _, done := p.Kept[slot]; done {
			continue
		}
		if _, err := p.Measure(ctx, i, slot); err != nil || ctx.Err() != nil {
			return p.Finish(ctx, err)
		}
	}
	return p.Finish(ctx, nil)
}

// ProfileRun is one stored profile being measured, slot by slot: Profile
// measures its slots in order, an experiment's profile step that
// alternates its runs between targets measures several at once.
type ProfileRun struct {
	e      *Env
	db     dialect.Database
	tg     dialect.Target
	meta   tpcc.Meta
	o      ProfileOptions
	rc     RunContext
	h      *hygiene
	params map[string]any
	// ID is the stored profile's id.
	ID int64
	// Kept are the slots an earlier attempt measured completely (a
	// continued profile), which count as they are.
	Kept         map[profile.Slot]KeptRun
	out          ProfileOutcome
	suspect      SuspectError
	failures     FailuresError
	contaminated ContaminatedError
	measured     int // runs started by this process
	adaptive     *profile.Adaptive
}

// KeptRun is a slot's run an earlier attempt measured.
type KeptRun struct {
	RunID int64
	NOPM  float64
	// Counts: its figures count (status ok, complete).
	Counts bool
}

// SlotRun is what measuring one slot gave.
type SlotRun struct {
	RunID  int64
	Result *driver.Result // nil when the run measured nothing
	// Counts: the run's figures count in statistics and verdicts (status
	// ok, complete); a suspect, partial or failed run's do not.
	Counts bool
}

// Outcome is what the profile produced so far.
func (p *ProfileRun) Outcome() ProfileOutcome {
	if p == nil {
		return ProfileOutcome{}
	}
	return p.out
}

// Users is the users of a step of the profile as it runs them: virtual
// users, or tpc-c terminals (ten per warehouse when not given).
func (p *ProfileRun) Users(step int) int {
	d := p.o.Driver
	if d.Mode == driver.ModeTPCC {
		d.Terminals = p.o.Steps[step]
		return d.ForWarehouses(p.meta.Warehouses).Terminals
	}
	return p.o.Steps[step]
}

// OpenProfile checks o against the database and this host, stores the
// profile (or reopens the one o continues) and prepares the hygiene
// between runs; nothing is measured yet. A profile it returns must be
// ended with Finish.
func (e *Env) OpenProfile(ctx context.Context, db dialect.Database, tg dialect.Target, o ProfileOptions) (*ProfileRun, error) {
	meta, err := ReadSchema(ctx, db, tg)
	if err != nil {
		return nil, err
	}
	if o.Driver.Style == dialect.StyleProcedures && (!db.Caps().Procedures || !meta.Procedures) {
		// The dialect (SQLite) or this build has no stored procedures.
		o.Driver.Style = dialect.StyleClientSQL
	}
	if o.Adaptive != nil {
		if err := o.Adaptive.Rule.Validate(); err != nil {
			return nil, fmt.Errorf("%w: repeat auto: %w", ErrInvalidOptions, err)
		}
		if !o.Driver.StartAt.IsZero() || o.Rendezvous != nil {
			return nil, fmt.Errorf("%w: repeat auto decides its runs as it goes; shards share planned starts", ErrInvalidOptions)
		}
		o.Repeat = o.Adaptive.Rule.Max
	}
	if err := profile.CheckSlots(len(o.Steps), o.Repeat); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	// Before anything is opened, copied or allocated: the largest step
	// must fit the server's connections and this host's memory.
	if err := e.CheckCapacity(ctx, db, o.Driver, o.Steps, meta.Warehouses); err != nil {
		return nil, err
	}
	if err := e.checkAgent(ctx); err != nil {
		return nil, err
	}
	rc := e.GatherContext(ctx, db, tg, &meta)
	h, err := e.newHygiene(ctx, db, tg, meta, hygieneOptions{checkpoint: o.Checkpoint, reset: o.Reset,
		endSessions: o.TerminateSessions, dataDir: rc.DataDir(),
		resuming: o.Continue != 0})
	if err != nil {
		return nil, err
	}
	d := o.Driver
	if d.Shard.Active() {
		// Every step must split before anything runs.
		for _, vus := range o.Steps {
			if _, _, err := d.Shard.Split(vus, meta.Warehouses); err != nil {
				return nil, &ShardError{Err: err}
			}
		}
	}
	params := map[string]any{
		"checkpoint_before": o.Checkpoint, "reset_between": o.Reset, "terminate_sessions": o.TerminateSessions,
		"vus": o.Steps, "vus_spec": o.VUsSpec, "repeat": o.Repeat, "interleave": o.Interleave,
		"rampup_seconds": d.Rampup.Seconds(), "duration_seconds": d.Duration.Seconds(),
		"grace_seconds": d.Grace.Seconds(), "seed": d.Seed, "style": d.Style.String(),
		"all_warehouses": d.AllWarehouses, "max_retries": d.MaxRetries,
		"reconnect_for_seconds": d.ReconnectFor.Seconds(), "max_failure_pct": d.MaxFailurePct,
		"warehouses": meta.Warehouses, "dialect": db.Name(), "target": tg.String(),
		"mode": d.Mode.String(), "mode_label": d.ModeLabel(), "deck": tpcc.DeckDescription(),
	}
	if a := o.Adaptive; a != nil {
		params["repeat"] = "auto"
		params["stopping"] = profile.Stopping{Rule: a.Rule, Baseline: a.BaselineName}
	}
	switch {
	case d.Mode == driver.ModeTPCC:
		// Terminals, sessions and delivery sessions of each step as run
		// (defaults resolved), in place of virtual users.
		delete(params, "vus")
		var terminals, sessions, delivery []int
		for _, n := range o.Steps {
			t := d
			t.Terminals = n
			t = t.ForWarehouses(meta.Warehouses)
			terminals = append(terminals, t.Terminals)
			sessions = append(sessions, t.Sessions)
			delivery = append(delivery, t.DeliverySessions)
		}
		params["terminals"], params["sessions"], params["delivery_sessions"] = terminals, sessions, delivery
	case d.Rate > 0:
		params["rate_per_vu"] = d.Rate
	}
	if d.Shard.Active() {
		params["shard"] = d.Shard.String()
		params["shard_count"] = d.Shard.Count
		params["shard_index"] = d.Shard.Index
		if o.ShardGroup != "" {
			params["shard_group"] = o.ShardGroup
		}
	}
	if !d.StartAt.IsZero() {
		params["start_at"] = d.StartAt.UTC().Format(time.RFC3339Nano)
	}
	if o.Rendezvous != nil {
		params["rendezvous"] = true
	}
	pid, kept, err := e.startProfile(ctx, o, params, rc)
	if err != nil {
		return nil, err
	}
	p := &ProfileRun{e: e, db: db, tg: tg, meta: meta, o: o, rc: rc, h: h, params: params, ID: pid, Kept: kept}
	p.out.ID = pid
	if o.Started != nil {
		if err := o.Started(ctx, pid); err != nil {
			ferr := e.Store.FinishProfile(context.WithoutCancel(ctx), pid, store.StatusFailed)
			return p, errors.Join(err, storeErr("record the profile result", ferr))
		}
	}
	if o.Rendezvous != nil {
		at, err := o.Rendezvous(ctx)
		if err != nil {
			ferr := e.Store.FinishProfile(context.WithoutCancel(ctx), pid, store.StatusFailed)
			return p, errors.Join(err, storeErr("record the profile result", ferr))
		}
		p.o.Driver.StartAt = at
	}
	return p, nil
}

// Measure runs slot, the i-th of the profile's order (its seed is drawn
// from i), with the hygiene before it, and stores it. An error stops the
// profile: the caller ends it with Finish.
func (p *ProfileRun) Measure(ctx context.Context, i int, slot profile.Slot) (SlotRun, error) {
	e, o := p.e, p.o
	rd := o.Driver
	users := "virtual user(s)"
	if rd.Mode == driver.ModeTPCC {
		rd.Terminals = o.Steps[slot.Step]
		rd = rd.ForWarehouses(p.meta.Warehouses)
		users = "terminal(s)"
	} else {
		rd.VUs = o.Steps[slot.Step]
		if rd.Shard.Active() {
			rd.Shard, rd.VUs, _ = rd.Shard.Split(rd.VUs, p.meta.Warehouses) // checked by OpenProfile
		}
	}
	// Each repeat draws its own streams, reproducibly from the seed.
	rd.Seed = o.Driver.Seed + uint64(i)
	if !o.Driver.StartAt.IsZero() {
		rd.StartAt = SlotStart(o.Driver, i)
	}
	switch {
	case o.Adaptive != nil:
		e.note("step %d: %d %s, run %d (repeat auto, at most %d)", slot.Step+1, rd.Users(), users, slot.Repeat+1, o.Repeat)
	case len(o.Steps)*o.Repeat > 1:
		e.note("step %d/%d: %d %s, repeat %d/%d", i+1, len(o.Steps)*o.Repeat, rd.Users(), users, slot.Repeat+1, o.Repeat)
	}
	prep, err := p.h.before(ctx, p.measured > 0)
	if err != nil {
		return SlotRun{}, err
	}
	p.measured++
	id, res, err := e.timedRun(ctx, p.db, p.tg, p.meta, rd, p.rc, p.ID, slot, o.Label, prep)
	if id != 0 {
		p.out.Runs = append(p.out.Runs, id)
	}
	sr := SlotRun{RunID: id, Result: res}
	if res != nil {
		p.out.Measured = true
		if res.Partial {
			p.out.Partial = true
		}
		if res.IsSuspect() {
			p.suspect.Runs = append(p.suspect.Runs, SuspectRun{RunID: id, VUs: rd.VUs, Reasons: res.Suspect})
		}
		if res.TooManyFailures != "" {
			p.failures.Runs = append(p.failures.Runs, SuspectRun{RunID: id, VUs: rd.VUs, Reasons: []string{res.TooManyFailures}})
		}
		if len(res.Contaminated) > 0 {
			p.contaminated.Runs = append(p.contaminated.Runs, SuspectRun{RunID: id, VUs: rd.VUs, Reasons: res.Contaminated})
		}
		if res.ServerFailed() {
			failed := SuspectRun{RunID: id, VUs: rd.VUs, Reasons: res.ServerFailure}
			p.out.ServerFailed = append(p.out.ServerFailed, failed)
			// The server is gone, or was: the next run would measure its
			// absence (or a restart). The profile stops; an experiment
			// restarts a managed server and measures the slot again
			// (retries), also when the run ended early for it
			// (ErrServerGone).
			err = errors.Join(err, &ServerFailedError{Run: failed})
		}
		sr.Counts = err == nil && !res.Partial && summary.RunStatus(res, false) == store.StatusOK
	}
	return sr, err
}

// Finish ends the profile after runErr (nil when every slot it meant to
// measure was measured): the hygiene's end, the profile's status, and
// the error the profile ends with (its runErr, an interruption, suspect
// runs or runs with too many failures).
func (p *ProfileRun) Finish(ctx context.Context, runErr error) (ProfileOutcome, error) {
	e := p.e
	fctx := context.WithoutCancel(ctx)
	if err := p.h.finish(fctx); err != nil && runErr == nil {
		runErr = err
	}
	if p.adaptive != nil {
		p.out.Stops = p.adaptive.Stops()
		if err := p.saveStops(fctx); err != nil && runErr == nil {
			runErr = err
		}
	}
	out := p.out
	status := summary.Status(summary.Facts{Measured: out.Measured, Failed: runErr != nil,
		Incomplete: out.Partial || ctx.Err() != nil, Suspect: len(p.suspect.Runs) > 0, TooManyFailures: len(p.failures.Runs) > 0,
		Contaminated: len(p.contaminated.Runs) > 0})
	out.Suspect, out.Failures, out.Contaminated = p.suspect.Runs, p.failures.Runs, p.contaminated.Runs
	var saved *store.SavedError
	if errors.As(runErr, &saved) {
		// The store did not take the last run: it will not take this
		// either. The profile is marked abandoned once this process ends.
		return out, runErr
	}
	if err := e.Store.FinishProfile(fctx, p.ID, status); err != nil {
		return out, errors.Join(runErr, storeErr("record the profile result", err))
	}
	if runErr != nil {
		return out, runErr
	}
	if err := ctx.Err(); err != nil {
		out.Partial = true
		return out, err
	}
	var errs []error
	if len(p.failures.Runs) > 0 {
		f := p.failures
		f.Total = len(out.Runs)
		errs = append(errs, &f)
	}
	if len(p.suspect.Runs) > 0 {
		s := p.suspect
		s.Total = len(out.Runs)
		errs = append(errs, &s)
	}
	if len(p.contaminated.Runs) > 0 {
		c := p.contaminated
		c.Total = len(out.Runs)
		errs = append(errs, &c)
	}
	return out, errors.Join(errs...)
}

// measureAdaptive measures the profile's steps until the stopping rule
// ends each (repeat: auto), deciding after every run from the step's
// counting runs: their mean NOPM's interval, or that of its ratio to the
// baseline's when one was measured at the step.
func (p *ProfileRun) measureAdaptive(ctx context.Context) error {
	a := p.o.Adaptive
	users := make([]int, len(p.o.Steps))
	for i := range users {
		users[i] = p.Users(i)
	}
	p.adaptive = profile.NewAdaptive(users, a.Rule, p.o.Interleave)
	figures := make([][]float64, len(p.o.Steps))
	for slot, k := range p.Kept {
		p.adaptive.Keep(slot, k.Counts)
	}
	for _, slot := range profile.Order(len(p.o.Steps), a.Rule.Max, p.o.Interleave) {
		if k, ok := p.Kept[slot]; ok && k.Counts {
			figures[slot.Step] = append(figures[slot.Step], k.NOPM)
		}
	}
	decide := func(step int) (profile.Stop, bool) {
		hw, of := p.halfWidth(step, figures[step])
		return p.adaptive.Check(step, hw, of)
	}
	for step := range p.o.Steps {
		if stop, ok := decide(step); ok {
			p.e.note("step %d (%d users), kept from the earlier attempt: %s", step+1, stop.Users, stop.Text(a.Rule.Precision))
		}
	}
	for {
		i, slot, ok := p.adaptive.Next()
		if !ok {
			return nil
		}
		sr, err := p.Measure(ctx, i, slot)
		if sr.Counts {
			figures[slot.Step] = append(figures[slot.Step], sr.Result.NOPM)
		}
		hw, of := p.halfWidth(slot.Step, figures[slot.Step])
		if stop, stopped := p.adaptive.Record(slot, sr.Counts, hw, of); stopped {
			p.e.note("step %d (%d users): %s", slot.Step+1, stop.Users, stop.Text(a.Rule.Precision))
			if serr := p.saveStops(context.WithoutCancel(ctx)); serr != nil && err == nil {
				err = serr
			}
		}
		if err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// halfWidth is the relative half-width of what the stopping rule bounds
// at step, from its counting runs' NOPM: the ratio to the baseline's
// when the baseline has runs there, else the mean.
func (p *ProfileRun) halfWidth(step int, nopm []float64) (float64, string) {
	a := p.o.Adaptive
	own := profile.Summarize(nopm)
	if a.Baseline != nil {
		if base := a.Baseline(p.Users(step)); len(base) > 0 {
			return profile.Ratio(own, profile.Summarize(base)).HalfWidth(), "NOPM ratio to " + a.BaselineName
		}
	}
	return own.HalfWidth(), "mean NOPM"
}

// saveStops records what the stopping rule has decided so far with the
// profile's parameters.
func (p *ProfileRun) saveStops(ctx context.Context) error {
	return p.SaveStopping(ctx, profile.Stopping{Rule: p.o.Adaptive.Rule, Baseline: p.o.Adaptive.BaselineName, Stops: p.adaptive.Stops()})
}

// SaveStopping records with the profile's parameters how its steps
// stopped: a caller that runs the stopping rule over several profiles at
// once (a paired comparison) stores its decisions with each.
func (p *ProfileRun) SaveStopping(ctx context.Context, st profile.Stopping) error {
	p.params["stopping"] = st
	p.params["repeat"] = "auto"
	if err := p.e.Store.UpdateProfileParams(ctx, p.ID, JSON(p.params)); err != nil {
		return storeErr("record where the profile's steps stopped", err)
	}
	return nil
}

// Supersede marks a kept slot's run superseded, saying why, and forgets
// it: the slot is measured again (a paired comparison measures again a
// pair an interruption left half measured).
func (p *ProfileRun) Supersede(ctx context.Context, slot profile.Slot, why string) error {
	k, ok := p.Kept[slot]
	if !ok {
		return nil
	}
	if err := p.e.Store.SupersedeRun(ctx, k.RunID, why); err != nil {
		return storeErr("mark a run superseded", err)
	}
	delete(p.Kept, slot)
	return nil
}

// startProfile creates the profile, or reopens the one o continues and
// returns the slots it already measured completely; every other run of
// it is marked superseded, so that no slot counts twice.
func (e *Env) startProfile(ctx context.Context, o ProfileOptions, params map[string]any, rc RunContext) (int64, map[profile.Slot]KeptRun, error) {
	if o.Continue == 0 {
		expID, expSeq := e.link()
		pid, err := e.Store.CreateProfile(ctx, store.Profile{Label: o.Label, Params: JSON(params), Context: JSON(rc),
			ExperimentID: expID, ExperimentSeq: expSeq})
		if err != nil {
			return 0, nil, storeErr("record the profile", err)
		}
		return pid, nil, nil
	}
	pid := o.Continue
	runs, err := e.Store.ListRuns(ctx, store.RunFilter{Kind: store.KindRun, ProfileID: pid, Counting: true})
	if err != nil {
		return 0, nil, storeErr("read the runs of the profile to continue", err)
	}
	kept := map[profile.Slot]KeptRun{}
	for _, r := range runs {
		slot := profile.Slot{Step: r.Step - 1, Repeat: r.Repeat - 1}
		_, dup := kept[slot]
		keep := r.Status == store.StatusOK || r.Status == store.StatusSuspect || r.Status == store.StatusContaminated && !o.RedoContaminated
		if keep && len(r.Summary) > 0 && !dup {
			k := KeptRun{RunID: r.ID}
			if sum, err := summary.DecodeRun(r.Summary); err == nil && sum.Result != nil {
				k.NOPM = sum.Result.NOPM
				k.Counts = r.Status == store.StatusOK && !sum.Result.Partial
			}
			kept[slot] = k
			continue
		}
		why := fmt.Sprintf("run %s when its experiment was resumed; its slot was measured again", r.Status)
		switch {
		case o.Remeasure != "":
			why = fmt.Sprintf("run %s: %s", r.Status, o.Remeasure)
		case r.Status == store.StatusRunning:
			why = "its process ended while it ran; the slot was measured again when the experiment resumed"
		}
		if err := e.Store.SupersedeRun(ctx, r.ID, why); err != nil {
			return 0, nil, storeErr("mark a run of the continued profile superseded", err)
		}
	}
	if err := e.Store.ReopenProfile(ctx, pid); err != nil {
		return 0, nil, storeErr("reopen the profile to continue", err)
	}
	e.note("continuing profile %d: %d run(s) already measured", pid, len(kept))
	return pid, kept, nil
}

// timedRun runs one step once and stores it.
func (e *Env) timedRun(ctx context.Context, db dialect.Database, tg dialect.Target, meta tpcc.Meta,
	d driver.Options, rc RunContext, pid int64, slot profile.Slot, label string, prep Preparation) (int64, *driver.Result, error) {
	seed := int64(d.Seed)
	expID, expSeq := e.link()
	if e.MeasureRTT != nil && rc.Placement.Hosts != nil {
		h := *rc.Placement.Hosts
		rtt, err := e.MeasureRTT(ctx)
		if err != nil {
			h.RTTMicros, h.RTTNote = 0, "round trip not measured: "+e.scrub(err.Error())
			e.note("round trip between the driver's host and the database's not measured: %v", e.scrub(err.Error()))
		} else {
			h.RTTMicros, h.RTTNote = rtt.Microseconds(), ""
		}
		rc.Placement.Hosts = &h
	}
	id, err := e.Store.CreateRun(ctx, store.Run{
		Kind: store.KindRun, Label: label, ProfileID: pid, Step: slot.Step + 1, Repeat: slot.Repeat + 1, VUs: d.Users(),
		Target: tg.String(), Dialect: db.Name(), ToolVersion: e.ToolVersion, Seed: &seed,
		ExperimentID: expID, ExperimentSeq: expSeq,
		Params: JSON(map[string]any{"driver": d, "preparation": prep}), Context: JSON(rc),
	})
	if err != nil {
		return 0, nil, storeErr("record the run", err)
	}
	smp := e.StartSampling(ctx, db, tg, rc, time.Second)
	d.Recorder = e.Observer.Recorder
	lw := e.watchLayer(ctx, d.Recorder)
	if lw != nil {
		d.Recorder = lw
	}
	exit := e.watchExit()
	var res *driver.Result
	var rerr error
	runCtx, lost := e.watchLost(ctx)
	if e.Drive != nil {
		res, rerr = e.Drive(runCtx, meta, d, e.Observer.Live)
	} else {
		res, rerr = driver.Run(runCtx, db, meta, d, e.Observer.Live)
	}
	if why := lost(); why != "" {
		rerr = fmt.Errorf("%s: %w", why, rerr)
		if res != nil {
			res.FailServer(why)
		}
	}
	var mon *summary.Monitor
	var hostSamples []store.Sample
	if res != nil && !res.Window.Start.IsZero() {
		// Host and database samples share the driver's time axis: t = 0 is
		// the start of the measured window.
		smp.SetStart(res.Window.Start)
		m, samples := StopSampling(smp, time.Duration(res.Window.Seconds*float64(time.Second)), rc.Placement)
		mon, hostSamples = &m, samples
		lw.record(mon)
		// The database's figures must agree with the driver's own counts,
		// allowing for what the samplers ran on the database meanwhile.
		if !e.NoCrossCheck {
			res.CheckCounters(m.SamplerDBStatements)
		}
		judgeRun(res, mon, exit)
	} else {
		smp.Stop()
		if res != nil {
			judgeRun(res, nil, exit)
		}
	}
	exit.exited() // stops the watch

	status := summary.RunStatus(res, rerr != nil)
	errText := ""
	if rerr != nil {
		errText = e.scrub(rerr.Error())
	}
	out := store.Outcome{Status: status, Error: errText}
	measured := RunStored{ID: id, ProfileID: pid, Status: status, Result: res, Monitor: mon, StorePath: e.Store.Path()}
	if res != nil {
		out.Histograms = map[string]*hdrhistogram.Histogram{}
		for k, h := range res.Histograms() {
			out.Histograms[k.String()] = h
		}
		if len(res.Series) > 0 {
			out.Samples = append(summary.WorkloadSamples(res), hostSamples...)
		}
		out.Summary = JSON(summary.Run{Version: summary.RunVersion, Result: res, Monitor: mon})
		// What was measured is shown first: a store that cannot take it
		// must not cost the user the result (complete).
		if e.Observer.RunMeasured != nil {
			e.Observer.RunMeasured(measured)
		}
	}
	if err := e.complete(ctx, id, out); err != nil {
		return id, res, errors.Join(rerr, err)
	}
	if res != nil && e.Observer.RunStored != nil {
		e.Observer.RunStored(measured)
	}
	if rerr != nil {
		return id, res, &RunError{RunID: id, Status: status, Err: rerr}
	}
	return id, res, nil
}

// ShardError is a --shard that cannot split a profile's steps or the
// database's warehouses: bad input, found before anything ran.
type ShardError struct{ Err error }

func (e *ShardError) Error() string { return e.Err.Error() }
func (e *ShardError) Unwrap() error { return e.Err }
