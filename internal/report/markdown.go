package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
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
		for _, t := range experimentIntro(e) {
			writeMarkdownTable(bw, t)
		}
		for i, sec := range e.Sections {
			s := experimentSection(i, sec)
			fmt.Fprintf(bw, "\n## %s\n", mdEscape(s.Title))
			if s.Note != "" {
				fmt.Fprintf(bw, "\n%s\n", mdEscape(s.Note))
			}
			for _, t := range slices.Concat(s.Top, s.Rest) {
				writeMarkdownTable(bw, t)
			}
		}
		for _, t := range experimentOutro(e) {
			writeMarkdownTable(bw, t)
		}
	} else {
		for _, t := range newView(in).tables() {
			writeMarkdownTable(bw, t)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write markdown report: %w", err)
	}
	return nil
}

func writeMarkdownTable(w *bufio.Writer, t table) {
	level := "##"
	if t.Sub {
		level = "###"
	}
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
