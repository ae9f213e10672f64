// Package plan owns the plan language of `oltplab experiment`: one YAML
// file that names the targets of an infrastructure comparison (managed
// instances, written one by one or as a matrix, and external URLs), the
// scale and a list of steps. It decodes a plan strictly (internal/yamldoc),
// expands a matrix into named targets, checks a plan against the host
// (Validate), orders its work (Schedule, with an estimate) and keeps the
// Example that --help prints; commands that generate a plan build a File
// and Encode it. Step kinds register their option types here (Register);
// their options share Load, the driver options written once. What runs a
// step is internal/experiment's.
//
// It imports yamldoc, cost, dialect, driver, instance, load and store (their
// options, limits and URL forms); never experiment, scenario, results,
// report or cli.
package plan
