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
// error wraps context.Canceled.
func (e *Env) Profile(ctx context.Context, db dialect.Database, tg dialect.Target, o ProfileOptions) (ProfileOutcome, error) {
	meta, err := ReadSchema(ctx, db, tg)
	if err != nil {
		return ProfileOutcome{}, err
	}
	if o.Driver.Style == dialect.StyleProcedures && (!db.Caps().Procedures || !meta.Procedures) {
		// The dialect (SQLite) or this build has no stored procedures.
		o.Driver.Style = dialect.StyleClientSQL
	}
	if err := profile.CheckSlots(len(o.Steps), o.Repeat); err != nil {
		return ProfileOutcome{}, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	// Before anything is opened, copied or allocated: the largest step
	// must fit the server's connections and this host's memory.
	if err := e.CheckCapacity(ctx, db, o.Driver, o.Steps, meta.Warehouses); err != nil {
		return ProfileOutcome{}, err
	}
	if err := e.checkAgent(ctx); err != nil {
		return ProfileOutcome{}, err
	}
	rc := e.GatherContext(ctx, db, tg, &meta)
	h, err := e.newHygiene(ctx, db, tg, meta, hygieneOptions{checkpoint: o.Checkpoint, reset: o.Reset,
		endSessions: o.TerminateSessions, dataDir: rc.DataDir(),
		resuming: o.Continue != 0})
	if err != nil {
		return ProfileOutcome{}, err
	}
	d := o.Driver
	if d.Shard.Active() {
		// Every step must split before anything runs.
		for _, vus := range o.Steps {
			if _, _, err := d.Shard.Split(vus, meta.Warehouses); err != nil {
				return ProfileOutcome{}, &ShardError{Err: err}
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
	pid, done, err := e.startProfile(ctx, o, params, rc)
	if err != nil {
		return ProfileOutcome{}, err
	}
	out := ProfileOutcome{ID: pid}
	if o.Started != nil {
		if err := o.Started(ctx, pid); err != nil {
			ferr := e.Store.FinishProfile(context.WithoutCancel(ctx), pid, store.StatusFailed)
			return out, errors.Join(err, storeErr("record the profile result", ferr))
		}
	}
	if o.Rendezvous != nil {
		at, err := o.Rendezvous(ctx)
		if err != nil {
			ferr := e.Store.FinishProfile(context.WithoutCancel(ctx), pid, store.StatusFailed)
			return out, errors.Join(err, storeErr("record the profile result", ferr))
		}
		o.Driver.StartAt = at
	}
	slots := profile.Order(len(o.Steps), o.Repeat, o.Interleave)
	var runErr error
	measured := 0 // runs started by this call
	var suspect SuspectError
	var failures FailuresError
	var contaminated ContaminatedError
	for i, slot := range slots {
		if done[slot] {
			continue
		}
		rd := o.Driver
		users := "virtual user(s)"
		if rd.Mode == driver.ModeTPCC {
			rd.Terminals = o.Steps[slot.Step]
			rd = rd.ForWarehouses(meta.Warehouses)
			users = "terminal(s)"
		} else {
			rd.VUs = o.Steps[slot.Step]
			if rd.Shard.Active() {
				rd.Shard, rd.VUs, _ = rd.Shard.Split(rd.VUs, meta.Warehouses) // checked above
			}
		}
		// Each repeat draws its own streams, reproducibly from the seed.
		rd.Seed = o.Driver.Seed + uint64(i)
		if !o.Driver.StartAt.IsZero() {
			rd.StartAt = SlotStart(o.Driver, i)
		}
		if len(slots) > 1 {
			e.note("step %d/%d: %d %s, repeat %d/%d", i+1, len(slots), rd.Users(), users, slot.Repeat+1, o.Repeat)
		}
		prep, err := h.before(ctx, measured > 0)
		if err != nil {
			runErr = err
			break
		}
		measured++
		id, res, err := e.timedRun(ctx, db, tg, meta, rd, rc, pid, slot, o.Label, prep)
		if id != 0 {
			out.Runs = append(out.Runs, id)
		}
		if res != nil {
			out.Measured = true
			if res.Partial {
				out.Partial = true
			}
			if res.IsSuspect() {
				suspect.Runs = append(suspect.Runs, SuspectRun{RunID: id, VUs: rd.VUs, Reasons: res.Suspect})
			}
			if res.TooManyFailures != "" {
				failures.Runs = append(failures.Runs, SuspectRun{RunID: id, VUs: rd.VUs, Reasons: []string{res.TooManyFailures}})
			}
			if len(res.Contaminated) > 0 {
				contaminated.Runs = append(contaminated.Runs, SuspectRun{RunID: id, VUs: rd.VUs, Reasons: res.Contaminated})
			}
			if res.ServerFailed() {
				failed := SuspectRun{RunID: id, VUs: rd.VUs, Reasons: res.ServerFailure}
				out.ServerFailed = append(out.ServerFailed, failed)
				// The server is gone, or was: the next run would
				// measure its absence (or a restart). The profile
				// stops; an experiment restarts a managed server and
				// measures the slot again (retries), also when the run
				// ended early for it (ErrServerGone).
				err = errors.Join(err, &ServerFailedError{Run: failed})
			}
		}
		if err != nil || ctx.Err() != nil {
			runErr = err
			break
		}
	}
	fctx := context.WithoutCancel(ctx)
	if err := h.finish(fctx); err != nil && runErr == nil {
		runErr = err
	}
	status := summary.Status(summary.Facts{Measured: out.Measured, Failed: runErr != nil,
		Incomplete: out.Partial || ctx.Err() != nil, Suspect: len(suspect.Runs) > 0, TooManyFailures: len(failures.Runs) > 0,
		Contaminated: len(contaminated.Runs) > 0})
	out.Suspect, out.Failures, out.Contaminated = suspect.Runs, failures.Runs, contaminated.Runs
	var saved *store.SavedError
	if errors.As(runErr, &saved) {
		// The store did not take the last run: it will not take this
		// either. The profile is marked abandoned once this process ends.
		return out, runErr
	}
	if err := e.Store.FinishProfile(fctx, pid, status); err != nil {
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
	if len(failures.Runs) > 0 {
		failures.Total = len(out.Runs)
		errs = append(errs, &failures)
	}
	if len(suspect.Runs) > 0 {
		suspect.Total = len(out.Runs)
		errs = append(errs, &suspect)
	}
	if len(contaminated.Runs) > 0 {
		contaminated.Total = len(out.Runs)
		errs = append(errs, &contaminated)
	}
	return out, errors.Join(errs...)
}

// startProfile creates the profile, or reopens the one o continues and
// returns the slots it already measured completely; every other run of
// it is marked superseded, so that no slot counts twice.
func (e *Env) startProfile(ctx context.Context, o ProfileOptions, params map[string]any, rc RunContext) (int64, map[profile.Slot]bool, error) {
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
	done := map[profile.Slot]bool{}
	for _, r := range runs {
		slot := profile.Slot{Step: r.Step - 1, Repeat: r.Repeat - 1}
		keep := r.Status == store.StatusOK || r.Status == store.StatusSuspect || r.Status == store.StatusContaminated && !o.RedoContaminated
		if keep && len(r.Summary) > 0 && !done[slot] {
			done[slot] = true
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
	e.note("continuing profile %d: %d run(s) already measured", pid, len(done))
	return pid, done, nil
}

// timedRun runs one step once and stores it.
func (e *Env) timedRun(ctx context.Context, db dialect.Database, tg dialect.Target, meta tpcc.Meta,
	d driver.Options, rc RunContext, pid int64, slot profile.Slot, label string, prep Preparation) (int64, *driver.Result, error) {
	seed := int64(d.Seed)
	expID, expSeq := e.link()
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
	exit := e.watchExit()
	res, rerr := driver.Run(ctx, db, meta, d, e.Observer.Live)
	var mon *summary.Monitor
	var hostSamples []store.Sample
	if res != nil && !res.Window.Start.IsZero() {
		// Host and database samples share the driver's time axis: t = 0 is
		// the start of the measured window.
		smp.SetStart(res.Window.Start)
		m, samples := StopSampling(smp, time.Duration(res.Window.Seconds*float64(time.Second)), rc.Placement)
		mon, hostSamples = &m, samples
		// The database's figures must agree with the driver's own counts,
		// allowing for what the samplers ran on the database meanwhile.
		res.CheckCounters(m.SamplerDBStatements)
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
