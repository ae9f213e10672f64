// Package profile owns the arithmetic of a performance profile (a sweep
// of virtual-user counts, METHODOLOGY.md experiments 1 and 2): parsing
// the sequence of virtual users (fib:89, pow2:128, geo:256:1024:1.41),
// the execution order of steps and repeats, the spread of repeated
// measurements (mean, sample standard deviation, coefficient of
// variation, Student-t 95% confidence interval, on the log scale for a
// positive figure, from MinRepeats runs on), the plateau verdict (peak
// and knee), the comparison of two profiles (ratio of means with an
// interval on the log scale, differing context keys), the paired ratio
// of runs that alternate between targets with its A/A check, and the
// stopping rule of `repeat: auto` (StopRule, Adaptive).
//
// It is pure: plain values in, plain values out, no I/O, no clock. It
// must not import internal/store, internal/cli, internal/driver,
// internal/dialect or any database package; callers convert their
// records into the structs declared here.
package profile
