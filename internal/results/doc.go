// Package results reads what the results store holds into the report
// model: a profile with its steps, repeats, statistics, host figures and
// per-second series; the context of a result flattened to keys. It is
// what `oltplab report`, `compare`, `results export` and an experiment's
// report share, so that every view counts the same runs (superseded runs
// never count).
//
// It reads stored summaries through internal/summary alone, and must not
// import cli, experiment or scenario (nor anything else that measures:
// serve links it); internal/layering_test.go holds its imports.
package results
