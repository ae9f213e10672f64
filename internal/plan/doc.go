// Package plan owns the plan language of `oltplab experiment`: one YAML
// file that names the targets of an infrastructure comparison (managed
// instances oltplab starts itself, written one by one or as a matrix, and
// external URLs), the scale and a list of steps. It decodes a plan
// strictly (internal/yamldoc: errors name the file, the line and the
// field), expands a matrix into named targets, checks a plan against the
// host without running anything (Validate), orders its work (Schedule,
// with an estimate) and keeps the commented Example that --help prints.
// Commands that generate a plan build a File and Encode it.
//
// Step kinds register their option types here (Register, Kind, Step);
// their options share Load, the driver options written once with their
// yaml names, flags and conversion to driver.Options. What runs a step is
// internal/experiment's.
//
// It imports yamldoc, cost (targets' prices), dialect (targets' URLs),
// driver (Load), instance (a managed instance's spec and its checks on
// the host), load and store (their limits and URL forms). It must not
// import experiment, scenario, results, report or cli.
package plan
