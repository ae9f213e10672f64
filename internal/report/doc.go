// Package report renders performance profiles and their comparison
// (METHODOLOGY.md experiments 1 and 2) as a self-contained HTML page
// with charts, Markdown, CSV and JSON.
//
// It owns the presentation only: it reads a plain Input model that the
// caller fills (from the results store), and leaves the statistics to
// internal/profile. It does no I/O beyond the io.Writer it is given and
// must not import internal/store, internal/cli, internal/driver,
// internal/dialect or any database package.
//
// The HTML report embeds its chart library (uPlot, see assets/README.md)
// and its data, carries a Content-Security-Policy that forbids every
// network request, and opens offline from a file.
package report
