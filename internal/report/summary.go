package report

import (
	"fmt"
	"strings"

	"github.com/oltplab/oltplab/internal/cost"
)

// The study report's first page, its executive view: the plan's question
// and one answer sentence per target, every step's headline, the
// headline chart and the short cost table (summary in study.go orders
// them).

// question states the plan's question and answers it for each target in
// one sentence: its clauses from every step, in plan order.
func (s *study) question() []block {
	answers := s.answers()
	if s.e.Question == "" && len(answers) == 0 {
		return nil
	}
	var out []block
	if s.e.Question != "" {
		out = append(out, block{Heading: "The question", Note: s.e.Question})
	}
	if len(answers) > 0 {
		heading := "Target by target"
		if s.e.Question != "" {
			heading = "The answer, target by target"
		}
		out = append(out, block{Heading: heading, List: answers})
	}
	return out
}

// answers is one sentence per target: what each step found for it.
func (s *study) answers() []string {
	clauses := map[string][]string{}
	add := func(target, text string) {
		if text != "" {
			clauses[target] = append(clauses[target], text)
		}
	}
	profiled := false
	for _, sec := range s.e.Sections {
		if st, ok := s.profileStep(sec); ok {
			if !profiled { // the first profile step answers; the others are in the headlines
				for target, text := range profileAnswers(st.v) {
					add(target, text)
				}
				profiled = true
			}
			continue
		}
		for _, a := range sec.Answers {
			add(a.Target, a.Text)
		}
	}
	if c := s.e.Cost; c != nil {
		for _, r := range c.Table.Rows {
			if r.Peak == nil {
				continue
			}
			text := "costs " + cost.Money(r.Peak.PerKNOPM.Value, r.Currency) + " per 1,000 NOPM at its peak"
			if f := r.PeakPerKNOPMSavingPct; f != nil {
				if f.Value >= 0 {
					text += fmt.Sprintf(", %.0f%% less than %s", f.Value, c.Table.Baseline)
				} else {
					text += fmt.Sprintf(", %.0f%% more than %s", -f.Value, c.Table.Baseline)
				}
			}
			add(r.Target, text)
		}
	}
	var out []string
	for _, t := range s.e.Targets {
		cs := clauses[t.Name]
		if len(cs) == 0 {
			continue
		}
		name := t.Name
		if t.Name == s.e.Baseline && len(s.e.Targets) > 1 {
			name += " (the baseline)"
		}
		out = append(out, name+" "+strings.Join(cs, "; ")+".")
	}
	return out
}

// profileStep is the prepared profile step of a section, if it is one.
func (s *study) profileStep(sec Section) (studyStep, bool) {
	for _, st := range s.steps {
		if st.Title == sec.Title {
			return st, true
		}
	}
	return studyStep{}, false
}

// profileAnswers is each target's clause from a profile step: its peak,
// and for a target other than the baseline its NOPM against the
// baseline's at the largest step both ran.
func profileAnswers(v *view) map[string]string {
	out := map[string]string{}
	if len(v.profiles) == 0 {
		return out
	}
	for pi, p := range v.profiles {
		var parts []string
		if pi > 0 {
			at := 0
			for _, vus := range v.vus {
				s, ok1 := v.step(pi, vus)
				b, ok0 := v.step(0, vus)
				if ok0 && ok1 && s.NOPM.N > 0 && b.NOPM.N > 0 {
					at = vus
				}
			}
			if rn, _, ok := v.ratios(pi, at); ok && rn.Defined {
				part := fmt.Sprintf("gives %.2f× the NOPM of %s at %d VUs", rn.Ratio, v.profiles[0].Name, at)
				switch {
				case rn.TooFew:
					part += " (too few runs to tell)"
				case rn.HasCI && !rn.Significant:
					part += " (no difference shown)"
				}
				parts = append(parts, part)
			}
		}
		if p.Verdict.PeakVUs > 0 {
			parts = append(parts, fmt.Sprintf("peaks at %s NOPM with %d VUs", formatNumber(p.Verdict.PeakNOPM), p.Verdict.PeakVUs))
		}
		if len(parts) > 0 {
			out[p.Name] = strings.Join(parts, " and ")
		}
	}
	return out
}

// headlineChart is the chart of the first page: each target's peak NOPM
// in the first profile step (the whisker its interval), or else the
// first chart a step draws.
func (s *study) headlineChart() []block {
	if len(s.steps) > 0 {
		v := s.steps[0].v
		bc := BarChart{Title: "Peak NOPM per target", YLabel: "NOPM",
			Note: "Each target's highest mean NOPM over its steps (" + s.steps[0].Title + "), the whisker its 95% confidence interval; " +
				"over each bar of a target other than the baseline, its ratio to the baseline's peak."}
		val := BarSeries{Label: "peak NOPM"}
		var lo, hi []*float64
		ranged := false
		basePeak := 0.0
		for pi, p := range v.profiles {
			if p.Verdict.PeakVUs == 0 {
				continue
			}
			st, _ := v.step(pi, p.Verdict.PeakVUs)
			bc.Categories = append(bc.Categories, fmt.Sprintf("%s (%d VUs)", p.Name, p.Verdict.PeakVUs))
			val.Values = append(val.Values, num(p.Verdict.PeakNOPM))
			text := ""
			if pi == 0 {
				basePeak = p.Verdict.PeakNOPM
			} else if basePeak > 0 {
				text = fmt.Sprintf("%s · %.2f×", formatNumber(p.Verdict.PeakNOPM), p.Verdict.PeakNOPM/basePeak)
			}
			val.Texts = append(val.Texts, text)
			if st.NOPM.HasCI() {
				lo, hi, ranged = append(lo, num(st.NOPM.CILo)), append(hi, num(st.NOPM.CIHi)), true
			} else {
				lo, hi = append(lo, nil), append(hi, nil)
			}
		}
		if ranged {
			val.Lo, val.Hi = lo, hi
		}
		if len(bc.Categories) > 0 {
			bc.Series = []BarSeries{val}
			c := barChart("summary-chart", bc)
			c.Height = 260
			return chartBlocks("", c)
		}
	}
	for i, sec := range s.e.Sections {
		if len(sec.Bars) > 0 {
			c := barChart(fmt.Sprintf("summary-chart-step-%d", i+1), sec.Bars[0])
			c.Height = 260
			c.Note = strings.TrimSpace(sec.Title + ". " + c.Note)
			return chartBlocks("", c)
		}
	}
	return nil
}

// costChart draws each target's cost per 1,000 NOPM at its peak.
func costChart(t cost.Table) []block {
	bc := BarChart{Title: fmt.Sprintf("Cost per 1,000 NOPM at the peak (%s)", t.Currency), YLabel: t.Currency,
		Note: fmt.Sprintf("Total cost of ownership over %s divided by the peak NOPM in thousands; lower is better.", yearsText(t.Years))}
	val := BarSeries{Label: "cost per 1,000 NOPM"}
	for _, r := range t.Rows {
		if r.Peak == nil {
			continue
		}
		bc.Categories = append(bc.Categories, r.Target)
		val.Values = append(val.Values, num(r.Peak.PerKNOPM.Value))
		val.Texts = append(val.Texts, cost.Money(r.Peak.PerKNOPM.Value, r.Currency))
	}
	if len(bc.Categories) == 0 {
		return nil
	}
	bc.Series = []BarSeries{val}
	return chartBlocks("", barChart("cost-chart", bc))
}
