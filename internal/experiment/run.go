package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// Runner runs and resumes experiments, recording them in Store.
type Runner struct {
	Store       *store.Store
	Log         *slog.Logger
	Scrub       func(string) string // removes secrets from stored text; nil keeps it
	ToolVersion string
	Observer    Observer
	// Secret is told every password a target uses, so that the caller can
	// scrub it from what it prints.
	Secret func(string)
	// StoreWait is how long a finished measurement waits for a busy
	// results store (scenario.Env.StoreWait).
	StoreWait time.Duration
	// NoCrossCheck is scenario.Env.NoCrossCheck for every step: tests
	// only.
	NoCrossCheck bool
}

// Observer is told what an experiment does. Every field is optional.
type Observer struct {
	// Scenario is given to every step: notes, build progress, live rates
	// and stored runs.
	Scenario scenario.Observer
	// Started: the experiment is stored (or claimed again, resumed) and
	// its schedule is about to run.
	Started func(id int64, units []plan.Unit, resumed bool)
	// Unit: a unit starts (State running), ends (done, failed,
	// interrupted), or is skipped because an earlier attempt finished it.
	Unit func(UnitEvent)
	// Note is a line about targets starting and stopping.
	Note func(msg string)
}

// UnitEvent is one unit of the schedule changing state.
type UnitEvent struct {
	Unit    plan.Unit
	Of      int // units in the schedule
	State   store.StepState
	Attempt int
	Skipped bool // done by an earlier attempt
	Outcome Outcome
	Err     error
}

// Params is the plan as oltplab understood it, stored with the
// experiment (its targets with their resolved instances, its steps).
type Params struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Question    string         `json:"question,omitempty"`
	Warehouses  int            `json:"warehouses"`
	Baseline    string         `json:"baseline"`
	Targets     []TargetParams `json:"targets"`
	Steps       []StepParams   `json:"steps"`
	Cost        *plan.CostSpec `json:"cost,omitempty"`
	EstimateSec float64        `json:"estimate_seconds"`
}

// TargetParams describes one target.
type TargetParams struct {
	Name     string             `json:"name"`
	Display  string             `json:"display"`
	Dialect  string             `json:"dialect"`
	Managed  bool               `json:"managed"`
	Instance *plan.InstanceSpec `json:"instance,omitempty"`
	Axes     map[string]string  `json:"axes,omitempty"`
	Prices   *cost.Prices       `json:"prices,omitempty"`
}

// StepParams describes one step of the plan.
type StepParams struct {
	Kind     string `json:"kind"`
	Describe string `json:"describe"`
}

// ParamsOf describes p for the store.
func ParamsOf(p *plan.Plan) Params {
	out := Params{Name: p.Name, Description: p.Description, Question: p.Question, Warehouses: p.Warehouses, Baseline: p.Baseline,
		EstimateSec: p.Estimate().Seconds(), Cost: p.Cost}
	for _, t := range p.Targets {
		tp := TargetParams{Name: t.Name, Display: t.Display(), Dialect: t.Dialect(), Managed: t.Managed(), Axes: t.Axes}
		if t.Managed() {
			inst := t.Instance
			tp.Instance = &inst
		}
		tp.Prices = t.Prices
		out.Targets = append(out.Targets, tp)
	}
	for _, s := range p.Steps {
		out.Steps = append(out.Steps, StepParams{Kind: s.Kind.Name, Describe: s.Step.Describe()})
	}
	return out
}

func (r *Runner) scrub(s string) string {
	if r.Scrub == nil {
		return s
	}
	return r.Scrub(s)
}

func (r *Runner) logger() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

func (r *Runner) note(format string, args ...any) {
	if r.Observer.Note != nil {
		r.Observer.Note(fmt.Sprintf(format, args...))
	}
}

// Run stores p as a new experiment and runs its schedule. It returns the
// experiment's id as soon as it is stored, with the error that stopped it;
// an error wrapping context.Canceled means interrupted, to be resumed.
func (r *Runner) Run(ctx context.Context, p *plan.Plan) (int64, error) {
	units := p.Schedule()
	abs, err := filepath.Abs(p.File)
	if err != nil {
		abs = p.File
	}
	id, err := r.Store.CreateExperiment(ctx, store.Experiment{
		Name: p.Name, PlanFile: abs, Plan: r.scrub(string(p.Source)), PlanSHA256: p.SHA256,
		Params: scenario.JSON(ParamsOf(p)), Owner: self().String(),
	}, storeSteps(units))
	if err != nil {
		return 0, &scenario.StoreError{Op: "record the experiment", Err: err}
	}
	if r.Observer.Started != nil {
		r.Observer.Started(id, units, false)
	}
	return id, r.execute(ctx, id, p, units, nil)
}

// storeSteps is the schedule as the store keeps it.
func storeSteps(units []plan.Unit) []store.ExperimentStep {
	out := make([]store.ExperimentStep, len(units))
	for i, u := range units {
		out[i] = store.ExperimentStep{Seq: u.Seq, StepIndex: u.Step.Index, Kind: u.Step.Kind.Name, Target: u.TargetName()}
	}
	return out
}

// StillRunningError: the experiment's process is alive (or on another
// host, where oltplab cannot tell).
type StillRunningError struct {
	ID    int64
	Owner string
	Other bool // on another host
}

func (e *StillRunningError) Error() string {
	o, _ := parseOwner(e.Owner)
	if e.Other {
		return fmt.Sprintf("experiment %d was started on host %s (pid %d): resume it there", e.ID, o.Host, o.PID)
	}
	return fmt.Sprintf("experiment %d is still running (pid %d)", e.ID, o.PID)
}

// ErrFinished: the experiment has nothing left to run.
var ErrFinished = errors.New("finished: nothing to resume")

// ErrPlanChanged: the plan given to resume is not the one the experiment
// started with.
var ErrPlanChanged = errors.New("not the plan the experiment started with")

// Load reads a stored experiment's plan: the stored copy, or planSrc
// when given (it must be the same text: a plan whose passwords were
// removed before storing it needs its file again).
func Load(ctx context.Context, st *store.Store, id int64, planSrc []byte) (store.Experiment, *plan.Plan, error) {
	e, err := st.GetExperiment(ctx, id)
	if err != nil {
		return e, nil, err
	}
	src := []byte(e.Plan)
	if planSrc != nil {
		p, err := plan.Decode(e.PlanFile, planSrc)
		if err != nil {
			return e, nil, err
		}
		if p.SHA256 != e.PlanSHA256 {
			return e, nil, fmt.Errorf("plan for experiment %d: %w (it started with %s)", id, ErrPlanChanged, e.PlanFile)
		}
		src = planSrc
	}
	p, err := plan.Decode(e.PlanFile, src)
	if err != nil {
		return e, nil, fmt.Errorf("the stored plan of experiment %d: %w", id, err)
	}
	if planSrc == nil {
		// The stored copy holds the redaction mark where a url had its
		// password: the plan file must give it again.
		for _, t := range p.Targets {
			if !t.Managed() && t.Secret() == dialect.Redacted {
				return e, nil, fmt.Errorf("experiment %d: target %s: %w: resume with --plan %s (the plan it started with), "+
					"or give the target a password_file", id, t.Name, ErrPlanPassword, e.PlanFile)
			}
		}
	}
	return e, p, nil
}

// ErrPlanPassword: a target's password was in its url, which the stored
// copy of the plan does not keep.
var ErrPlanPassword = errors.New("its url held a password, which oltplab does not store")

// Resume continues experiment id: steps finished are skipped, the step
// that was running (its process gone) continues from what it saved, the
// others run. planSrc is the plan file's text when the stored copy cannot
// serve (see Load); nil otherwise.
func (r *Runner) Resume(ctx context.Context, id int64, planSrc []byte) error {
	e, p, err := Load(ctx, r.Store, id, planSrc)
	if err != nil {
		return err
	}
	if e.Status == store.StatusOK || e.Status == store.StatusContaminated {
		return fmt.Errorf("experiment %d: %w", id, ErrFinished)
	}
	if o, ok := parseOwner(e.Owner); ok {
		switch o.liveness() {
		case alive:
			return &StillRunningError{ID: id, Owner: e.Owner}
		case unknown:
			return &StillRunningError{ID: id, Owner: e.Owner, Other: true}
		}
	}
	units := p.Schedule()
	prior, err := r.Store.ExperimentSteps(ctx, id)
	if err != nil {
		return &scenario.StoreError{Op: "read the experiment's steps", Err: err}
	}
	if len(prior) != len(units) {
		return fmt.Errorf("experiment %d: its plan now gives %d steps, %d were stored", id, len(units), len(prior))
	}
	for i, u := range units {
		if s := prior[i]; s.Kind != u.Step.Kind.Name || s.Target != u.TargetName() || s.StepIndex != u.Step.Index {
			return fmt.Errorf("experiment %d: step %d is %s on %q in its plan, %s on %q in the store", id, u.Seq, u.Step.Kind.Name, u.TargetName(), s.Kind, s.Target)
		}
	}
	if err := r.Store.ClaimExperiment(ctx, id, e.Owner, self().String()); err != nil {
		// Another resume took it over since it was read: that one owns
		// it now, and nothing of it was touched here.
		if errors.Is(err, store.ErrClaimed) {
			if now, gerr := r.Store.GetExperiment(ctx, id); gerr == nil {
				o, _ := parseOwner(now.Owner)
				return &StillRunningError{ID: id, Owner: now.Owner, Other: o.liveness() == unknown}
			}
		}
		return &scenario.StoreError{Op: "take the experiment over", Err: err}
	}
	// Runs its dead process left behind never count.
	stale, err := r.Store.ListRuns(ctx, store.RunFilter{ExperimentID: id, Status: store.StatusRunning, Counting: true})
	if err != nil {
		return &scenario.StoreError{Op: "read the experiment's runs", Err: err}
	}
	for _, run := range stale {
		if err := r.Store.SupersedeRun(ctx, run.ID, "its process ended while it ran; the experiment was resumed"); err != nil {
			return &scenario.StoreError{Op: "mark an abandoned run", Err: err}
		}
	}
	if r.Observer.Started != nil {
		r.Observer.Started(id, units, true)
	}
	// What its dead process left on disk (a backup cycle's directory, a
	// restored copy, a test file) goes before anything runs again.
	left, err := scenario.RemoveLeftovers(ctx, r.Store, id)
	for _, l := range left {
		r.note("left by the process that ended: %s", l)
	}
	if err != nil {
		return err
	}
	return r.execute(ctx, id, p, units, prior)
}

// stint is consecutive units that share their targets: the targets are
// started once for all of them.
type stint []plan.Unit

func stints(units []plan.Unit) []stint {
	var out []stint
	for _, u := range units {
		n := len(out)
		if n > 0 && u.Step.Scope() == plan.PerTarget && out[n-1][0].Step.Scope() == plan.PerTarget &&
			out[n-1][0].TargetName() == u.TargetName() {
			out[n-1] = append(out[n-1], u)
			continue
		}
		out = append(out, stint{u})
	}
	return out
}

// execute runs the units not done yet (prior holds the stored states of
// a resumed experiment, nil for a new one) and records how it ended.
func (r *Runner) execute(ctx context.Context, id int64, p *plan.Plan, units []plan.Unit, prior []store.ExperimentStep) error {
	done := map[int]bool{}
	progress := map[int]json.RawMessage{}
	for _, s := range prior {
		done[s.Seq] = s.State == store.StepDone
		progress[s.Seq] = s.Progress
	}
	// A target on which this process ran a step has changed since any
	// progress a later step saved before: that step starts over.
	ranOn := map[string]bool{}
	var runErr error
	// contaminated are the steps that ended with contaminated runs left
	// after measuring them again: done, said so, and the experiment goes
	// on; it ends contaminated.
	var contaminated []error
	for _, st := range stints(units) {
		var todo []plan.Unit
		for _, u := range st {
			if done[u.Seq] {
				r.unitEvent(UnitEvent{Unit: u, Of: len(units), State: store.StepDone, Skipped: true})
				continue
			}
			todo = append(todo, u)
		}
		if len(todo) == 0 {
			continue
		}
		running, err := r.startTargets(ctx, todo[0].Targets)
		if err != nil {
			runErr = err
			r.failUnit(ctx, id, todo[0], len(units), err)
			break
		}
		for _, u := range todo {
			prog := progress[u.Seq]
			for _, t := range u.Targets {
				if ranOn[t.Name] && prog != nil {
					// What the earlier attempt measured was measured on
					// the target before it changed: it no longer counts.
					prog = nil
					if err := r.supersedeStep(ctx, id, u.Seq); err != nil {
						runErr = err
					}
				}
			}
			if runErr != nil {
				break
			}
			err := r.runUnit(ctx, id, p, u, len(units), running, prog)
			for _, t := range u.Targets {
				ranOn[t.Name] = true
			}
			if OnlyContaminated(err) {
				contaminated = append(contaminated, err)
				continue
			}
			if err != nil {
				runErr = err
				break
			}
		}
		if err := r.stopTargets(context.WithoutCancel(ctx), running); err != nil && runErr == nil {
			runErr = err
		}
		if runErr != nil {
			break
		}
	}
	status, errText := store.StatusOK, ""
	switch {
	case runErr != nil && errors.Is(runErr, context.Canceled) && ctx.Err() != nil:
		status = store.StatusPartial
		errText = "interrupted"
	case runErr != nil:
		status, errText = store.StatusFailed, r.scrub(runErr.Error())
	case len(contaminated) > 0:
		runErr = errors.Join(contaminated...)
		status, errText = store.StatusContaminated, r.scrub(runErr.Error())
	}
	if err := r.Store.FinishExperiment(context.WithoutCancel(ctx), id, status, errText); err != nil {
		return errors.Join(runErr, &scenario.StoreError{Op: "record how the experiment ended", Err: err})
	}
	return runErr
}

// supersedeStep marks every counting run of one schedule entry
// superseded: the step starts over.
func (r *Runner) supersedeStep(ctx context.Context, id int64, seq int) error {
	runs, err := r.Store.ListRuns(ctx, store.RunFilter{ExperimentID: id, Counting: true})
	if err != nil {
		return &scenario.StoreError{Op: "read the experiment's runs", Err: err}
	}
	for _, run := range runs {
		if run.ExperimentSeq != seq {
			continue
		}
		if err := r.Store.SupersedeRun(ctx, run.ID, "an earlier step on its target ran again, so the step was measured again"); err != nil {
			return &scenario.StoreError{Op: "mark a run superseded", Err: err}
		}
	}
	return nil
}

func (r *Runner) unitEvent(e UnitEvent) {
	if r.Observer.Unit != nil {
		r.Observer.Unit(e)
	}
}

// startTargets starts (or opens) targets; on a failure it stops those
// already started.
func (r *Runner) startTargets(ctx context.Context, ts []*plan.TargetSpec) ([]*Running, error) {
	var out []*Running
	for _, t := range ts {
		if t.Managed() {
			r.note("starting %s: %s", t.Name, t.Display())
		}
		rt, err := startTarget(ctx, t, r.logger(), r.Secret)
		if err != nil {
			return nil, errors.Join(err, r.stopTargets(context.WithoutCancel(ctx), out))
		}
		out = append(out, rt)
	}
	return out, nil
}

func (r *Runner) stopTargets(ctx context.Context, rs []*Running) error {
	var errs []error
	for _, rt := range rs {
		if rt.stop != nil {
			r.note("stopping %s", rt.Spec.Name)
		}
		errs = append(errs, rt.Stop(ctx))
	}
	return errors.Join(errs...)
}

// failUnit records a unit that could not start (its target did not).
func (r *Runner) failUnit(ctx context.Context, id int64, u plan.Unit, of int, err error) {
	fctx := context.WithoutCancel(ctx)
	attempt, serr := r.Store.StartStep(fctx, id, u.Seq)
	state := failedState(ctx, err)
	if serr == nil {
		serr = r.Store.FinishStep(fctx, id, u.Seq, state, nil, r.scrub(err.Error()))
	}
	if serr != nil {
		r.logger().Error("record a failed step", "seq", u.Seq, "err", serr)
	}
	r.unitEvent(UnitEvent{Unit: u, Of: of, State: state, Attempt: attempt, Err: err})
}

func failedState(ctx context.Context, err error) store.StepState {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return store.StepInterrupted
	}
	return store.StepFailed
}

// runUnit runs one unit on its started targets and records its state.
func (r *Runner) runUnit(ctx context.Context, id int64, p *plan.Plan, u plan.Unit, of int, running []*Running, prog json.RawMessage) error {
	attempt, err := r.Store.StartStep(ctx, id, u.Seq)
	if err != nil {
		return &scenario.StoreError{Op: "record the step", Err: err}
	}
	r.unitEvent(UnitEvent{Unit: u, Of: of, State: store.StepRunning, Attempt: attempt})
	env := &scenario.Env{Store: r.Store, Log: r.Log, Scrub: r.Scrub, ToolVersion: r.ToolVersion, Observer: r.Observer.Scenario,
		StoreWait: r.StoreWait, NoCrossCheck: r.NoCrossCheck,
		Experiment: &scenario.ExperimentContext{ID: id, Name: p.Name, Target: u.TargetName(), Seq: u.Seq, Step: u.Step.Kind.Name}}
	if len(running) == 1 {
		env.Instance, env.OwnIO, env.Layer = running[0].Instance, running[0].OwnIO, running[0].Layer
		if m := running[0].Managed; m != nil {
			env.Managed = m
		}
	}
	x := &Exec{Plan: p, Env: env, Target: running[0], Targets: running, Attempt: attempt, Progress: prog,
		save: func(ctx context.Context, v any) error {
			if err := r.Store.SaveStepProgress(ctx, id, u.Seq, scenario.JSON(v)); err != nil {
				return &scenario.StoreError{Op: "record the step's progress", Err: err}
			}
			return nil
		}}
	var oc Outcome
	var rerr error
	before := outages(running)
	if perr := placeUnit(p, u, running, env); perr != nil {
		rerr = perr
	} else if step, ok := u.Step.Step.(Step); ok {
		oc, rerr = step.Run(ctx, x)
	} else {
		rerr = fmt.Errorf("step kind %s has nothing that runs it", u.Step.Kind.Name)
	}
	if lost := outages(running)[len(before):]; len(lost) > 0 {
		// The step's runs through the lost agent failed on their own; the
		// step says why, and is measured again on resume.
		oerr := fmt.Errorf("the agent of a target's host did not answer during the step (%d time(s); last: %s)", len(lost), lost[len(lost)-1])
		r.note("%v", oerr)
		if rerr == nil || OnlyContaminated(rerr) {
			rerr = errors.Join(rerr, oerr)
		}
	}
	state, errText := store.StepDone, ""
	switch {
	case rerr != nil && OnlyContaminated(rerr):
		// Measured and stored, the contaminated runs marked and left out:
		// done, with why its figures are fewer.
		errText = r.scrub(rerr.Error())
	case rerr != nil:
		state, errText = failedState(ctx, rerr), r.scrub(rerr.Error())
	}
	fctx := context.WithoutCancel(ctx)
	if err := r.Store.FinishStep(fctx, id, u.Seq, state, scenario.JSON(oc), errText); err != nil {
		rerr = errors.Join(rerr, &scenario.StoreError{Op: "record the step's result", Err: err})
	}
	r.unitEvent(UnitEvent{Unit: u, Of: of, State: state, Attempt: attempt, Outcome: oc, Err: rerr})
	if rerr != nil {
		where := u.TargetName()
		if where == "" {
			where = "all targets"
		}
		return fmt.Errorf("%s on %s: %w", u.Step.Kind.Name, where, rerr)
	}
	return nil
}
