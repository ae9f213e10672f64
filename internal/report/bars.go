package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// maxBarGroups is the most steps a chart against virtual users draws as
// grouped bars: one, two or three steps compared read as bars side by
// side (as the studies draw them), where lines would stack dots on a few
// x positions.
const maxBarGroups = 3

// barsSVG draws a chart against virtual users, or over categories
// (XKind "category": TPC-H's queries), as grouped bars in inline SVG: one
// group per step or category, one bar per value series, its 95% interval
// (or range) as a whisker, its value (or its text) written on it,
// reference lines dashed across, and "n/a" where a series has no figure.
// It is static: it prints and shows in a screenshot exactly as on screen.
func barsSVG(c chartSpec) template.HTML {
	type bar struct {
		s      seriesSpec
		lo, hi []*float64
	}
	var bars []bar
	var refs []seriesSpec
	for i, s := range c.Series {
		switch s.Role {
		case "value":
			b := bar{s: s}
			for _, ci := range c.Series[i+1:] {
				if ci.Role != "ci" {
					break
				}
				if strings.HasSuffix(ci.Label, " high") {
					b.hi = ci.Values
				} else {
					b.lo = ci.Values
				}
			}
			bars = append(bars, b)
		case "ref":
			refs = append(refs, s)
		}
	}
	// The value range, zero included.
	lo, hi := 0.0, 0.0
	see := func(vs []*float64) {
		for _, p := range vs {
			if p != nil {
				lo, hi = math.Min(lo, *p), math.Max(hi, *p)
			}
		}
	}
	for _, b := range bars {
		see(b.s.Values)
		see(b.lo)
		see(b.hi)
	}
	for _, r := range refs {
		see(r.Values)
	}
	if hi == lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	top, bottom := math.Ceil(hi*1.08/step)*step, math.Floor(lo*1.08/step)*step
	if lo == 0 {
		bottom = 0
	}

	const width, left, right, titleH, xLabelH = 900.0, 78.0, 16.0, 34.0, 40.0
	plotH := 230.0
	if c.Height > 0 {
		plotH = float64(c.Height) - 90
	}
	// The legend flows under the axis.
	type item struct {
		x, y  float64
		label string
		color string
		dash  bool
	}
	var legend []item
	lx, ly := left, titleH+plotH+xLabelH+14
	for _, s := range append(seriesOf(bars, func(b bar) seriesSpec { return b.s }), refs...) {
		w := 26 + 6.6*float64(len([]rune(s.Label)))
		if lx+w > width-right && lx > left {
			lx, ly = left, ly+18
		}
		legend = append(legend, item{lx, ly, s.Label, s.Color, s.Dash || s.Role == "ref"})
		lx += w + 14
	}
	height := ly + 12
	plotW := width - left - right
	y := func(v float64) float64 { return titleH + plotH*(top-v)/(top-bottom) }

	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, `<svg class="bars" id="%s" data-bars="%d" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		esc(c.ID), len(bars), width, height, esc(c.Title))
	fmt.Fprintf(&b, `<text x="%.0f" y="20" class="title">%s</text>`, width/2, esc(c.Title))
	// Axes, grid and ticks.
	for v := bottom; v <= top+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, left, width-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="tick" text-anchor="end">%s</text>`, left-6, y(v)+4, esc(minusSign(tickText(cleanZero(v), step))))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="axis"/>`, left, width-right, y(0), y(0))
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" class="ylabel" text-anchor="middle">%s</text>`, titleH+plotH/2, esc(c.YLabel))

	groupW := plotW / float64(len(c.X))
	barW := groupW * 0.8 / float64(max(1, len(bars)))
	for g, xv := range c.X {
		gx := left + groupW*float64(g) + groupW*0.1
		label := strconv.FormatFloat(xv, 'f', -1, 64) + " VUs"
		if c.XKind == xCategory {
			label = c.Categories[g]
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="xlabel" text-anchor="middle">%s</text>`, left+groupW*(float64(g)+0.5), titleH+plotH+18, esc(label))
		var knees []string
		for _, m := range c.Marks {
			if m.X == xv {
				knees = append(knees, m.Label)
			}
		}
		if len(knees) > 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="mark" text-anchor="middle">▲ %s</text>`, left+groupW*(float64(g)+0.5), titleH+plotH+33, esc(strings.Join(knees, "; ")))
		}
		for i, br := range bars {
			bx := gx + barW*float64(i)
			cx := bx + barW/2
			p := br.s.Values[g]
			if p == nil {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="missing" text-anchor="middle" data-series="%s">n/a</text>`, cx, y(0)-4, esc(br.s.Label))
				continue
			}
			v := *p
			y0, y1 := y(0), y(v)
			if y1 > y0 {
				y0, y1 = y1, y0
			}
			dash := ""
			if br.s.Dash {
				dash = ` stroke-dasharray="4 3" fill-opacity="0.75"`
			}
			tip := br.s.Label + ": " + minusSign(formatNumber(v))
			if c.XKind == xCategory {
				tip = br.s.Label + " " + label + ": " + minusSign(formatNumber(v))
				if g < len(br.s.Texts) && br.s.Texts[g] != "" {
					tip += " (" + br.s.Texts[g] + ")"
				}
			}
			fmt.Fprintf(&b, `<rect class="bar" data-series="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="%s"%s><title>%s</title></rect>`,
				esc(br.s.Label), bx+1, y1, math.Max(barW-2, 1), math.Max(y0-y1, 1), br.s.Color, br.s.Color, dash, esc(tip))
			if br.lo != nil && br.hi != nil && br.lo[g] != nil && br.hi[g] != nil {
				l, h := y(*br.lo[g]), y(*br.hi[g])
				fmt.Fprintf(&b, `<path class="ci" d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f"/>`, cx, l, h, cx-4, l, cx+4, cx-4, h, cx+4)
			}
			// Beside the whisker, which runs up the bar's middle.
			ty, anchor, tx := y(v)-4, "start", bx+4
			if v < 0 {
				ty = y(v) + 12
			}
			text := minusSign(formatNumber(v))
			if g < len(br.s.Texts) && br.s.Texts[g] != "" {
				text = br.s.Texts[g]
			}
			if barW < 34 {
				// Written up the bar's middle: above its whisker.
				if v >= 0 && br.hi != nil && br.hi[g] != nil {
					ty = math.Min(ty, y(*br.hi[g])-4)
				}
				fmt.Fprintf(&b, `<text transform="translate(%.1f %.1f) rotate(-90)" class="value" text-anchor="start">%s</text>`, cx+3, ty, esc(text))
			} else {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="value" text-anchor="%s">%s</text>`, tx, ty, anchor, esc(text))
			}
		}
		for _, r := range refs {
			if p := r.Values[g]; p != nil {
				fmt.Fprintf(&b, `<line class="ref" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, gx-groupW*0.05, gx+groupW*0.85, y(*p), y(*p), r.Color)
			}
		}
	}
	for _, it := range legend {
		if it.dash {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="4 3"/>`, it.x, it.x+18, it.y-4, it.y-4, it.color)
		} else {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="18" height="10" fill="%s"/>`, it.x, it.y-9, it.color)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="legend">%s</text>`, it.x+24, it.y, esc(it.label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every user string above is escaped
}

func seriesOf[T any](xs []T, f func(T) seriesSpec) []seriesSpec {
	out := make([]seriesSpec, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// tickText writes a tick value with the decimals its step needs.
func tickText(v, step float64) string {
	if step >= 1 {
		return thousands(v)
	}
	decimals := int(math.Ceil(-math.Log10(step)))
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// niceStep rounds a raw tick step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// cleanZero turns the -0 and the 1e-17 of float steps into 0.
func cleanZero(v float64) float64 {
	if math.Abs(v) < 1e-9 {
		return 0
	}
	return v
}
