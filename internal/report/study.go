package report

import (
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/profile"
)

// studyPart is one section of an experiment's report, the study report.
// A part is built from the whole experiment (build), or shows the
// sections of the step kinds it lists (Kinds), or both.
type studyPart struct {
	ID, Title string
	// Kinds are the step kinds whose sections the part shows: a
	// Section's Part, or its Kind when Part is empty.
	Kinds []string
	build func(*study) []block
}

// studyParts is the order of the study report, as the published studies
// lay theirs out: the single place that orders the report's sections.
// A part with nothing to show is left out. A section whose kind no part
// lists lands in "other"; one more part for a new step kind is one more
// line here.
var studyParts = []studyPart{
	{ID: "summary", Title: "Summary", build: (*study).summary},
	{ID: "system", Title: "System under test", Kinds: []string{"cpu"}, build: (*study).system},
	{ID: "storage", Title: "Storage micro-benchmarks", Kinds: []string{"storage"}},
	{ID: "profiles", Title: "Performance profiles", build: (*study).profiles},
	{ID: "cpu", Title: "CPU idle and iowait", build: (*study).cpu},
	{ID: "devices", Title: "I/O latency: the device, the instance, the database", build: (*study).devices},
	{ID: "waits", Title: "Wait classes", build: (*study).waits},
	{ID: "backup", Title: "Backup and restore", Kinds: []string{"backup"}},
	{ID: "rebuild", Title: "Index rebuild, cold and hot cache", Kinds: []string{"rebuild"}},
	{ID: "neighbours", Title: "Noisy neighbours", Kinds: []string{"neighbours"}},
	{ID: "parallel", Title: "Targets driven at once", Kinds: []string{"parallel"}},
	{ID: "tpch", Title: "Analytic workload (TPROC-H)", Kinds: []string{"tpch"}},
	{ID: "other", Title: "Other steps"}, // sections of kinds no other part lists
	{ID: "cost", Title: "Cost", build: (*study).cost},
	{ID: "method", Title: "Method", Kinds: []string{"build"}, build: (*study).method},
	{ID: "appendix", Title: "Appendix: everything recorded about the targets", build: (*study).appendix},
}

// profileKind is the step kind whose sections the profile, CPU, device
// and wait parts draw.
const profileKind = "profile"

// block is one piece of a part, in page order: a heading, a note, a list,
// a table, a chart drawn by uPlot, or grouped bars drawn as SVG.
type block struct {
	Heading string
	Note    string
	List    []string
	// Notes are numbered footnotes (formulas) that cells point to.
	Notes []string
	Table *table
	Chart *chartSpec
	// Bars is Chart drawn as grouped bars (inline SVG): a comparison of
	// few steps reads as bars, as the studies draw it.
	Bars template.HTML
	// Data is what Chart or Bars draw: the Markdown report writes it as
	// a table (markdownChartTable).
	Data *chartSpec
}

// study is an experiment prepared for the study report.
type study struct {
	e *Experiment
	// steps are the sections of profile steps that measured something,
	// with their view.
	steps []studyStep
}

type studyStep struct {
	Section
	v      *view
	prefix string // of element ids: "s2-"
}

func newStudy(e *Experiment) *study {
	s := &study{e: e}
	for i, sec := range e.Sections {
		if partOf(sec) != profileKind || len(sec.Profiles) == 0 {
			continue
		}
		s.steps = append(s.steps, studyStep{Section: sec, v: newView(Input{Profiles: sec.Profiles}), prefix: "s" + strconv.Itoa(i+1) + "-"})
	}
	return s
}

func partOf(sec Section) string {
	if sec.Part != "" {
		return sec.Part
	}
	return sec.Kind
}

// parts renders every part that has something to show, in studyParts
// order.
func (s *study) parts() []htmlSection {
	listed := map[string]bool{profileKind: true}
	for _, p := range studyParts {
		for _, k := range p.Kinds {
			listed[k] = true
		}
	}
	var out []htmlSection
	for _, p := range studyParts {
		var blocks []block
		for _, sec := range s.e.Sections {
			k := partOf(sec)
			if slices.Contains(p.Kinds, k) || p.ID == "other" && !listed[k] {
				blocks = append(blocks, s.sectionBlocks(sec)...)
			}
		}
		if p.build != nil {
			blocks = append(p.build(s), blocks...)
		}
		if len(blocks) == 0 {
			continue
		}
		out = append(out, htmlSection{ID: p.ID, Title: p.Title, Part: true, Blocks: blocks})
	}
	return out
}

// sectionBlocks shows a step kind's own section: its title, note,
// tables, the bars over categories it draws, and the time series it
// draws (phases and events marked).
func (s *study) sectionBlocks(sec Section) []block {
	if len(sec.Tables) == 0 && len(sec.Charts) == 0 && len(sec.Bars) == 0 && sec.Note == "" {
		return nil
	}
	out := []block{{Heading: sec.Title, Note: sec.Note}}
	prefix := "step-" + strconv.Itoa(slices.IndexFunc(s.e.Sections, func(o Section) bool { return o.Title == sec.Title })+1) + "-"
	for _, t := range sectionTables(sec, prefix) {
		out = append(out, block{Table: &t})
	}
	var bs []chartSpec
	for bi, bc := range sec.Bars {
		bs = append(bs, barChart("chart-bars-"+strconv.Itoa(bi+1), bc))
	}
	out = append(out, chartBlocks(prefix, bs...)...)
	var cs []chartSpec
	for ci, tc := range sec.Charts {
		cs = append(cs, timeChart("chart-time-"+strconv.Itoa(ci+1), tc))
	}
	if len(cs) > 0 {
		out = append(out, block{Note: "Second by second over the step. Shaded bands with a grey edge are the step's phases; purple-edged intervals are events (such as a backup) from their start to their end."})
		out = append(out, chartBlocks(prefix, cs...)...)
	}
	return out
}

// looseParts are the parts of a report without an experiment
// (Input.Sections): each section's findings, then its tables and charts.
func looseParts(secs []Section) []htmlSection {
	s := &study{e: &Experiment{Sections: secs}}
	var out []htmlSection
	for i, sec := range secs {
		blocks := s.sectionBlocks(sec)
		if len(blocks) == 0 {
			continue
		}
		// The part's title stands for the first block's heading.
		blocks[0].Heading = ""
		if len(sec.Findings) > 0 {
			blocks = append([]block{{List: sec.Findings}}, blocks...)
		}
		out = append(out, htmlSection{ID: "part-" + strconv.Itoa(i+1), Title: sec.Title, Part: true, Blocks: blocks})
	}
	return out
}

// stepHeading heads a profile step's part of a section when the plan has
// several.
func (s *study) stepHeading(st studyStep) []block {
	if len(s.steps) < 2 {
		return nil
	}
	return []block{{Heading: st.Title}}
}

// chartBlock draws c as grouped bars when it compares few steps, with a
// uPlot chart otherwise, and says which values are missing or negative.
func chartBlock(c chartSpec) block {
	c.Note = strings.TrimSpace(c.Note + " " + valueNotes(c))
	if c.XKind == xCategory || c.XKind == "" && len(c.X) <= maxBarGroups && len(c.X) > 0 {
		return block{Note: c.Note, Bars: barsSVG(c), Data: &c}
	}
	return block{Chart: &c, Data: &c}
}

// chartBlocks turns chart specs into blocks, with an id prefix.
func chartBlocks(prefix string, cs ...chartSpec) []block {
	var out []block
	for _, c := range drawable(cs) {
		c.ID = prefix + c.ID
		if c.Sync != "" {
			c.Sync = prefix + c.Sync
		}
		out = append(out, chartBlock(c))
	}
	return out
}

// tableBlocks turns tables into blocks, leaving out empty ones, with an
// id prefix and the smaller heading of a part.
func tableBlocks(prefix string, ts ...table) []block {
	var out []block
	for _, t := range ts {
		if len(t.Header) == 0 {
			continue
		}
		t.ID, t.Sub = prefix+t.ID, true
		out = append(out, block{Table: &t})
	}
	return out
}

// summary is the report's first page: the plan's question with an
// answer for each target, every step's headline in plan order (a profile
// step's ratios in words with their intervals, each other kind's
// findings), the steps that did not finish, the headline chart and the
// short cost table.
func (s *study) summary() []block {
	var lines []string
	for _, sec := range s.e.Sections {
		st, ok := s.profileStep(sec)
		if !ok {
			lines = append(lines, sec.Findings...)
			continue
		}
		lines = append(lines, headlines(st.v, st.Title, len(s.steps) > 1)...)
		lines = append(lines, st.Findings...)
		lines = append(lines, trustLines(st.v, st.Title, len(s.steps) > 1)...)
	}
	for _, e := range s.e.Schedule {
		if e.State != "done" {
			target := e.Target
			if target == "" {
				target = "all targets"
			}
			what := e.State
			if e.Error != "" {
				what += ": " + e.Error
			}
			lines = append(lines, fmt.Sprintf("The %s step on %s did not finish (%s); what it measured is not in this report.", e.Step, target, what))
		}
	}
	out := s.question()
	if len(lines) > 0 {
		b := block{List: lines}
		if len(out) > 0 {
			b.Heading = "What each step measured"
		}
		out = append(out, b)
	}
	out = append(out, s.headlineChart()...)
	if c := s.e.Cost; c != nil && len(c.Table.Rows) > 0 {
		t := costSummaryTable(c.Table)
		out = append(out, block{Table: &t})
	}
	return out
}

// headlines are the summary's sentences for one profile step: each
// target against the baseline at the largest step both ran, NOPM ratio
// with its interval and the change in New-Order p99 latency; and each
// target's peak and plateau.
func headlines(v *view, step string, named bool) []string {
	var out []string
	if len(v.profiles) == 0 {
		return nil
	}
	base := v.profiles[0]
	in := ""
	if named {
		in = " (" + step + ")"
	}
	for pi := 1; pi < len(v.profiles); pi++ {
		p := v.profiles[pi]
		at := 0
		for _, vus := range v.vus {
			s, ok1 := v.step(pi, vus)
			b, ok0 := v.step(0, vus)
			if ok0 && ok1 && s.NOPM.N > 0 && b.NOPM.N > 0 {
				at = vus
			}
		}
		if at == 0 {
			continue
		}
		rn, _, _ := v.ratios(pi, at)
		if !rn.Defined {
			continue
		}
		sentence := fmt.Sprintf("%s gives %.2f× the NOPM of %s at %d VUs%s", p.Name, rn.Ratio, base.Name, at, in)
		switch {
		case rn.TooFew:
			sentence += " (too few runs for a confidence interval)"
		case !rn.HasCI:
			sentence += " (no confidence interval)"
		default:
			sentence += fmt.Sprintf(" (95%% CI %s–%s", minusSign(strconv.FormatFloat(rn.Lo, 'f', 2, 64)), minusSign(strconv.FormatFloat(rn.Hi, 'f', 2, 64)))
			switch {
			case !rn.Significant:
				sentence += "; not significant: the interval contains 1)"
			default:
				sentence += ")"
			}
		}
		s, _ := v.step(pi, at)
		b, _ := v.step(0, at)
		if lp, lb := s.Latency["new_order"].P99Millis, b.Latency["new_order"].P99Millis; lp > 0 && lb > 0 {
			sentence += fmt.Sprintf("; New-Order p99 latency %s (%s → %s ms)", signedPct((lp-lb)/lb*100), formatMillis(lb), formatMillis(lp))
		}
		out = append(out, sentence+".")
	}
	for _, p := range v.profiles {
		if p.Verdict.PeakVUs == 0 {
			continue
		}
		sentence := fmt.Sprintf("%s peaks at %s NOPM with %d VUs%s", p.Name, formatNumber(p.Verdict.PeakNOPM), p.Verdict.PeakVUs, in)
		switch {
		case p.Verdict.KneeVUs > 0 && p.Verdict.Shape == profile.ShapeFalling:
			sentence += fmt.Sprintf("; NOPM falls after %d VUs", p.Verdict.KneeVUs)
		case p.Verdict.KneeVUs > 0:
			sentence += fmt.Sprintf("; plateau from %d VUs", p.Verdict.KneeVUs)
		default:
			sentence += "; no plateau within the sweep"
		}
		if d := p.Verdict.Dips; len(d) > 0 {
			vus := make([]string, len(d))
			for i, n := range d {
				vus[i] = strconv.Itoa(n)
			}
			sentence += fmt.Sprintf(" (a dip at %s VUs that later steps undo: not a fall)", strings.Join(vus, ", "))
		}
		out = append(out, sentence+".")
	}
	return out
}

// signedPct writes a change in percent with its sign: "−61%", "+12%".
func signedPct(pct float64) string {
	s := strconv.FormatFloat(pct, 'f', 0, 64)
	if pct >= 0.5 {
		s = "+" + s
	}
	return minusSign(s) + "%"
}

// costSummaryTable is the summary's cost table: what each target costs
// and costs per 1,000 NOPM at its peak; the cost section has the rest
// and every formula.
func costSummaryTable(t cost.Table) table {
	out := table{ID: "summary-cost", Sub: true, Title: "Cost per 1,000 NOPM",
		Note: fmt.Sprintf("Total cost of ownership over %s in %s, and that total divided by the peak NOPM in thousands; the Cost section shows every formula with its inputs.",
			yearsText(t.Years), t.Currency),
		Header: []string{"Target", "Total cost", "Peak NOPM", "at VUs", "Cost per 1,000 NOPM", "Saving vs " + orDash(t.Baseline)},
		Right:  []bool{false, true, true, true, true, true}}
	for _, r := range t.Rows {
		cells := texts(r.Target, r.Total.Text, dash, dash, dash, dash)
		if r.Peak != nil {
			cells[2].Text, cells[3].Text, cells[4].Text = thousands(r.Peak.NOPM), strconv.Itoa(r.Peak.VUs), cost.Money(r.Peak.PerKNOPM.Value, r.Currency)
		} else {
			cells[2].Text, cells[2].Warn = r.PeakNote, true
		}
		switch {
		case r.Target == t.Baseline:
			cells[5].Text = "baseline"
		case r.Saving != nil:
			cells[5].Text = minusSign(r.Saving.Text)
			cells[5].Bad = r.Saving.Value < 0
		}
		out.Rows = append(out.Rows, row{Cells: cells})
	}
	return out
}

func yearsText(n int) string {
	if n == 1 {
		return "1 year"
	}
	return strconv.Itoa(n) + " years"
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

// systemKeys are the recorded facts the system-under-test table always
// shows (by key prefix); keys that differ between targets are shown too.
var systemKeys = []string{"host.CPUModel", "host.LogicalCPUs", "host.PhysicalCores", "host.MemoryBytes", "host.Kernel", "host.OS",
	"storage.", "database.version", "instance.spec.", "instance.devices."}

// system shows the targets and, one column per target, what describes
// them, the rows that differ highlighted.
func (s *study) system() []block {
	intro := experimentIntro(s.e)
	targets := intro[0]
	targets.Sub = true
	out := []block{{Table: &targets}}
	if len(s.e.Targets) == 0 {
		return out
	}
	ctxs := make([]map[string]string, len(s.e.Targets))
	for i, t := range s.e.Targets {
		ctxs[i] = t.Context
	}
	diff := map[string]bool{}
	for _, k := range profile.DiffKeys(ctxs) {
		diff[k] = true
	}
	var keys []string
	for _, k := range profile.Keys(ctxs) {
		if diff[k] || slices.ContainsFunc(systemKeys, func(p string) bool { return strings.HasPrefix(k, p) }) {
			keys = append(keys, k)
		}
	}
	t := contextGrid("system", "What the targets ran on", s.e.Targets, func(t ExperimentTarget) map[string]string { return t.Context }, keys, diff)
	t.Note = fmt.Sprintf("The host, storage, database and instance of each target; highlighted rows differ between the targets (%d of %d recorded keys differ). "+
		"Everything recorded is in the appendix.", len(diff), len(profile.Keys(ctxs)))
	if len(s.e.Targets) < 2 {
		t.Note = "The host, storage, database and instance of the target. Everything recorded is in the appendix."
	}
	if len(keys) > 0 {
		out = append(out, block{Table: &t})
	}
	return out
}

// contextGrid is a table of keys, one column per target.
func contextGrid(id, title string, targets []ExperimentTarget, of func(ExperimentTarget) map[string]string, keys []string, diff map[string]bool) table {
	t := table{ID: id, Sub: true, Title: title, Header: []string{"Key"}, Right: []bool{false}}
	for _, tg := range targets {
		t.Header = append(t.Header, tg.Name)
		t.Right = append(t.Right, false)
	}
	for _, k := range keys {
		cells := texts(k)
		for _, tg := range targets {
			val, ok := of(tg)[k]
			if !ok || val == "" {
				val = dash
			}
			cells = append(cells, cell{Text: redactTarget(val)}) // a recorded URL must hold no password; if one does, it is blanked
		}
		t.Rows = append(t.Rows, row{Cells: cells, Diff: diff[k]})
	}
	return t
}

// profiles shows each profile step: the profiles, peaks and plateaus,
// the comparison with the baseline, the curves (or grouped bars) of
// NOPM, TPM and TPM per virtual user with the plateau marked, the ratio,
// latency, the same step second by second on every target, and the
// per-step tables.
func (s *study) profiles() []block {
	var out []block
	for _, st := range s.steps {
		v, pre := st.v, st.prefix
		out = append(out, s.stepHeading(st)...)
		if st.Note != "" {
			out = append(out, block{Note: st.Note})
		}
		out = append(out, tableBlocks(pre, v.profilesTable(), v.verdictTable(), v.suspectTable(), v.contaminatedTable(), v.faultsTable(), v.comparisonTable())...)
		// The step's own tables (a paired comparison, its A/A check).
		out = append(out, tableBlocks("", sectionTables(st.Section, pre+"own-")...)...)
		nopm := v.summaryChart("chart-nopm", "NOPM vs virtual users", "NOPM", func(s Step) profile.Summary { return s.NOPM })
		tpm := v.summaryChart("chart-tpm", "TPM vs virtual users", "TPM", func(s Step) profile.Summary { return s.TPM })
		perVU := v.summaryChart("chart-tpm-per-vu", "TPM per virtual user", "TPM / VU", func(s Step) profile.Summary { return s.TPMPerVU })
		v.markKnees(&nopm)
		cs := []chartSpec{nopm, tpm, perVU}
		if len(v.profiles) > 1 {
			cs = append(cs, v.ratioChart())
		}
		for i, k := range v.kinds {
			cs = append(cs, v.latencyChart(i, k))
		}
		out = append(out, block{Note: "Points and bars are means over the complete repeats of a step; the shaded band (lines) or the whisker (bars) is the 95% confidence interval of that mean " +
			"(Student's t on the log scale, never below zero; likewise for ratios). A step with fewer than 3 runs has none. Latency: p95 paler, p99 darker."})
		out = append(out, chartBlocks(pre, cs...)...)
		out = append(out, chartBlocks(pre, v.overlayCharts()...)...)
		var rest []table
		for i := range v.profiles {
			rest = append(rest, v.stepTable(i))
		}
		for i := range v.profiles {
			rest = append(rest, v.latencyTable(i))
		}
		out = append(out, tableBlocks(pre, rest...)...)
	}
	return out
}

// cpu shows CPU idle and iowait against virtual users, and who used the
// CPU in each step.
func (s *study) cpu() []block {
	var out []block
	for _, st := range s.steps {
		c := chartBlocks(st.prefix, st.v.hostOnly(st.v.cpuChart)...)
		if bars := st.v.cpuShareBars(st.prefix + "chart-cpu-share"); bars != "" {
			c = append(c, block{Note: st.v.cpuShareNote(), Bars: bars})
		}
		if len(c) > 0 {
			out = append(out, s.stepHeading(st)...)
			out = append(out, c...)
		}
	}
	return out
}

// devices shows the I/O latency of each step from each source it has,
// each named: the device under the data directory (its latency, average
// and p99, and IOPS against virtual users, and the host tables), the
// instance's I/O as its latency layer saw it, and the database's own
// timing; throttled targets without a layer are said to have a device
// latency that leaves out the throttle's delay.
func (s *study) devices() []block {
	var out []block
	for _, st := range s.steps {
		v := st.v
		c := chartBlocks(st.prefix, v.hostOnly(v.diskLatencyChart, v.iopsChart)...)
		layer := tableBlocks(st.prefix, v.layerTable())
		timing := tableBlocks(st.prefix, v.dbTimingTable())
		if len(c)+len(layer) == 0 {
			continue
		}
		out = append(out, s.stepHeading(st)...)
		sources := []string{sourceDevice + ": the block device under the data directory, as the kernel counts it for every process " +
			"on it (charts and host tables)."}
		if len(layer) > 0 {
			sources = append(sources, sourceInstance+": per operation, through the latency layer under the instance's directories, "+
				"the delay included (latency layer table).")
		}
		if len(timing) > 0 {
			sources = append(sources, sourceDatabase+": the waits the engine measures itself (last table).")
		}
		out = append(out, block{Note: "Three sources of I/O latency, each named where it is shown.", List: sources})
		if n := v.throttleNote(); n != "" {
			out = append(out, block{Note: n})
		}
		if len(c) > 0 {
			out = append(out, block{Note: sourceDevice + ": the device under the data directory. The log device is the same device unless the " +
				"target's instance has a WAL directory of its own (see System under test); it is not sampled apart. A target on a latency " +
				"layer reaches it through the layer's process: the layer's delay is not in these figures."})
			out = append(out, c...)
			var ts []table
			for i := range v.profiles {
				ts = append(ts, v.hostTable(i))
			}
			out = append(out, tableBlocks(st.prefix, ts...)...)
		}
		out = append(out, layer...)
		out = append(out, timing...)
	}
	return out
}

// waits shows the share of database time per wait class and the average
// waits the engine measures itself, per step.
func (s *study) waits() []block {
	var out []block
	for _, st := range s.steps {
		v := st.v
		var cs []chartSpec
		for pi := range v.profiles {
			if v.hasHost(pi) {
				cs = append(cs, v.waitChart(pi))
			}
		}
		c := chartBlocks(st.prefix, cs...)
		ts := tableBlocks(st.prefix, v.avgWaitTable())
		if len(c)+len(ts) == 0 {
			continue
		}
		out = append(out, s.stepHeading(st)...)
		out = append(out, block{Note: "Share of sampled database session time per class: on CPU, data I/O, log I/O (transaction log writes and flushes), lock, latch, client, other."})
		out = append(out, c...)
		out = append(out, ts...)
	}
	return out
}

// cost shows the full cost table, every figure pointing to its formula.
func (s *study) cost() []block {
	c := s.e.Cost
	if c == nil {
		return nil
	}
	var out []block
	note := c.Note
	if len(c.Table.Rows) > 0 {
		t := c.Table
		note = strings.TrimSpace(fmt.Sprintf("Prices as the plan gives them, over %s in %s, related to the throughput measured in %s. "+
			"Cost per 1,000 NOPM (or TPM) is the total cost of ownership over the period divided by the throughput in thousands, at the peak step", yearsText(t.Years), t.Currency, c.Step))
		if t.ObjectiveP90Millis > 0 {
			note += fmt.Sprintf(" and at the best step whose New-Order p90 is at most %s ms", strconv.FormatFloat(t.ObjectiveP90Millis, 'f', -1, 64))
		}
		parts := []string{note + ". Each figure points to a numbered note with its formula and inputs."}
		if c.Note != "" {
			parts = append(parts, c.Note)
		}
		if len(c.Unpriced) > 0 {
			parts = append(parts, "No prices for "+strings.Join(c.Unpriced, ", ")+": left out.")
		}
		note = strings.Join(parts, " ")
		g := NewCostGrid(t, func(n int) string { return "[" + strconv.Itoa(n) + "]" })
		tb := table{ID: "cost-table", Sub: true, Title: "Cost and price/performance", Header: g.Header, Right: make([]bool, len(g.Header))}
		for i := 1; i < len(g.Header); i++ {
			tb.Right[i] = true
		}
		for _, r := range g.Rows {
			cells := texts(r...)
			for i := range cells {
				switch {
				case cells[i].Text == "-": // no such figure
					cells[i].Text = dash
				case strings.HasPrefix(cells[i].Text, "-"): // a negative saving
					cells[i].Text, cells[i].Bad = minusSign(cells[i].Text), true
				}
			}
			tb.Rows = append(tb.Rows, row{Cells: cells})
		}
		out = append(out, block{Note: strings.TrimSpace(note)}, block{Table: &tb})
		out = append(out, costChart(t)...)
		out = append(out, block{Notes: g.Notes, Note: "† " + cost.TPMCaveat + "."})
		return out
	}
	if note != "" {
		out = append(out, block{Note: note})
	}
	return out
}

// method states how everything was measured: the plan's scale and steps,
// the workload's mode, how NOPM and TPM were counted, the statistics, the
// tool and engine versions and the schedule as it ran.
func (s *study) method() []block {
	items := append([]string{}, s.e.Method...)
	items = append(items,
		"Workload: TPROC-C style (the five TPC-C transactions with their specified inputs and mix, clause 5.2.4.2, without keying or think time): its figures are NOPM and TPM, not tpmC, and compare with HammerDB's TPROC-C and between oltplab runs.",
		"NOPM: new orders per minute, from the schema (the delta of SUM(d_next_o_id)). TPM: database transactions per minute, from the database's own commit and rollback counters (the driver's own count on SQLite, which has none), less the statements oltplab's own samplers ran in the window where the counter counts each as a transaction (PostgreSQL: at the tpc-c mode's low rates they would be most of it); TPM is counted differently by each engine.",
		"Every run's NOPM and TPM are cross-checked against the driver's own counts (2% and 5%); a run that disagrees is suspect, listed apart and not counted.",
		statusMethod, foreignMethod, contaminationMethod,
		statisticsMethod)
	if s.anyStopping() {
		items = append(items, profile.StopRuleMethod)
	}
	items = append(items,
		"Knee and plateau: "+profile.Rule,
		"Host figures: CPU and disk from the host's counters every second over the measured window; disk latency p99 is the "+diskP99Note+". Wait classes: share of sampled database session time.")
	for _, t := range s.e.Targets {
		var parts []string
		for _, k := range []string{"tool.version", "tool.revision", "database.version"} {
			if v := t.FullContext[k]; v != "" {
				parts = append(parts, k+" "+v)
			}
		}
		if len(parts) > 0 {
			items = append(items, t.Name+": "+strings.Join(parts, ", ")+".")
		}
	}
	out := []block{{List: items}}
	sched := experimentIntro(s.e)[1]
	sched.Sub = true
	out = append(out, block{Table: &sched})
	return out
}

// appendix lists everything recorded about each target.
func (s *study) appendix() []block {
	ctxs := make([]map[string]string, len(s.e.Targets))
	for i, t := range s.e.Targets {
		ctxs[i] = t.FullContext
	}
	keys := profile.Keys(ctxs)
	if len(keys) == 0 {
		return nil
	}
	diff := map[string]bool{}
	if len(ctxs) > 1 {
		for _, k := range profile.DiffKeys(ctxs) {
			diff[k] = true
		}
	}
	t := contextGrid("appendix-context", "Recorded context", s.e.Targets, func(t ExperimentTarget) map[string]string { return t.FullContext }, keys, diff)
	t.Note = "Host, storage, database version and settings, instance, tool and parameters as recorded with each target's first measured run; highlighted rows differ."
	return []block{{Table: &t}}
}
