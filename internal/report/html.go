package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"

	"github.com/oltplab/oltplab/internal/profile"
)

// uPlotVersion is the version of the embedded chart library (see
// assets/README.md).
const uPlotVersion = "1.6.32"

var (
	//go:embed assets/uPlot.iife.min.js
	uPlotJS string
	//go:embed assets/uPlot.min.css
	uPlotCSS string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.css
	reportCSS string
	//go:embed assets/report.html.tmpl
	reportTemplate string
)

var pageTemplate = template.Must(template.New("report").Parse(reportTemplate))

// htmlPage is the data of report.html.tmpl.
type htmlPage struct {
	Title, Generated, Version, UPlotVersion, HighCV, DiskP99Note, KneeRule string
	MinRepeats                                                             int

	Profiles []string
	Monitors int
	Top      []table // before the charts: profiles, peaks and knees
	Rest     []table
	// Charts are the charts against virtual users of throughput and
	// latency, HostCharts those of host and database figures (empty
	// without samplers), SeriesCharts the per-second series of chosen
	// runs. AllCharts is all of them, in page order, for the script.
	Charts, HostCharts, SeriesCharts, MonitorCharts, AllCharts []chartSpec

	UPlotJS, JS   template.JS
	UPlotCSS, CSS template.CSS
}

// HTML writes the report as one self-contained HTML page: the tables of
// Markdown plus charts (NOPM, TPM and TPM per virtual user against
// virtual users with 95% confidence bands, the NOPM ratio to the first
// profile, p95/p99 latency per transaction kind; when the steps were
// sampled, CPU idle and iowait, data-disk latency and wait classes; the
// per-second series of a chosen run) drawn by the embedded
// uPlot from inline JSON. Every user string is escaped by html/template;
// a Content-Security-Policy forbids network requests.
func HTML(w io.Writer, in Input) error {
	v := newView(in)
	page := htmlPage{
		Title:         in.Title,
		Generated:     formatTime(in.Generated),
		Version:       versionOrDev(in.Version),
		UPlotVersion:  uPlotVersion,
		HighCV:        formatPercent(profile.DefaultHighVariationCV),
		DiskP99Note:   diskP99Note,
		KneeRule:      profile.Rule,
		MinRepeats:    profile.MinRepeats,
		Charts:        v.charts(),
		HostCharts:    v.hostCharts(),
		SeriesCharts:  v.seriesCharts(),
		MonitorCharts: v.monitorCharts(),
		Monitors:      len(v.monitors),
		UPlotJS:       template.JS(uPlotJS),
		JS:            template.JS(reportJS),
		UPlotCSS:      template.CSS(uPlotCSS),
		CSS:           template.CSS(reportCSS),
	}
	if page.Title == "" {
		page.Title = "Performance profiles"
	}
	page.AllCharts = slices.Concat(page.Charts, page.HostCharts, page.SeriesCharts, page.MonitorCharts)
	if page.AllCharts == nil {
		page.AllCharts = []chartSpec{}
	}
	for _, p := range v.profiles {
		page.Profiles = append(page.Profiles, p.Name)
	}
	tables := v.tables()
	split := 0
	if len(v.profiles) > 0 {
		split = min(2, len(tables))
	}
	page.Top, page.Rest = tables[:split], tables[split:]
	if err := pageTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

// Class is the HTML class list of a cell.
func (c cell) Class(right bool) string {
	s := ""
	add := func(name string) {
		if s != "" {
			s += " "
		}
		s += name
	}
	if right {
		add("num")
	}
	if c.Warn {
		add("warn")
	}
	if c.Dim {
		add("ns")
	}
	if c.Bad {
		add("bad")
	}
	return s
}
