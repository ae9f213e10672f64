// Package experiment runs plans (internal/plan): one plan run is one
// experiment in the results store, and every measurement of it is tied to
// it. It owns the step kinds (each registers its options with plan.Register
// from its own file and implements Step), the schedule's execution (which
// target runs which step when, starting and stopping managed instances),
// the state of each (target, step) in the store, resuming an interrupted
// experiment without redoing or double-counting anything, and the
// experiment's report sections. A step measures through internal/scenario
// (scenario.Env), never the driver or the loader directly.
//
// It may import the layers below it (plan, scenario, results, report, fio,
// instance, ...), never cli; only cli imports it.
package experiment
