package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/profile"
)

// chartSpec is one chart as the page script hands it to uPlot: x values
// (virtual users, or seconds for a time series) and one value per x for
// each series, null where a profile has no figure.
type chartSpec struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	YLabel string `json:"y_label"`
	// Y2Label names the right-hand axis of the series whose Scale is
	// "y2"; empty when the chart has one axis.
	Y2Label string `json:"y2_label,omitempty"`
	// XKind is "seconds" for a per-second time series (linear x, seconds
	// since the window start); empty for virtual users (log x).
	XKind  string       `json:"x_kind,omitempty"`
	X      []float64    `json:"x"`
	Series []seriesSpec `json:"series"`
	// Bands fill between two series (indexes into Series, 0-based) to
	// draw a confidence interval.
	Bands []bandSpec `json:"bands"`
	// ZeroY starts the y axis at 0 (throughput), so that curves of
	// different profiles are compared from the same origin.
	ZeroY bool `json:"zero_y"`
	// Height in CSS pixels; 0 for the default.
	Height int `json:"height,omitempty"`
	// Sync names a group of charts that share one cursor (the time
	// series of one run).
	Sync string `json:"sync,omitempty"`
	// Marks are vertical lines (plateaus) drawn over the chart.
	Marks []markSpec `json:"marks,omitempty"`
	// Note is shown above the chart (not passed to the script).
	Note string `json:"-"`
	// Bars is the chart drawn as grouped bars (few steps), instead of by
	// the script.
	Bars template.HTML `json:"-"`
	// XLabel names the x axis when the default (virtual users, seconds
	// since the window start) does not fit.
	XLabel string `json:"x_label,omitempty"`
	// Spans are intervals of x marked on the chart (phases, backups).
	Spans []spanSpec `json:"spans,omitempty"`
	// Categories name the groups of a chart whose XKind is "category"
	// (X is then 0, 1, 2 ...): always drawn as bars, never by the script.
	Categories []string `json:"categories,omitempty"`
}

// xCategory is the XKind of a chart over named categories.
const xCategory = "category"

// spanSpec is a Span as the page script draws it: Fill under the series,
// opaque lines of exactly Color at its edges over them, and its label.
type spanSpec struct {
	Label string  `json:"label"`
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Kind  string  `json:"kind"`
	Fill  string  `json:"fill"`
	Color string  `json:"color"`
}

// Span colours: outside the series palette, so that a marker is never
// mistaken for a series (and the browser test can find each).
const (
	phaseColor = "#4d4d4d"
	eventColor = "#7b3294"
	faultColor = "#c00000"
)

// phaseFills tell consecutive phases apart.
var phaseFills = []string{"#0072b214", "#d55e0014", "#009e7314", "#cc79a714"}

// timeChart converts a section's own time series chart.
func timeChart(id string, tc TimeChart) chartSpec {
	c := chartSpec{ID: id, Title: tc.Title, Note: tc.Note, YLabel: tc.YLabel, Y2Label: tc.Y2Label, XKind: "seconds",
		XLabel: tc.XLabel, X: tc.X, ZeroY: true, Height: 320}
	for i, s := range tc.Series {
		ss := seriesSpec{Label: s.Label, Color: color(i), Values: s.Values, Role: "value", Dash: s.Dash}
		if s.Right {
			ss.Scale = "y2"
		}
		c.Series = append(c.Series, ss)
	}
	c.Spans = spanSpecs(tc.Spans)
	return c
}

// spanSpecs are spans as the page script draws them: phases in turn
// pale, events purple, faults red.
func spanSpecs(spans []Span) []spanSpec {
	var out []spanSpec
	phases := 0
	for _, sp := range spans {
		s := spanSpec{Label: sp.Label, From: sp.From, To: sp.To, Kind: string(sp.Kind), Color: eventColor, Fill: eventColor + "1f"}
		switch sp.Kind {
		case SpanPhase:
			s.Color, s.Fill = phaseColor, phaseFills[phases%len(phaseFills)]
			phases++
		case SpanFault:
			s.Color, s.Fill = faultColor, faultColor+"26"
		}
		out = append(out, s)
	}
	return out
}

type seriesSpec struct {
	Label  string     `json:"label"`
	Color  string     `json:"color"`
	Values []*float64 `json:"values"`
	// Role is "value" (a mean or percentile, drawn with filled points in
	// exactly Color), "ci" (a bound of a confidence interval, thin) or
	// "ref" (a reference line).
	Role string `json:"role"`
	Dash bool   `json:"dash"`
	// Scale is "y2" for a series read on the right-hand axis; empty for
	// the left one.
	Scale string `json:"scale,omitempty"`
	// Texts, when set, are written over the bars instead of their values
	// ("" keeps a value).
	Texts []string `json:"-"`
}

// barChart converts a section's own bar chart over categories: its
// whiskers are the series' Lo and Hi bounds.
func barChart(id string, bc BarChart) chartSpec {
	c := chartSpec{ID: id, Title: bc.Title, Note: bc.Note, YLabel: bc.YLabel, XKind: xCategory, Categories: bc.Categories,
		X: make([]float64, len(bc.Categories)), ZeroY: true, Height: 330}
	for i := range c.X {
		c.X[i] = float64(i)
	}
	for i, s := range bc.Series {
		c.Series = append(c.Series, seriesSpec{Label: s.Label, Color: color(i), Values: s.Values, Role: "value", Texts: s.Texts})
		if s.Lo != nil && s.Hi != nil {
			c.Series = append(c.Series,
				seriesSpec{Label: s.Label + " range high", Color: color(i), Values: s.Hi, Role: "ci"},
				seriesSpec{Label: s.Label + " range low", Color: color(i), Values: s.Lo, Role: "ci"})
		}
	}
	return c
}

type bandSpec struct {
	Hi   int    `json:"hi"`
	Lo   int    `json:"lo"`
	Fill string `json:"fill"`
}

// palette is Okabe and Ito's colour-blind safe palette (without its
// yellow, too pale on white).
var palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#999999"}

func color(i int) string { return palette[i%len(palette)] }

func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func xs(vus []int) []float64 {
	out := make([]float64, len(vus))
	for i, v := range vus {
		out[i] = float64(v)
	}
	return out
}

// addWithCI appends a value series and, when drawn point has an interval,
// its two bounds and the band between them.
func (c *chartSpec) addWithCI(label, col string, mean, lo, hi []*float64) {
	c.Series = append(c.Series, seriesSpec{Label: label, Color: col, Values: mean, Role: "value"})
	hasCI := false
	for _, p := range lo {
		hasCI = hasCI || p != nil
	}
	if !hasCI {
		return
	}
	c.Series = append(c.Series,
		seriesSpec{Label: label + " 95% CI high", Color: col, Values: hi, Role: "ci"},
		seriesSpec{Label: label + " 95% CI low", Color: col, Values: lo, Role: "ci"})
	n := len(c.Series)
	c.Bands = append(c.Bands, bandSpec{Hi: n - 2, Lo: n - 1, Fill: col + "2e"})
}

// summaryChart plots one summarised figure of every profile against
// virtual users, with its confidence band.
func (v *view) summaryChart(id, title, yLabel string, pick func(Step) profile.Summary) chartSpec {
	c := chartSpec{ID: id, Title: title, YLabel: yLabel, X: xs(v.vus), ZeroY: true}
	for pi, p := range v.profiles {
		mean := make([]*float64, len(v.vus))
		lo := make([]*float64, len(v.vus))
		hi := make([]*float64, len(v.vus))
		for i, vus := range v.vus {
			s, ok := v.step(pi, vus)
			if !ok {
				continue
			}
			sum := pick(s)
			if sum.N == 0 {
				continue
			}
			mean[i] = num(sum.Mean)
			if sum.HasCI() {
				lo[i], hi[i] = num(sum.CILo), num(sum.CIHi)
			}
		}
		c.addWithCI(p.Name, color(pi), mean, lo, hi)
	}
	return c
}

// ratioChart plots every profile's mean NOPM over the first profile's,
// with its interval, at the steps both ran; the axis starts at 0, as a
// ratio does.
func (v *view) ratioChart() chartSpec {
	base := v.profiles[0]
	c := chartSpec{ID: "chart-ratio", Title: "NOPM ratio to " + base.Name, YLabel: "ratio", ZeroY: true}
	var vus []int
	for _, n := range v.vus {
		if _, ok := v.step(0, n); ok {
			vus = append(vus, n)
		}
	}
	c.X = xs(vus)
	for pi := 1; pi < len(v.profiles); pi++ {
		r := make([]*float64, len(vus))
		lo := make([]*float64, len(vus))
		hi := make([]*float64, len(vus))
		for i, n := range vus {
			rn, _, ok := v.ratios(pi, n)
			if !ok || !rn.Defined {
				continue
			}
			r[i] = num(rn.Ratio)
			if rn.HasCI {
				lo[i], hi[i] = num(rn.Lo), num(rn.Hi)
			}
		}
		c.addWithCI(v.profiles[pi].Name+"/"+base.Name, color(pi), r, lo, hi)
	}
	one := make([]*float64, len(vus))
	for i := range one {
		one[i] = num(1)
	}
	c.Series = append(c.Series, seriesSpec{Label: "1.0 (no difference)", Color: "#777777", Values: one, Role: "ref", Dash: true})
	return c
}

// lighten mixes a #rrggbb colour 45% towards white: the p95 line of a
// profile is a paler, dashed version of its p99 line.
func lighten(hex string) string {
	v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil {
		return hex
	}
	mix := func(c uint64) uint64 { return c + (255-c)*45/100 }
	r, g, b := mix(v>>16&0xff), mix(v>>8&0xff), mix(v&0xff)
	return fmt.Sprintf("#%02x%02x%02x", r, g, b)
}

// latencyChart plots p95 (dashed, paler) and p99 latency of one transaction
// kind for every profile.
func (v *view) latencyChart(i int, kind string) chartSpec {
	c := chartSpec{ID: "chart-latency-" + strconv.Itoa(i), Title: kind + " latency p95 / p99", YLabel: "ms", X: xs(v.vus), ZeroY: true}
	for pi, p := range v.profiles {
		p95 := make([]*float64, len(v.vus))
		p99 := make([]*float64, len(v.vus))
		drawn := false
		for xi, vus := range v.vus {
			s, ok := v.step(pi, vus)
			if !ok {
				continue
			}
			if l, ok := s.Latency[kind]; ok {
				if l.P95Millis > 0 {
					p95[xi], drawn = num(l.P95Millis), true
				}
				if l.P99Millis > 0 {
					p99[xi], drawn = num(l.P99Millis), true
				}
			}
		}
		if !drawn {
			continue
		}
		c.Series = append(c.Series,
			seriesSpec{Label: p.Name + " p95", Color: lighten(color(pi)), Values: p95, Role: "value", Dash: true},
			seriesSpec{Label: p.Name + " p99", Color: color(pi), Values: p99, Role: "value"})
	}
	return c
}

// charts returns every chart of the report, leaving out those with
// nothing to draw.
func (v *view) charts() []chartSpec {
	if len(v.profiles) == 0 || len(v.vus) == 0 {
		return nil
	}
	all := []chartSpec{
		v.summaryChart("chart-nopm", "NOPM vs virtual users", "NOPM", func(s Step) profile.Summary { return s.NOPM }),
		v.summaryChart("chart-tpm", "TPM vs virtual users", "TPM", func(s Step) profile.Summary { return s.TPM }),
		v.summaryChart("chart-tpm-per-vu", "TPM per virtual user", "TPM / VU", func(s Step) profile.Summary { return s.TPMPerVU }),
	}
	if len(v.profiles) > 1 {
		all = append(all, v.ratioChart())
	}
	for i, k := range v.kinds {
		all = append(all, v.latencyChart(i, k))
	}
	return drawable(all)
}

// drawable leaves out the charts with nothing to draw.
func drawable(all []chartSpec) []chartSpec {
	out := all[:0]
	for _, c := range all {
		if c.Bands == nil {
			c.Bands = []bandSpec{}
		}
		if len(c.X) > 0 && hasValue(c) {
			out = append(out, c)
		}
	}
	return out
}

func hasValue(c chartSpec) bool {
	for _, s := range c.Series {
		if s.Role != "value" {
			continue
		}
		for _, p := range s.Values {
			if p != nil {
				return true
			}
		}
	}
	return false
}
