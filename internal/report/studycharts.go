package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// markSpec is a vertical line at one x of a chart: a profile's plateau.
type markSpec struct {
	X     float64 `json:"x"`
	Label string  `json:"label"`
	Color string  `json:"color"`
}

// markKnees marks, on a chart against virtual users, where each profile's
// plateau (or fall) begins.
func (v *view) markKnees(c *chartSpec) {
	var words []string
	for pi, p := range v.profiles {
		if p.Verdict.KneeVUs == 0 {
			continue
		}
		what := "plateau"
		if p.Verdict.Shape == "falling" {
			what = "falls after"
		}
		label := fmt.Sprintf("%s %s %d VUs", p.Name, what, p.Verdict.KneeVUs)
		c.Marks = append(c.Marks, markSpec{X: float64(p.Verdict.KneeVUs), Label: label, Color: color(pi)})
		words = append(words, label)
	}
	if len(words) > 0 {
		c.Note = strings.TrimSpace(c.Note + " Dotted vertical lines mark the knee: " + strings.Join(words, "; ") + ".")
	}
}

// hostOnly returns the charts of builders when some profile was sampled.
func (v *view) hostOnly(builders ...func() chartSpec) []chartSpec {
	sampled := false
	for pi := range v.profiles {
		sampled = sampled || v.hasHost(pi)
	}
	if !sampled {
		return nil
	}
	var out []chartSpec
	for _, b := range builders {
		out = append(out, b())
	}
	return out
}

// overlayCharts draw the same step of every profile second by second, on
// shared axes (NVMe against SATA over time): throughput, transaction p99
// latency, CPU busy and the data device's latency. The profiles'
// series must be of the same step (an experiment's report aligns them);
// those of another step are left out and said so.
func (v *view) overlayCharts() []chartSpec {
	var idx []int
	vus := 0
	for pi, p := range v.profiles {
		if p.Series == nil || len(p.Series.Points) == 0 {
			continue
		}
		if vus == 0 {
			vus = p.Series.VUs
		}
		if p.Series.VUs == vus {
			idx = append(idx, pi)
		}
	}
	if len(idx) < 2 {
		return nil
	}
	// x: every second any profile has.
	set := map[float64]bool{}
	for _, pi := range idx {
		for _, pt := range v.profiles[pi].Series.Points {
			set[math.Round(pt.TSeconds)] = true
		}
	}
	x := slices.Sorted(maps.Keys(set))
	at := map[float64]int{}
	for i, t := range x {
		at[t] = i
	}
	col := func(pi int, pick func(SeriesPoint) (float64, bool)) []*float64 {
		out := make([]*float64, len(x))
		for _, pt := range v.profiles[pi].Series.Points {
			if f, ok := pick(pt); ok {
				out[at[math.Round(pt.TSeconds)]] = num(f)
			}
		}
		return out
	}
	var names []string
	for _, pi := range idx {
		names = append(names, fmt.Sprintf("%s (run %d)", v.profiles[pi].Name, v.profiles[pi].Series.RunID))
	}
	of := fmt.Sprintf("%d VUs", vus)
	base := chartSpec{XKind: "seconds", X: x, ZeroY: true, Height: 240, Sync: "overlay"}
	mk := func(id, title, y string, pick func(SeriesPoint) (float64, bool)) chartSpec {
		c := base
		c.ID, c.Title, c.YLabel = "chart-overlay-"+id, title+" at "+of+", every target", y
		for _, pi := range idx {
			c.Series = append(c.Series, seriesSpec{Label: v.profiles[pi].Name, Color: color(pi), Role: "value", Values: col(pi, pick)})
		}
		return c
	}
	always := func(f func(SeriesPoint) float64) func(SeriesPoint) (float64, bool) {
		return func(pt SeriesPoint) (float64, bool) { return f(pt), true }
	}
	positive := func(f func(SeriesPoint) float64) func(SeriesPoint) (float64, bool) {
		return func(pt SeriesPoint) (float64, bool) { return f(pt), f(pt) > 0 }
	}
	nopm := mk("nopm", "NOPM per second", "NOPM (per-minute rate)", always(func(pt SeriesPoint) float64 { return pt.NOPM }))
	nopm.Note = "The same step on every target, second by second from the start of its measured window (one run each: " + strings.Join(names, ", ") +
		"); the four charts share a cursor. A second without transactions or I/O has no latency: a gap, not a zero."
	return []chartSpec{
		nopm,
		mk("p99", "Transaction p99 latency per second", "ms", positive(func(pt SeriesPoint) float64 { return pt.P99Millis })),
		mk("cpu", "CPU busy per second", "% of CPU time", always(func(pt SeriesPoint) float64 { return pt.CPUBusyPct })),
		mk("disk", "Data disk latency per second", "ms", positive(func(pt SeriesPoint) float64 { return pt.DiskLatencyMillis })),
	}
}

// avgWaitTable lists the average wait times the engines measure
// themselves (log write, lock, I/O ...), in ms, per step and target.
func (v *view) avgWaitTable() table {
	var labels []string
	set := map[string]bool{}
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			if s.Host != nil {
				for l := range s.Host.AvgWaitMillis {
					set[l] = true
				}
			}
		}
	}
	if len(set) == 0 {
		return table{}
	}
	labels = slices.SortedFunc(maps.Keys(set), cmp.Compare[string])
	t := table{ID: "avg-waits", Title: "Average waits (ms) per step",
		Note:   "Wait times the engine measures itself, averaged over the complete repeats of each step: what a transaction waited per wait, in milliseconds. — where the engine recorded none.",
		Header: []string{"Target", "VUs"}, Right: []bool{false, true}}
	for _, l := range labels {
		t.Header = append(t.Header, l)
		t.Right = append(t.Right, true)
	}
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			if s.Host == nil {
				continue
			}
			cells := texts(p.Name, strconv.Itoa(s.VUs))
			for _, l := range labels {
				ms, ok := s.Host.AvgWaitMillis[l]
				text := dash
				if ok {
					text = minusSign(strconv.FormatFloat(ms, 'f', 2, 64))
				}
				cells = append(cells, cell{Text: text, Bad: ok && ms < 0})
			}
			t.Rows = append(t.Rows, row{Cells: cells})
		}
	}
	return t
}

// valueNotes says what a chart cannot show by itself: the values it has
// no figure for (x by x) and the negative ones, so that nothing in a
// table is silently missing from its chart.
func valueNotes(c chartSpec) string {
	if c.XKind != "" && c.XKind != xCategory {
		return "" // per-second gaps are explained by the chart's note
	}
	var missing, negative []string
	for _, s := range c.Series {
		if s.Role != "value" {
			continue
		}
		var miss, neg []string
		for i, p := range s.Values {
			x := strconv.FormatFloat(c.X[i], 'f', -1, 64)
			if c.XKind == xCategory {
				x = c.Categories[i]
			}
			switch {
			case p == nil:
				miss = append(miss, x)
			case *p < 0:
				neg = append(neg, x+" ("+minusSign(formatNumber(*p))+")")
			}
		}
		unit, every := " VUs", " at every step"
		if c.XKind == xCategory {
			unit, every = "", " at all"
		}
		if len(miss) > 0 && len(miss) < len(s.Values) {
			missing = append(missing, s.Label+" at "+strings.Join(miss, ", ")+unit)
		} else if len(miss) == len(s.Values) {
			missing = append(missing, s.Label+every)
		}
		if len(neg) > 0 {
			negative = append(negative, s.Label+" at "+strings.Join(neg, ", ")+unit)
		}
	}
	var out []string
	if len(missing) > 0 {
		out = append(out, "No figure for "+strings.Join(missing, "; ")+" (not measured, or nothing to measure).")
	}
	if len(negative) > 0 {
		out = append(out, "Negative: "+strings.Join(negative, "; ")+", drawn below zero.")
	}
	return strings.Join(out, " ")
}
