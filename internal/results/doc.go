// Package results reads what the results store holds into the report
// model: a profile with its steps, repeats, statistics, host figures and
// per-second series; the context of a result flattened to keys. It is
// what `oltplab report`, `compare`, `results export` and an experiment's
// report share, so that every view counts the same runs (superseded runs
// never count).
//
// It may import driver, profile, report, sampler, scenario, store and
// sysstat. It must not import cli or experiment.
package results
