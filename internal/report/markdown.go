package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Markdown writes the report as Markdown: the same tables as the HTML
// report (profiles, peaks and knees, ratios, per-step figures, latency,
// host and database figures of sampled steps, context with differing
// keys in bold), without charts.
func Markdown(w io.Writer, in Input) error {
	bw := bufio.NewWriter(w)
	title := in.Title
	switch {
	case title != "":
	case in.Experiment != nil:
		title = "Experiment " + in.Experiment.Name
	default:
		title = "Performance profiles"
	}
	fmt.Fprintf(bw, "# %s\n\n", mdEscape(title))
	fmt.Fprintf(bw, "Generated %s by oltplab %s.\n", formatTime(in.Generated), mdEscape(versionOrDev(in.Version)))
	if e := in.Experiment; e != nil {
		fmt.Fprintf(bw, "\n%s\n", mdEscape(experimentLead(e)))
		for _, part := range newStudy(e).parts() {
			fmt.Fprintf(bw, "\n## %s\n", mdEscape(part.Title))
			level := "###" // after a step's heading, its tables are one level down
			for _, b := range part.Blocks {
				if b.Heading != "" {
					fmt.Fprintf(bw, "\n### %s\n", mdEscape(b.Heading))
					level = "####"
				}
				writeMarkdownBlock(bw, b, level, !chartsInTables[part.ID])
			}
		}
	} else {
		if len(in.Profiles)+len(in.Monitors) > 0 || len(in.Sections) == 0 {
			for _, t := range newView(in).tables() {
				level := "##"
				if t.Sub {
					level = "###"
				}
				writeMarkdownTable(bw, t, level)
			}
		}
		for _, part := range looseParts(in.Sections) {
			fmt.Fprintf(bw, "\n## %s\n", mdEscape(part.Title))
			for _, b := range part.Blocks {
				writeMarkdownBlock(bw, b, "###", true)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write markdown report: %w", err)
	}
	return nil
}

// chartsInTables are the parts whose tables hold the figures of their
// charts (the profiles' per-step figures and latency, the host tables):
// Markdown leaves their charts out. Every other chart is written as a
// table (markdownChartTable), so that no part is a heading over nothing.
var chartsInTables = map[string]bool{"profiles": true, "devices": true}

// writeMarkdownBlock writes one block of a study part (its heading is
// the caller's), its tables at level, and its chart or bars as a table
// when tabulate.
func writeMarkdownBlock(w *bufio.Writer, b block, level string, tabulate bool) {
	if b.Table != nil {
		writeMarkdownTable(w, *b.Table, level)
	}
	switch {
	case b.Data != nil && tabulate:
		writeMarkdownTable(w, markdownChartTable(*b.Data), level)
	case b.Note != "" && b.Bars == "":
		fmt.Fprintf(w, "\n%s\n", mdEscape(b.Note))
	}
	if len(b.List) > 0 {
		w.WriteString("\n")
		for _, l := range b.List {
			fmt.Fprintf(w, "- %s\n", mdEscape(l))
		}
	}
	if len(b.Notes) > 0 {
		w.WriteString("\n")
		for i, n := range b.Notes {
			fmt.Fprintf(w, "%d. %s\n", i+1, mdEscape(n))
		}
	}
}

// markdownChartTable is what chart c draws, as a table: a row per
// virtual-user step or category and a column per series of values (a
// figure written over a bar beside its value); a chart second by second
// is summed up, a row per series with its lowest, mean and highest
// value over the seconds.
func markdownChartTable(c chartSpec) table {
	t := table{Title: c.Title, Note: c.Note}
	switch {
	case c.YLabel != "" && c.Y2Label != "":
		t.Note = strings.TrimSpace(t.Note + " Values: " + c.YLabel + "; the series on the right axis: " + c.Y2Label + ".")
	case c.YLabel != "":
		t.Note = strings.TrimSpace(t.Note + " Values: " + c.YLabel + ".")
	}
	var series []seriesSpec
	for _, s := range c.Series {
		if s.Role == "" || s.Role == "value" {
			series = append(series, s)
		}
	}
	if c.XKind == "seconds" {
		t.Title += ": second by second, summed up"
		t.Header, t.Right = []string{"Series", "lowest", "mean", "highest", "seconds"}, []bool{false, true, true, true, true}
		for _, s := range series {
			lo, hi, sum, n := math.Inf(1), math.Inf(-1), 0.0, 0
			for _, v := range s.Values {
				if v != nil {
					lo, hi, sum, n = min(lo, *v), max(hi, *v), sum+*v, n+1
				}
			}
			if n == 0 {
				t.Rows = append(t.Rows, row{Cells: texts(s.Label, dash, dash, dash, "0")})
				continue
			}
			t.Rows = append(t.Rows, row{Cells: texts(s.Label, formatNumber(lo), formatNumber(sum/float64(n)), formatNumber(hi), strconv.Itoa(n))})
		}
		return t
	}
	x := cmp.Or(c.XLabel, "VUs")
	if c.XKind == xCategory {
		x = cmp.Or(c.XLabel, "")
	}
	t.Header, t.Right = []string{x}, []bool{c.XKind != xCategory}
	for _, s := range series {
		t.Header, t.Right = append(t.Header, s.Label), append(t.Right, true)
	}
	for i, xv := range c.X {
		name := strconv.FormatFloat(xv, 'f', -1, 64)
		if c.XKind == xCategory && i < len(c.Categories) {
			name = c.Categories[i]
		}
		cells := texts(name)
		for _, s := range series {
			text := dash
			if i < len(s.Values) && s.Values[i] != nil {
				text = formatNumber(*s.Values[i])
			}
			if i < len(s.Texts) && s.Texts[i] != "" {
				text = withBarText(text, s.Texts[i])
			}
			cells = append(cells, cell{Text: text})
		}
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}

// withBarText is a chart cell's value with the text drawn over its bar:
// the text alone when it begins with the value (it says the value, more
// precisely or with its ratio), else the value and the text in brackets.
func withBarText(value, text string) string {
	if rest, ok := strings.CutPrefix(text, value); ok && (rest == "" || rest[0] == ' ' || rest[0] == '.') {
		return text
	}
	return value + " (" + text + ")"
}

func writeMarkdownTable(w *bufio.Writer, t table, level string) {
	fmt.Fprintf(w, "\n%s %s\n\n", level, mdEscape(t.Title))
	if t.Note != "" {
		fmt.Fprintf(w, "%s\n\n", mdEscape(t.Note))
	}
	w.WriteString("|")
	for _, h := range t.Header {
		fmt.Fprintf(w, " %s |", mdEscape(h))
	}
	w.WriteString("\n|")
	for i := range t.Header {
		if i < len(t.Right) && t.Right[i] {
			w.WriteString("---:|")
		} else {
			w.WriteString("---|")
		}
	}
	w.WriteString("\n")
	for _, r := range t.Rows {
		w.WriteString("|")
		for i, c := range r.Cells {
			text := mdEscape(c.Text)
			if i == 0 && r.Diff || (c.Warn || c.Bad) && text != "" {
				text = "**" + text + "**"
			}
			fmt.Fprintf(w, " %s |", text)
		}
		w.WriteString("\n")
	}
}

var mdReplacer = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;",
	"[", `\[`, "]", `\]`, "\r\n", " ", "\n", " ", "\r", " ",
)

// mdEscape makes s safe inside a Markdown table cell or heading: no
// markup, no HTML, no line breaks, no column separators.
func mdEscape(s string) string { return mdReplacer.Replace(s) }

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func versionOrDev(v string) string {
	if v == "" {
		return "(unknown version)"
	}
	return v
}
