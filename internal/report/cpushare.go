package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// cpuLayer is one part of a "who used the CPU" bar.
type cpuLayer struct {
	Label, Color string
	pick         func(c *CPUShares) (float64, bool)
}

// cpuLayers are the parts of the host's cores, bottom to top: they add
// up to the host's cores. When the server's CPU was not measured on a
// host it runs on, its share and the foreign CPU cannot be told apart.
var cpuLayers = []cpuLayer{
	{"database server", "#0072b2", func(c *CPUShares) (float64, bool) {
		if c.ServerCores == nil {
			return 0, false
		}
		return *c.ServerCores, true
	}},
	{"oltplab (driver, samplers)", "#009e73", func(c *CPUShares) (float64, bool) { return c.OltplabCores, true }},
	{"foreign (neither)", "#d55e00", func(c *CPUShares) (float64, bool) {
		if c.ForeignCores == nil {
			return 0, false
		}
		return *c.ForeignCores, true
	}},
	{"server and others, not told apart", "#999999", func(c *CPUShares) (float64, bool) {
		if c.ServerCores != nil || c.ForeignCores != nil {
			return 0, false
		}
		return math.Max(0, c.HostCores-c.IdleCores-c.StealCores-c.OltplabCores), true
	}},
	{"steal", "#cc79a7", func(c *CPUShares) (float64, bool) { return c.StealCores, true }},
	{"idle", "#e6e6e6", func(c *CPUShares) (float64, bool) { return c.IdleCores, true }},
}

// hasCPUShares reports whether any step of any profile has a CPU account.
func (v *view) hasCPUShares() bool {
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			if s.CPU != nil {
				return true
			}
		}
	}
	return false
}

// cpuShareBars draws who used the CPU in every step of every profile as
// stacked bars (inline SVG), one group per step, one bar per profile, in
// cores: the database server, oltplab, the foreign rest, steal and idle
// add up to the host's cores. Empty when nothing was sampled.
func (v *view) cpuShareBars(id string) template.HTML {
	if !v.hasCPUShares() {
		return ""
	}
	const width, left, right, titleH, plotH = 900.0, 64.0, 16.0, 34.0, 230.0
	nProf := len(v.profiles)
	labelH := 18.0 * 2
	if nProf == 1 {
		labelH = 18
	}
	top := 0.0
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			if s.CPU != nil {
				top = math.Max(top, s.CPU.HostCores)
			}
		}
	}
	if top <= 0 {
		top = 1
	}
	step := niceStep(top / 4)
	top = math.Ceil(top/step) * step
	legendY := titleH + plotH + labelH + 22
	height := legendY + 14
	plotW := width - left - right
	y := func(v float64) float64 { return titleH + plotH*(top-v)/top }
	esc := html.EscapeString
	title := "Who used the CPU, per step (cores)"

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="bars cpushare" id="%s" data-bars="%d" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		esc(id), nProf, width, height, esc(title))
	fmt.Fprintf(&b, `<text x="%.0f" y="20" class="title">%s</text>`, width/2, esc(title))
	for t := 0.0; t <= top+step/2; t += step {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, left, width-right, y(t), y(t))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="tick" text-anchor="end">%s</text>`, left-6, y(t)+4, esc(tickText(cleanZero(t), step)))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="axis"/>`, left, width-right, y(0), y(0))
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" class="ylabel" text-anchor="middle">cores</text>`, titleH+plotH/2)

	groupW := plotW / float64(max(1, len(v.vus)))
	barW := math.Min(groupW*0.8/float64(nProf), 90)
	for g, vus := range v.vus {
		gx := left + groupW*float64(g) + (groupW-barW*float64(nProf))/2
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="xlabel" text-anchor="middle">%d VUs</text>`, left+groupW*(float64(g)+0.5), titleH+plotH+labelH+6, vus)
		for pi := range v.profiles {
			bx := gx + barW*float64(pi)
			cx := bx + barW/2
			if nProf > 1 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="tick" text-anchor="middle">%s</text>`, cx, titleH+plotH+14, esc(shortName(v.profiles[pi].Name, barW)))
			}
			s, ok := v.step(pi, vus)
			if !ok || s.CPU == nil {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="missing" text-anchor="middle">n/a</text>`, cx, y(0)-4)
				continue
			}
			base := 0.0
			for _, l := range cpuLayers {
				val, ok := l.pick(s.CPU)
				if !ok || val <= 0 {
					continue
				}
				y0, y1 := y(base), y(base+val)
				stroke := l.Color
				if l.Label == "idle" {
					stroke = "#bbbbbb"
				}
				fmt.Fprintf(&b, `<rect class="bar" data-series="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="%s"><title>%s, %d VUs: %s %s cores</title></rect>`,
					esc(l.Label), bx+1, y1, math.Max(barW-2, 1), math.Max(y0-y1, 0.5), l.Color, stroke,
					esc(v.profiles[pi].Name), vus, esc(l.Label), strconv.FormatFloat(val, 'f', 2, 64))
				base += val
			}
			if f := s.CPU.ForeignCores; f != nil && s.CPU.HostCores > 0 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="value" text-anchor="middle">foreign %.0f%%</text>`, cx, y(base)-4, 100**f/s.CPU.HostCores)
			}
		}
	}
	lx := left
	for _, l := range cpuLayers {
		w := 26 + 6.6*float64(len([]rune(l.Label)))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="18" height="10" fill="%s" stroke="#bbbbbb"/>`, lx, legendY-9, l.Color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="legend">%s</text>`, lx+24, legendY, esc(l.Label))
		lx += w + 14
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every user string above is escaped
}

// shortName cuts a name to what a bar of width w can show under it.
func shortName(s string, w float64) string {
	n := max(3, int(w/6.6))
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// cpuShareNote says how to read the "who used the CPU" chart of v.
func (v *view) cpuShareNote() string {
	note := "Who used the host's cores in each step, averaged over every run that measured a window (contaminated and failed ones too: " +
		"that is where it matters): the database server's processes, oltplab's own (driver and samplers), the foreign CPU that neither used " +
		"(other processes, and kernel work for neither), steal (a hypervisor serving other machines) and idle. A run is contaminated when " +
		"foreign CPU or steal passes its limit (10% of the cores unless --max-foreign-cpu, --max-steal)."
	var sources []string
	seen := map[string]bool{}
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			if c := s.CPU; c != nil && c.ServerSource != "" && !seen[p.Name] {
				seen[p.Name] = true
				sources = append(sources, p.Name+": "+c.ServerSource)
			}
		}
	}
	if len(sources) > 0 {
		note += " The server's CPU: " + strings.Join(sources, "; ") + "."
	}
	return note
}
