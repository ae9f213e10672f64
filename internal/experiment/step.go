package experiment

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/scenario"
)

// Scope says what one execution of a step covers.
type Scope int

const (
	// PerTarget: the step runs once on each target, one target at a time
	// (build, profile).
	PerTarget Scope = iota
	// OverTargets: the step runs once over all the plan's targets at the
	// same time, all of them started (noisy neighbours, parallel targets).
	OverTargets
)

func (s Scope) String() string {
	if s == OverTargets {
		return "over targets"
	}
	return "per target"
}

// Kind is one kind of step a plan can list. A kind registers itself
// (Register) from its file's init; the plan's section named after the
// kind (profile:) and the step's own options (- profile: {vus: [8]}) are
// decoded, strictly and in that order, into the value New returns.
type Kind struct {
	Name  string
	Scope Scope
	// Summary is one line for `oltplab experiment --help`.
	Summary string
	// New returns the step with its default options: a pointer to a
	// struct whose yaml-tagged fields are the options.
	New func() Step
}

// Step is one decoded step of a plan.
type Step interface {
	// Prepare checks the options against the plan (what can be known
	// without the host) and fills what they imply.
	Prepare(p *Plan) error
	// Describe is one line for the schedule: "profile: 1,2,4 VUs × 2
	// repeats, ramp-up 10s, 30s measured".
	Describe() string
	// Estimate is how long the step should take on t (on the first of the
	// targets for an OverTargets step).
	Estimate(p *Plan, t *TargetSpec) time.Duration
	// Run performs the step. It records every measurement through x.Env
	// and may save its progress (x.Save) so that a resumed attempt
	// continues instead of starting over.
	Run(ctx context.Context, x *Exec) (Outcome, error)
}

// ConnectionUser is a Step that opens client connections: managed
// instances accept as many as the largest step of the plan asks for.
type ConnectionUser interface {
	Connections(p *Plan) int
}

// TargetChecker is a Step with checks of its own on a target's host
// (free disk space for a build), run by Validate.
type TargetChecker interface {
	CheckTarget(p *Plan, t *TargetSpec) error
}

// Outcome is what a finished step reports: a headline for `experiment
// show` and the ids of what it stored.
type Outcome struct {
	Headline string  `json:"headline"`
	RunIDs   []int64 `json:"run_ids,omitempty"`
	// ProfileID is the profile a profile step stored (0 otherwise).
	ProfileID int64 `json:"profile_id,omitempty"`
}

// Exec is what one execution of a step is given.
type Exec struct {
	Plan *Plan
	// Env records into the results store, tied to the experiment and to
	// this (target, step); its Observer renders progress.
	Env *scenario.Env
	// Target is the target of a PerTarget step; Targets all targets of an
	// OverTargets step (Target is then the first).
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

var (
	kindsMu sync.Mutex
	kinds   = map[string]*Kind{}
)

// Register makes a step kind available to plans. It panics on a
// duplicate name: registration happens in init, a programming error.
func Register(k Kind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[k.Name]; dup {
		panic("experiment: step kind registered twice: " + k.Name)
	}
	kinds[k.Name] = &k
}

func lookupKind(name string) *Kind {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	return kinds[name]
}

// KindNames lists the registered step kinds, sorted.
func KindNames() []string {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Kinds lists the registered step kinds, sorted by name.
func Kinds() []Kind {
	var out []Kind
	for _, n := range KindNames() {
		out = append(out, *lookupKind(n))
	}
	return slices.Clip(out)
}
