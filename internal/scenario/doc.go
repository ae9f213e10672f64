// Package scenario runs oltplab's measured procedures and records every
// measurement in the results store: a build, a consistency check, a
// performance profile (a virtual-user sequence with repeats and the
// reset/checkpoint hygiene between steps), a monitor, and the
// infrastructure scenarios: storage micro-benchmarks, backup and restore
// cycles, index rebuilds with a cold and a warm cache, the CPU
// calibration, several targets driven with one synchronised measured
// window (Window, Parallel) and noisy neighbours (Neighbours). `oltplab
// run` and an experiment plan's `profile` step are the same code:
// internal/cli parses flags and renders, internal/experiment schedules
// steps over targets, and both call this package.
//
// A scenario never prints. What a user should see while it works (a step
// starting, live rates, a run stored) goes to the Observer of its Env; the
// caller decides how to render it. Errors carry their meaning as types
// (StoreError, RunError, SuspectError, SpaceError, UnsupportedError,
// ErrNoSchema, ErrNotPostBuild) for the caller to map onto exit codes.
//
// Every timed run's database figures are cross-checked against the
// driver's own counts (driver.Result.CheckCounters); a run that disagrees
// is stored as suspect, and a profile with one returns a SuspectError
// once every step has run; so do Parallel and Neighbours, whose
// synchronised windows carry the mark of a suspect target.
//
// What a scenario creates on disk for its own time (a backup cycle's
// directory, a restored copy, fio's test file) is made and removed through
// internal/claim, marked, and recorded in the store before it exists
// (leftover.go), so that RemoveLeftovers can remove what a killed oltplab
// left.
//
// What it stores as a result's summary is a type of internal/summary, with
// the status summary.Status gives it; where a summary holds a type of fio,
// instance, latency or load, scenario converts it to the stored form summary
// declares (TestStoredForms keeps the two alike).
//
// The analytic workload's scenarios (tpch.go) are a TPC-H build
// (tpchload), a check of a TPC-H database, and a run of TPC-H's tests
// (tpchdriver) with the samplers, stored as kinds tpch-build, tpch-check
// and tpch.
//
// It may import agent (a remote host's sampler), claim, dialect, driver,
// fio, instance (backups with the engines' own tools, restores into
// managed instances, a managed server to restart), latency (a managed
// instance's latency layer), load, profile, sampler, store, summary,
// sysstat, tpcc, tpchload and tpchdriver. It must not import cli,
// experiment or report.
package scenario
