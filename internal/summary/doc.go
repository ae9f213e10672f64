// Package summary owns what a result stores as its summary (the JSON of a
// run's summary column) and the names of the series a run stores beside
// it: one type per kind of result (Run, Monitor, Build, Check, Storage,
// Backup, Rebuild, CPU, ParallelWindow, Neighbours, TPCHBuild, TPCHCheck,
// TPCH) with its parts, its
// decoder (a summary written by a newer oltplab is refused, never
// misread), its Headline (the one line every view shows for it), and the
// status a result is stored with (Status: one ladder for every kind).
//
// internal/scenario writes these types; results, report, site, experiment
// and cli read them through this package alone, so that reading a store
// never links the code that measures.
//
// Fields are only ever added; a change an older reader would misread (a
// field renamed, a unit changed) takes the kind's next version and Decode
// converts the older ones. testdata/ keeps a stored summary of every kind
// and version, decoded by the golden tests.
//
// It may import store, profile, and the packages whose data types are
// stored inside a summary: driver (a run's result), sampler and sysstat
// (what the host did), dialect (an index rebuild), tpcc (the load's
// constants, the consistency conditions) and tpch (the TPC-H tests'
// timings and figures, the checks of a TPC-H database). It must not
// import scenario, experiment, cli, instance, load, tpchload, tpchdriver,
// fio, results, report or a dialect package: where a measuring package's own type is stored (fio's report,
// a managed instance's restart or backup tools, the build's result), the
// stored form is declared here and scenario converts it, guarded by a test
// that both marshal alike.
package summary
