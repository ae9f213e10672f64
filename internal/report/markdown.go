package report

import (
	"bufio"
	"fmt"
	"io"
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
			for _, b := range part.Blocks {
				writeMarkdownBlock(bw, b)
			}
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

// writeMarkdownBlock writes one block of a study part; charts are left
// out (their figures are in the tables), their notes kept.
func writeMarkdownBlock(w *bufio.Writer, b block) {
	switch {
	case b.Heading != "":
		fmt.Fprintf(w, "\n### %s\n", mdEscape(b.Heading))
	case b.Table != nil:
		writeMarkdownTable(w, *b.Table)
	}
	if b.Note != "" && b.Bars == "" {
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
