package plan

import "time"

// Unit is one entry of an experiment's schedule: one step on one target,
// or one step over all targets.
type Unit struct {
	Seq     int // from 1
	Step    *Entry
	Targets []*TargetSpec // one for a PerTarget step
	// Estimate is how long the unit should take.
	Estimate time.Duration
}

// TargetName is the unit's target, "" for a step over all targets.
func (u Unit) TargetName() string {
	if u.Step.Scope() == OverTargets {
		return ""
	}
	return u.Targets[0].Name
}

// startEstimate is what starting (and stopping) a target costs in a
// schedule: a managed server's start, or opening a database.
func startEstimate(t *TargetSpec) time.Duration {
	if t.Managed() && t.Instance.Engine != "sqlite" {
		return 10 * time.Second
	}
	return time.Second
}

// Schedule is the plan's order of work. Consecutive per-target steps run
// target by target (each target started once for all of them, then
// stopped: one server at a time on the host); a step over targets runs
// once with every target started.
func (p *Plan) Schedule() []Unit {
	var out []Unit
	add := func(s *Entry, ts []*TargetSpec) {
		out = append(out, Unit{Seq: len(out) + 1, Step: s, Targets: ts, Estimate: s.Step.Estimate(p, ts[0])})
	}
	for _, seg := range p.segments() {
		if seg[0].Scope() == OverTargets {
			add(seg[0], p.Targets)
			continue
		}
		for _, t := range p.Targets {
			for _, s := range seg {
				add(s, []*TargetSpec{t})
			}
		}
	}
	return out
}

// segments splits the steps into runs of consecutive per-target steps and
// single over-targets steps.
func (p *Plan) segments() [][]*Entry {
	var segs [][]*Entry
	for _, s := range p.Steps {
		n := len(segs)
		if s.Scope() == PerTarget && n > 0 && segs[n-1][0].Scope() == PerTarget {
			segs[n-1] = append(segs[n-1], s)
			continue
		}
		segs = append(segs, []*Entry{s})
	}
	return segs
}

// Estimate is the whole schedule's estimated duration, target starts
// included.
func (p *Plan) Estimate() time.Duration {
	var d time.Duration
	for _, u := range p.Schedule() {
		d += u.Estimate
	}
	for range p.segments() {
		for _, t := range p.Targets {
			d += startEstimate(t)
		}
	}
	return d
}
