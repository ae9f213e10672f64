// Package experiment runs plans (internal/plan): one plan run is one
// experiment in the results store, and every measurement of it is tied to
// it. It owns the step kinds (each registers its options with plan.Register
// from its own file and implements Step), the schedule's execution (which
// target runs which step when, starting and stopping managed instances),
// the state of each (target, step) in the store, resuming an interrupted
// experiment without redoing or double-counting anything, and the
// experiment's report sections.
//
// A step measures through internal/scenario (scenario.Env), never the
// driver or the loader directly. The plan's cost section sets the latency
// objective and target NOPM: the report prices each target with what its
// last profile step measured (cost per 1,000 NOPM and TPM, total cost,
// cores needed, savings against the baseline), its cores taken from the
// prices, the CPUs a managed instance was confined to, or the recorded
// host.
//
// It may import claim, cost, dialect, driver, fio, instance, load, plan, profile,
// report, results, sampler, scenario, store, summary, sysstat and yamldoc. It
// must not import cli, and nothing but cli imports it.
package experiment
