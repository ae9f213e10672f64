// Package experiment runs plan files: one YAML file names the targets of
// an infrastructure comparison (database instances oltplab starts itself,
// written one by one or as a matrix, and external URLs), the scale, and a
// list of steps (build and profile on each target; parallel and
// neighbours over all targets at once); one plan run is one experiment in
// the results store, and every measurement of it is tied to it. It owns the plan format and its strict decoding
// (errors name the file, line and field), the expansion of a matrix into
// named targets, validation without running (--dry-run) with a schedule
// and its estimated duration, the schedule itself (which target runs
// which step when, starting and stopping managed instances), the state of
// each (target, step) in the store, and resuming an interrupted
// experiment without redoing or double-counting anything.
//
// A step kind is one registered Kind with its own options (decoded
// strictly from the plan) that runs per target or over a set of targets,
// and may contribute a section to the experiment's report. The measuring
// itself is internal/scenario's: a step calls scenario.Env, never the
// driver or the loader directly.
//
// A target's optional prices are decoded into cost.Prices and validated
// with the plan (priced targets share one currency and period), and the
// plan's cost section sets the latency objective and target NOPM: the
// report prices each target with what its last profile step measured
// (cost per 1,000 NOPM and TPM, total cost, cores needed, savings against
// the baseline), its cores taken from the prices, the CPUs a managed
// instance was confined to, or the recorded host.
//
// It may import cost, dialect, driver, instance, load, profile, report,
// results, sampler, scenario, store, summary and sysstat. It must not
// import cli, and nothing but cli imports it.
package experiment
