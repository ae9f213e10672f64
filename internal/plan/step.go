package plan

import (
	"slices"
	"sort"
	"sync"
	"time"
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
	// NoWarehouses: the step does not use the TPC-C schema, so a plan
	// whose steps are all such needs no warehouses (the analytic
	// workload builds its own).
	NoWarehouses bool
	// New returns the step with its default options: a pointer to a
	// struct whose yaml-tagged fields are the options. What runs it is
	// internal/experiment's (experiment.Step).
	New func() Step
}

// Step is the options of one step of a plan, decoded: what the plan
// language knows of a step. The kinds internal/experiment registers also
// run (experiment.Step).
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
}

// Scoper is a Step whose options decide its scope, in place of its
// kind's: a profile step that alternates its runs between the targets
// (interleave: targets) runs over all of them at once.
type Scoper interface {
	Scope() Scope
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
		panic("plan: step kind registered twice: " + k.Name)
	}
	kinds[k.Name] = &k
}

// LookupKind returns the registered kind of that name, nil when there is
// none.
func LookupKind(name string) *Kind {
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
		out = append(out, *LookupKind(n))
	}
	return slices.Clip(out)
}
