// Package report renders performance profiles and their comparison
// (METHODOLOGY.md experiments 1 and 2) as a self-contained HTML page
// with charts, Markdown, CSV and JSON, and an experiment as the study
// report: its sections in the order the published studies use (summary,
// system under test, storage, profiles, CPU, devices, waits, backup,
// rebuild, neighbours, cost, method, appendix; see studyParts), printable
// one section per page. Every table fits the page: long values break
// anywhere (report.css), a wide table of few rows is drawn transposed
// (fitTable); TestReportFitsThePage measures it in Chromium at 1,000 px,
// with the print stylesheet at an A4 page's width, and in the PDF
// Chromium prints. The Markdown report writes a table where the HTML
// draws a chart.
//
// It owns the presentation only: it reads a plain Input model that the
// caller fills (from the results store), and leaves the statistics to
// internal/profile and the price arithmetic to internal/cost (whose
// tables it lays out). It does no I/O beyond the io.Writer it is given
// and must not import internal/store, internal/cli, internal/driver,
// internal/dialect or any database package.
//
// The HTML report embeds its chart library (uPlot, see assets/README.md)
// and its data, carries a Content-Security-Policy that forbids every
// network request, and opens offline from a file. Comparisons of few
// steps are drawn as grouped bars in inline SVG, which print as shown.
package report
