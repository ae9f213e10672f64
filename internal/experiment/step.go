package experiment

import (
	"context"
	"encoding/json"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/scenario"
)

// Step is a step of a plan that runs: its options (plan.Step) and what
// measures them. Every kind registered here implements it (each file
// asserts it at compile time).
type Step interface {
	plan.Step
	// Run performs the step. It records every measurement through x.Env
	// and may save its progress (x.Save) so that a resumed attempt
	// continues instead of starting over.
	Run(ctx context.Context, x *Exec) (Outcome, error)
}

// Outcome is what a finished step reports: a headline for `experiment
// show` and the ids of what it stored.
type Outcome struct {
	Headline string  `json:"headline"`
	RunIDs   []int64 `json:"run_ids,omitempty"`
	// ProfileID is the profile a profile step stored (0 otherwise).
	ProfileID int64 `json:"profile_id,omitempty"`
	// Profiles are the profiles a step over all targets stored, by
	// target name (a paired comparison; "<name>/aa" its A/A check).
	Profiles map[string]int64 `json:"profiles,omitempty"`
}

// Exec is what one execution of a step is given.
type Exec struct {
	Plan *plan.Plan
	// Env records into the results store, tied to the experiment and to
	// this (target, step); its Observer renders progress.
	Env *scenario.Env
	// Target is the target of a plan.PerTarget step; Targets all targets of an
	// plan.OverTargets step (Target is then the first).
	Target  *Running
	Targets []*Running
	// Attempt counts executions of this (target, step), from 1: more
	// than 1 is a resumed or retried step.
	Attempt int
	// Progress is what an earlier attempt saved with Save (nil if none).
	Progress json.RawMessage
	save     func(ctx context.Context, v any) error
}

// Save records the step's progress, so that an attempt after an
// interruption can continue from it.
func (x *Exec) Save(ctx context.Context, v any) error { return x.save(ctx, v) }
