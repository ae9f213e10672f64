package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpch"
)

// tpchCompared is one TPC-H result named to compare.
type tpchCompared struct {
	Run     store.Run
	Summary summary.TPCH
	Context map[string]string
}

func (c tpchCompared) name() string {
	if c.Run.Label != "" {
		return c.Run.Label
	}
	return "#" + strconv.FormatInt(c.Run.ID, 10)
}

// compareKind sorts out what refs name for command cmd (compare,
// report): (nil, nil) when they are profiles (or names the profile path
// reports on), the TPC-H results when every one names one, and a usage
// error when TPC-H results and TPC-C profiles are mixed. A name that is
// both (a profile id that is also a TPC-H result's id) goes with the
// others.
func (a *app) compareKind(ctx context.Context, sf storeFlags, cmd string, refs []string) ([]tpchCompared, error) {
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var (
		runs             []store.Run
		allTPCH, allTPCC = true, true
		tpchOnly, tpcc   string
	)
	for _, ref := range refs {
		_, perr := st.ProfileByLabelOrID(ctx, ref)
		r, found, err := results.RunByRef(ctx, st, store.KindTPCH, "TPC-H result", ref)
		if err != nil {
			return nil, err
		}
		isProfile := perr == nil
		allTPCH, allTPCC = allTPCH && found, allTPCC && isProfile
		if found && !isProfile && tpchOnly == "" {
			tpchOnly = ref
		}
		if isProfile && !found && tpcc == "" {
			tpcc = ref
		}
		runs = append(runs, r)
	}
	switch {
	case allTPCC || !allTPCH && tpchOnly == "":
		return nil, nil
	case !allTPCH:
		if tpcc != "" {
			return nil, usageErrorf("%s: %q is a TPC-H result and %q a TPC-C profile, which share no figure; name TPC-H results with each other", cmd, tpchOnly, tpcc)
		}
		for _, ref := range refs {
			if _, found, _ := results.RunByRef(ctx, st, store.KindTPCH, "TPC-H result", ref); !found {
				return nil, usageErrorf("%s: %q names no TPC-H result to go with %q (see `oltplab results list`)", cmd, ref, tpchOnly)
			}
		}
	}
	out := make([]tpchCompared, len(runs))
	for i, r := range runs {
		if len(r.Summary) == 0 {
			return nil, usageErrorf("%s: TPC-H result %d (%s) stored no figures (status %s)", cmd, r.ID, refs[i], r.Status)
		}
		s, err := summary.DecodeTPCH(r.Summary)
		if err != nil {
			return nil, &results.RefError{What: "TPC-H result", Ref: refs[i], Err: fmt.Errorf("decode its figures: %w", err)}
		}
		out[i] = tpchCompared{Run: r, Summary: s, Context: results.Flatten(r.Context)}
	}
	return out, nil
}

// cmpTable is one table of a TPC-H comparison, rendered as text or
// Markdown.
type cmpTable struct {
	Title  string     `json:"title"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

// tpchComparison is what compare shows of TPC-H results: who they are,
// their figures, each query's interval and what differs between them.
type tpchComparison struct {
	Label  string     `json:"label"`
	Runs   []cmpRun   `json:"runs"`
	Tables []cmpTable `json:"tables"`
	Notes  []string   `json:"notes,omitempty"`
}

type cmpRun struct {
	ID      int64        `json:"run_id"`
	Label   string       `json:"label,omitempty"`
	Status  string       `json:"status"`
	Target  string       `json:"target"`
	Started time.Time    `json:"started"`
	Result  summary.TPCH `json:"result"`
}

// compareTPCH lays TPC-H results side by side, the first as the base of
// the ratios: the figures of clause 5.4 (ratio above 1: the run did
// more), each query's and refresh function's power-test interval and
// each throughput stream's geometric mean (ratio above 1: slower), and
// the parameters and recorded context that differ.
func compareTPCH(cs []tpchCompared) tpchComparison {
	out := tpchComparison{Label: "TPROC-H style figures (TPC-H clause 5.4), not an audited TPC-H result"}
	base := cs[0]
	header := func(first string) []string {
		h := []string{first}
		for _, c := range cs {
			h = append(h, c.name())
		}
		for _, c := range cs[1:] {
			h = append(h, c.name()+"/"+base.name())
		}
		return h
	}
	// row is one line: each run's value (nil: none, written as why) and
	// each run's ratio to the first's.
	row := func(first string, vals []*float64, why []string, format string) []string {
		r := []string{first}
		for i, v := range vals {
			switch {
			case v != nil:
				r = append(r, fmt.Sprintf(format, *v))
			case why[i] != "":
				r = append(r, why[i])
			default:
				r = append(r, "-")
			}
		}
		for _, v := range vals[1:] {
			if v == nil || vals[0] == nil || *vals[0] == 0 {
				r = append(r, "-")
				continue
			}
			r = append(r, fmt.Sprintf("%.2fx", *v / *vals[0]))
		}
		return r
	}
	for _, c := range cs {
		s := c.Summary
		out.Runs = append(out.Runs, cmpRun{ID: c.Run.ID, Label: c.Run.Label, Status: string(c.Run.Status), Target: c.Run.Target, Started: c.Run.StartedAt, Result: s})
	}

	// The figures, where some run has them.
	figures := cmpTable{Title: "figures (higher is better)", Header: header("figure")}
	pick := func(f func(summary.TPCH) (*float64, string, bool)) ([]*float64, []string, bool) {
		vals, why, any := make([]*float64, len(cs)), make([]string, len(cs)), false
		for i, c := range cs {
			v, absent, has := f(c.Summary)
			if has {
				any = true
				vals[i] = v
				if v == nil {
					why[i] = "absent"
					if absent != "" {
						out.Notes = append(out.Notes, c.name()+": "+absent)
					}
				}
			}
		}
		return vals, why, any
	}
	for _, f := range []struct {
		name string
		get  func(summary.TPCH) (*float64, string, bool)
	}{
		{"Power@Size", func(s summary.TPCH) (*float64, string, bool) {
			if s.Power == nil {
				return nil, "", false
			}
			return s.Power.Power, s.Power.Absent, true
		}},
		{"Throughput@Size", func(s summary.TPCH) (*float64, string, bool) {
			if s.Throughput == nil {
				return nil, "", false
			}
			return s.Throughput.Throughput, s.Throughput.Absent, true
		}},
		{"QphH@Size", func(s summary.TPCH) (*float64, string, bool) {
			if s.Test != "both" {
				return nil, "", false
			}
			return s.QphH, s.QphHAbsent, true
		}},
	} {
		if vals, why, any := pick(f.get); any {
			figures.Rows = append(figures.Rows, row(f.name, vals, why, "%.1f"))
		}
	}
	out.Tables = append(out.Tables, figures)

	// The power test: each query and refresh function, as clause 5.3.7.5
	// rounds it.
	hasPower := false
	for _, c := range cs {
		hasPower = hasPower || c.Summary.Power != nil
	}
	if hasPower {
		t := cmpTable{Title: "power test: intervals in seconds (clause 5.3.7.5; a ratio above 1 is slower)", Header: header("query")}
		for q := 1; q <= tpch.Queries; q++ {
			vals, why := make([]*float64, len(cs)), make([]string, len(cs))
			for i, c := range cs {
				if p := c.Summary.Power; p != nil {
					qt := p.Stream.ByQuery(q)
					switch {
					case qt == nil:
						why[i] = string(tpch.NotRun)
					case qt.Outcome == tpch.Done:
						v := qt.Interval
						vals[i] = &v
					default:
						why[i] = string(qt.Outcome)
					}
				}
			}
			t.Rows = append(t.Rows, row(fmt.Sprintf("Q%d", q), vals, why, "%.1f"))
		}
		for f := 1; f <= 2; f++ {
			vals, why := make([]*float64, len(cs)), make([]string, len(cs))
			for i, c := range cs {
				if p := c.Summary.Power; p != nil {
					rf := p.RF1
					if f == 2 {
						rf = p.RF2
					}
					if rf.Outcome == tpch.Done {
						v := rf.Interval
						vals[i] = &v
					} else {
						why[i] = string(rf.Outcome)
					}
				}
			}
			t.Rows = append(t.Rows, row(fmt.Sprintf("RF%d", f), vals, why, "%.1f"))
		}
		vals, why := make([]*float64, len(cs)), make([]string, len(cs))
		for i, c := range cs {
			if p := c.Summary.Power; p != nil {
				vals[i] = p.Stream.GeoMean
			}
		}
		t.Rows = append(t.Rows, row("geo. mean", vals, why, "%.2f"))
		out.Tables = append(out.Tables, t)
	}

	// The throughput test: Ts and each stream's geometric mean.
	streams := 0
	for _, c := range cs {
		if t := c.Summary.Throughput; t != nil {
			streams = max(streams, len(t.Streams))
		}
	}
	if streams > 0 {
		t := cmpTable{Title: "throughput test: seconds (a ratio above 1 is slower)", Header: header("")}
		vals, why := make([]*float64, len(cs)), make([]string, len(cs))
		for i, c := range cs {
			if tr := c.Summary.Throughput; tr != nil {
				v := tpch.Interval(tr.Seconds)
				vals[i] = &v
			}
		}
		t.Rows = append(t.Rows, row("Ts", vals, why, "%.1f"))
		for n := 1; n <= streams; n++ {
			vals, why := make([]*float64, len(cs)), make([]string, len(cs))
			for i, c := range cs {
				if tr := c.Summary.Throughput; tr != nil {
					for _, st := range tr.Streams {
						if st.Stream == n {
							vals[i] = st.GeoMean
							if st.GeoMean == nil {
								why[i] = "incomplete"
							}
						}
					}
				}
			}
			t.Rows = append(t.Rows, row(fmt.Sprintf("stream %d geo. mean", n), vals, why, "%.2f"))
		}
		out.Tables = append(out.Tables, t)
	}

	// What differs: the tests' parameters, then the recorded context.
	diff := cmpTable{Title: "what differs between them", Header: []string{"key"}}
	for _, c := range cs {
		diff.Header = append(diff.Header, c.name())
	}
	params := []struct {
		key string
		get func(tpchCompared) string
	}{
		{"test", func(c tpchCompared) string { return c.Summary.TestName() }},
		{"scale factor", func(c tpchCompared) string { return c.Summary.Scale }},
		{"streams", func(c tpchCompared) string { return strconv.Itoa(c.Summary.Streams) }},
		{"seed", func(c tpchCompared) string { return strconv.FormatInt(c.Summary.Seed, 10) }},
		{"validation parameters", func(c tpchCompared) string { return strconv.FormatBool(c.Summary.Validation) }},
		{"query timeout", func(c tpchCompared) string {
			if c.Summary.QueryTimeoutSeconds == 0 {
				return "none"
			}
			return strconv.FormatFloat(c.Summary.QueryTimeoutSeconds, 'f', -1, 64) + " s"
		}},
		{"dialect", func(c tpchCompared) string { return c.Summary.Dialect }},
		{"target", func(c tpchCompared) string { return c.Run.Target }},
		{"status", func(c tpchCompared) string { return string(c.Run.Status) }},
	}
	for _, p := range params {
		line := []string{p.key}
		for _, c := range cs {
			line = append(line, p.get(c))
		}
		for _, v := range line[2:] {
			if v != line[1] {
				diff.Rows = append(diff.Rows, line)
				break
			}
		}
	}
	ctxs := make([]map[string]string, len(cs))
	for i, c := range cs {
		ctxs[i] = c.Context
	}
	for _, k := range profile.DiffKeys(ctxs) {
		if ignoredDiff(k) {
			continue
		}
		line := []string{k}
		for _, c := range ctxs {
			v := c[k]
			if len(v) > 40 {
				v = v[:37] + "..."
			}
			if v == "" {
				v = "-"
			}
			line = append(line, v)
		}
		diff.Rows = append(diff.Rows, line)
	}
	out.Tables = append(out.Tables, diff)
	return out
}

// writeTPCHComparisonText prints the comparison as aligned columns.
func writeTPCHComparisonText(w io.Writer, c tpchComparison) error {
	fmt.Fprintf(w, "TPC-H results compared; %s:\n", c.Label)
	for _, r := range c.Runs {
		name := "#" + strconv.FormatInt(r.ID, 10)
		if r.Label != "" {
			name += " " + printable(r.Label)
		}
		fmt.Fprintf(w, "  %s: %s, SF %s, %s, %s on %s, started %s\n", name, r.Result.TestName(), r.Result.Scale, r.Status, r.Result.Dialect,
			printable(r.Target), r.Started.Local().Format(time.RFC3339))
	}
	for _, t := range c.Tables {
		if len(t.Rows) == 0 {
			if t.Title == "what differs between them" {
				fmt.Fprintf(w, "\nno differences in the parameters or the recorded context\n")
			}
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", t.Title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  "+strings.Join(printables(t.Header), "\t"))
		for _, r := range t.Rows {
			fmt.Fprintln(tw, "  "+strings.Join(printables(r), "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", printable(n))
	}
	return nil
}

// writeTPCHComparisonMarkdown writes the comparison as Markdown tables.
func writeTPCHComparisonMarkdown(w io.Writer, c tpchComparison) error {
	esc := strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ")
	fmt.Fprintf(w, "# TPC-H results compared\n\n%s.\n\n", c.Label)
	for _, r := range c.Runs {
		fmt.Fprintf(w, "- #%d %s: %s, SF %s, %s, %s on %s, started %s\n", r.ID, esc.Replace(r.Label), r.Result.TestName(), r.Result.Scale, r.Status,
			r.Result.Dialect, esc.Replace(r.Target), r.Started.UTC().Format(time.RFC3339))
	}
	for _, t := range c.Tables {
		if len(t.Rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n## %s\n\n", esc.Replace(t.Title))
		cells := func(r []string) string {
			out := make([]string, len(r))
			for i, s := range r {
				out[i] = esc.Replace(s)
			}
			return "| " + strings.Join(out, " | ") + " |\n"
		}
		fmt.Fprint(w, cells(t.Header))
		fmt.Fprint(w, "|"+strings.Repeat(" --- |", len(t.Header))+"\n")
		for _, r := range t.Rows {
			fmt.Fprint(w, cells(r))
		}
	}
	if len(c.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range c.Notes {
			fmt.Fprintf(w, "- %s\n", esc.Replace(n))
		}
	}
	return nil
}

func printables(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = printable(s)
	}
	return out
}

// tpchReport is the report of stored TPC-H results (`oltplab report ID...`):
// the experiment report's TPC-H part, each result a column, ratios against
// the first.
func tpchReport(hs []tpchCompared) report.Input {
	var targets []experiment.TPCHTarget
	seen := map[string]bool{}
	for _, h := range hs {
		name := h.name()
		if seen[name] {
			name += " #" + strconv.FormatInt(h.Run.ID, 10)
		}
		seen[name] = true
		targets = append(targets, experiment.TPCHTarget{Name: name, Runs: []summary.TPCH{h.Summary}})
	}
	sec, _ := experiment.TPCHSection("", targets)
	sec.Title, sec.Kind = "TPROC-H results", "tpch"
	return report.Input{Title: "oltplab TPROC-H results", Sections: []report.Section{sec}}
}
