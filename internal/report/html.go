package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

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

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"fit": fitTable}).Parse(reportTemplate))

// Tables wider than a page: one of more than maxColumns columns whose
// rows are few (at most maxTransposed-1) is drawn transposed, its
// columns as rows, so that it fits a screen or a printed page (the
// others wrap their cells, report.css).
const (
	maxColumns    = 10
	maxTransposed = 7
)

// fitTable is t as the HTML report draws it: transposed when it is wide
// and short (a cost table of a few targets, the per-step figures of a
// few steps): the header becomes the first column, each row a column
// headed by its first cell, each cell keeping its marks. Right-aligned
// are the new columns when most of the old ones were.
func fitTable(t table) table {
	if len(t.Header) <= maxColumns || len(t.Rows)+1 > maxTransposed || len(t.Rows) == 0 {
		return t
	}
	right := 0
	for _, r := range t.Right {
		if r {
			right++
		}
	}
	out := table{ID: t.ID, Sub: t.Sub, Title: t.Title, Note: t.Note, Header: []string{t.Header[0]}, Right: []bool{false}}
	for _, r := range t.Rows {
		head := ""
		if len(r.Cells) > 0 {
			head = r.Cells[0].Text
		}
		out.Header, out.Right = append(out.Header, head), append(out.Right, 2*right > len(t.Right))
	}
	for j := 1; j < len(t.Header); j++ {
		cells := []cell{{Text: t.Header[j]}}
		for _, r := range t.Rows {
			c := cell{Text: dash}
			if j < len(r.Cells) {
				c = r.Cells[j]
			}
			cells = append(cells, c)
		}
		out.Rows = append(out.Rows, row{Cells: cells})
	}
	return out
}

// htmlPage is the data of report.html.tmpl.
type htmlPage struct {
	Title, Generated, Version, UPlotVersion, HighCV, DiskP99Note, KneeRule string
	MinRepeats                                                             int
	// Lead is the sentence under the title.
	Lead string
	// Links are Input.Links.
	Links []Link

	// Intro are the tables before the sections (an experiment's targets
	// and schedule); Outro those after them (what differs between its
	// targets).
	Intro, Outro []table
	Sections     []htmlSection
	// HasHost: some section has host charts (the method notes them).
	HasHost bool
	// Study: an experiment's report, whose parts include its own method.
	Study bool
	// AllCharts is every chart, in page order, for the script.
	AllCharts []chartSpec

	UPlotJS, JS   template.JS
	UPlotCSS, CSS template.CSS
}

// htmlSection is one part of the page: the profile report itself, or one
// step of an experiment (then with a title, and its headings one level
// down).
type htmlSection struct {
	ID, Title, Note string
	Sub             bool    // headings inside are h3
	Top             []table // before the charts: profiles, peaks and knees
	// Charts are the charts against virtual users of throughput and
	// latency, HostCharts those of host and database figures (empty
	// without samplers), SeriesCharts the per-second series of chosen
	// runs.
	Charts, HostCharts, SeriesCharts []chartSpec
	// MonitorCharts are the per-second series of monitor results.
	MonitorCharts []chartSpec
	Rest          []table
	// Part: a part of the study report (a page break before it in
	// print); its content is Blocks.
	Part   bool
	Blocks []block
	// TimeCharts are the time series a step draws itself, after Rest.
	TimeCharts []chartSpec
}

// HTML writes the report as one self-contained HTML page: the tables of
// Markdown plus charts (NOPM, TPM and TPM per virtual user against
// virtual users with 95% confidence bands, the NOPM ratio to the first
// profile, p95/p99 latency per transaction kind; when the steps were
// sampled, CPU idle and iowait, data-disk latency and IOPS and wait
// classes; the per-second series of a chosen run) drawn by the embedded
// uPlot from inline JSON. An experiment's report has those for each of
// its profile steps, with its targets, schedule and the context that
// differs between targets around them. Every user string is escaped by
// html/template; a Content-Security-Policy forbids network requests.
func HTML(w io.Writer, in Input) error {
	page := htmlPage{
		Title:        in.Title,
		Generated:    formatTime(in.Generated),
		Version:      versionOrDev(in.Version),
		UPlotVersion: uPlotVersion,
		HighCV:       formatPercent(profile.DefaultHighVariationCV),
		DiskP99Note:  diskP99Note,
		KneeRule:     profile.Rule,
		MinRepeats:   profile.MinRepeats,
		UPlotJS:      template.JS(uPlotJS),
		JS:           template.JS(reportJS),
		UPlotCSS:     template.CSS(uPlotCSS),
		CSS:          template.CSS(reportCSS),
		Links:        in.Links,
	}
	if e := in.Experiment; e != nil {
		if page.Title == "" {
			page.Title = "Experiment " + e.Name
		}
		page.Lead = experimentLead(e)
		page.Sections = newStudy(e).parts()
		page.Study = true
	} else {
		if page.Title == "" {
			page.Title = "Performance profiles"
		}
		if len(in.Profiles)+len(in.Monitors) > 0 || len(in.Sections) == 0 {
			v := newView(in)
			page.Lead = profilesLead(v)
			page.Sections = []htmlSection{profileSection(v, "", "", "", false)}
		} else {
			page.Study = true // the profiles' method part does not apply
		}
		page.Sections = append(page.Sections, looseParts(in.Sections)...)
	}
	for _, sec := range page.Sections {
		for _, c := range slices.Concat(sec.Charts, sec.HostCharts, sec.SeriesCharts, sec.MonitorCharts, sec.TimeCharts) {
			if c.Bars == "" { // grouped bars are drawn already
				page.AllCharts = append(page.AllCharts, c)
			}
		}
		page.HasHost = page.HasHost || len(sec.HostCharts) > 0
		for _, b := range sec.Blocks {
			if b.Chart != nil {
				page.AllCharts = append(page.AllCharts, *b.Chart)
			}
		}
	}
	if page.AllCharts == nil {
		page.AllCharts = []chartSpec{}
	}
	if err := pageTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

// profilesLead is the sentence under the title of a profile report.
func profilesLead(v *view) string {
	n := len(v.profiles)
	s := fmt.Sprintf("%d profile", n)
	if n != 1 {
		s += "s"
	}
	if n > 1 {
		s += "; ratios are taken against the first, " + v.profiles[0].Name
	}
	if m := len(v.monitors); m > 0 {
		s += fmt.Sprintf("; %d monitor result", m)
		if m != 1 {
			s += "s"
		}
	}
	return s + "."
}

// profileSection renders the profiles of v: tables, charts and per-second
// series. prefix makes its element ids unique on a page of several; the
// context table is left out of an experiment's sections (its outro shows
// what differs).
func profileSection(v *view, prefix, title, note string, sub bool) htmlSection {
	sec := htmlSection{ID: prefix, Title: title, Note: note, Sub: sub,
		Charts: v.charts(), HostCharts: v.hostCharts(), SeriesCharts: slices.Concat(v.overlayCharts(), v.seriesCharts()), MonitorCharts: v.monitorCharts()}
	for _, cs := range [][]chartSpec{sec.Charts, sec.HostCharts} {
		for i := range cs {
			cs[i].Note = strings.TrimSpace(cs[i].Note + " " + valueNotes(cs[i]))
			if len(cs[i].X) <= maxBarGroups {
				cs[i].Bars = barsSVG(cs[i])
			}
		}
	}
	if bars := v.cpuShareBars("chart-cpu-share"); bars != "" {
		sec.HostCharts = append(sec.HostCharts, chartSpec{ID: "chart-cpu-share", Title: "Who used the CPU", Note: v.cpuShareNote(), Bars: bars})
	}
	tables := v.tables()
	if sub {
		tables = slices.DeleteFunc(tables, func(t table) bool { return t.ID == "context" })
	}
	split := 0 // a report of monitors alone has no profile tables to lead with
	if len(v.profiles) > 0 {
		split = min(2, len(tables))
	}
	sec.Top, sec.Rest = tables[:split], tables[split:]
	if prefix != "" {
		for _, cs := range [][]chartSpec{sec.Charts, sec.HostCharts, sec.SeriesCharts, sec.MonitorCharts} {
			for i := range cs {
				cs[i].ID = prefix + cs[i].ID
				if cs[i].Sync != "" {
					cs[i].Sync = prefix + cs[i].Sync
				}
			}
		}
		for _, ts := range [][]table{sec.Top, sec.Rest} {
			for i := range ts {
				ts[i].ID, ts[i].Sub = prefix+ts[i].ID, sub
			}
		}
	}
	return sec
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
