// Package fio owns oltplab's storage micro-benchmarks (experiment 9 of the
// methodology): the named profiles the published studies use, the fio
// command line that runs them, and the parsing of fio's JSON output into
// per-direction IOPS, throughput and completion-latency percentiles.
//
// It orchestrates the fio program and never re-implements it. A Bench
// places one test file in the directory under test, sized so the page
// cache could not hold it, lays it out once, runs each profile as its own
// fio process with direct I/O, and removes the file afterwards, also on
// error or interruption. fio never outlives the command: a cancelled
// context stops it (SIGINT to its process group, then SIGKILL), and on
// Linux the kernel kills it if oltplab dies (Pdeathsig).
//
// The parser is a pure function over an io.Reader, tested on output
// captured from fio 3.33 (testdata/).
//
// It may import internal/sysstat (host memory, the device under a
// directory) and internal/claim (where the test file may go, its mark and
// removal); it must not import internal/cli, internal/store or
// internal/driver: it measures, and its callers store and render (and
// record the test file through a Tracker).
package fio
