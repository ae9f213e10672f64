// Package fio owns oltplab's storage micro-benchmarks (experiment 9 of the
// methodology): the named profiles of the published studies, the fio
// command line, and fio's JSON parsed into per-direction IOPS, throughput
// and completion-latency percentiles. It runs the fio program and never
// re-implements it; fio never outlives the command.
//
// It imports only sysstat (host memory, the device under a directory) and
// claim (where the test file may go, its mark and removal): it measures,
// and its callers store and render.
package fio

// A Bench places one test file in the directory under test, sized so the
// page cache could not hold it, lays it out once, runs each profile as its
// own fio process with direct I/O, and removes the file afterwards, also on
// error or interruption. A cancelled context stops fio (SIGINT to its
// process group, then SIGKILL), and on Linux the kernel kills it if oltplab
// dies (Pdeathsig). The parser is a pure function over an io.Reader, tested
// on output captured from fio 3.33 (testdata/).
