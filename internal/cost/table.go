package cost

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Step is one measured step of a target's profile, as the caller read
// it: mean NOPM and TPM over the step's repeats, and the 90th-percentile
// New-Order latency.
type Step struct {
	VUs  int     `json:"vus"`
	NOPM float64 `json:"nopm"`
	TPM  float64 `json:"tpm"`
	// NewOrderP90Millis is the 90th-percentile New-Order response time
	// in milliseconds; 0 when unknown.
	NewOrderP90Millis float64 `json:"new_order_p90_ms,omitempty"`
}

// Target is one priced configuration with what was measured on it.
type Target struct {
	Name   string
	Prices Prices
	// Cores is the target's cores as the caller knows them, used when
	// Prices.Cores is 0; CoresSource says where they came from. 0 when
	// unknown.
	Cores       int
	CoresSource string
	// Steps are the measured steps; none for prices alone.
	Steps []Step
}

// Options are what the table is asked for beyond the prices.
type Options struct {
	// Baseline names the target the others' savings are taken against;
	// "" for none.
	Baseline string
	// ObjectiveP90Millis is the latency objective: the best step is the
	// one with the highest NOPM whose New-Order p90 is at most this many
	// milliseconds. 0 for no objective.
	ObjectiveP90Millis float64
	// TargetNOPM asks how many cores would deliver this NOPM at each
	// target's measured NOPM per core. 0 for none.
	TargetNOPM float64
}

// Table is the cost comparison of several targets priced in one
// currency over one period.
type Table struct {
	Currency           string  `json:"currency"`
	Years              int     `json:"years"`
	Baseline           string  `json:"baseline,omitempty"`
	ObjectiveP90Millis float64 `json:"objective_new_order_p90_ms,omitempty"`
	TargetNOPM         float64 `json:"target_nopm,omitempty"`
	Rows               []Row   `json:"rows"`
}

// Row is one target's costs and price/performance.
type Row struct {
	Target string `json:"target"`
	Ownership
	// Peak is the step with the highest mean NOPM; nil when no step
	// delivered any (PeakNote says why).
	Peak     *StepCost `json:"peak,omitempty"`
	PeakNote string    `json:"peak_note,omitempty"`
	// Objective is the best step that meets the latency objective; nil
	// without an objective or when no step meets it (ObjectiveNote says
	// which).
	Objective     *StepCost `json:"objective,omitempty"`
	ObjectiveNote string    `json:"objective_note,omitempty"`
	// NOPMPerCore is the peak NOPM divided by the target's cores, and
	// CoresNeeded the cores Options.TargetNOPM would need at that rate
	// (assuming NOPM grows linearly with cores); nil when not asked for
	// or the cores are unknown.
	NOPMPerCore *Figure `json:"nopm_per_core,omitempty"`
	CoresNeeded *Figure `json:"cores_needed,omitempty"`
	// Saving is the baseline's total cost minus this target's (negative
	// when this target costs more), SavingPct the same as a percentage
	// of the baseline's, and PeakPerKNOPMSavingPct the saving on cost per
	// 1,000 NOPM at the peaks as a percentage of the baseline's. Nil for
	// the baseline itself and without one.
	Saving                *Figure `json:"saving,omitempty"`
	SavingPct             *Figure `json:"saving_pct,omitempty"`
	PeakPerKNOPMSavingPct *Figure `json:"peak_per_1000_nopm_saving_pct,omitempty"`
}

// StepCost is the price/performance of one step: the total cost of
// ownership over the period divided by the step's throughput in
// thousands (the studies' "cost per 1,000 TPM").
type StepCost struct {
	Step
	// PerKNOPM is the total cost per 1,000 NOPM.
	PerKNOPM Figure `json:"per_1000_nopm"`
	// PerKTPM is the total cost per 1,000 TPM; nil when TPM is unknown.
	// TPM is counted by each engine in its own way (commits and
	// rollbacks of all transactions, including its own), so it compares
	// only targets on the same engine; NOPM compares across engines.
	PerKTPM *Figure `json:"per_1000_tpm,omitempty"`
}

// TPMCaveat is the label that goes with every cost per 1,000 TPM.
const TPMCaveat = "TPM is counted by each database engine in its own way; compare cost per 1,000 TPM only between targets on the same engine (NOPM compares across engines)"

// Compute prices every target and relates the costs to what was
// measured. Targets must share one currency and one period; their
// prices are validated, and errors (*Error) name the target first
// ("ssd-4c.db_licence.pack_cores must be at least 1").
func Compute(targets []Target, o Options) (Table, error) {
	if err := o.validate(); err != nil {
		return Table{}, err
	}
	if len(targets) == 0 {
		return Table{}, &Error{Msg: "no targets to price"}
	}
	t := Table{Baseline: o.Baseline, ObjectiveP90Millis: o.ObjectiveP90Millis, TargetNOPM: o.TargetNOPM}
	var names []string
	for _, tg := range targets {
		if tg.Name == "" {
			return Table{}, &Error{Msg: "a target has no name"}
		}
		if slices.Contains(names, tg.Name) {
			return Table{}, &Error{Path: []string{tg.Name}, Msg: "is priced twice"}
		}
		names = append(names, tg.Name)
		own, err := tg.Prices.ownership([]string{tg.Name}, tg.Cores, tg.CoresSource)
		if err != nil {
			return Table{}, err
		}
		if len(t.Rows) == 0 {
			t.Currency, t.Years = own.Currency, own.Years
		} else {
			first := t.Rows[0].Target
			if own.Currency != t.Currency {
				return Table{}, &Error{Path: []string{tg.Name, "currency"}, Msg: fmt.Sprintf(
					"is %s but %s.currency is %s: targets compared must be priced in one currency (convert one of them)",
					own.Currency, first, t.Currency)}
			}
			if own.Years != t.Years {
				return Table{}, &Error{Path: []string{tg.Name, "years"}, Msg: fmt.Sprintf(
					"is %d but %s.years is %d: targets compared must cover one period", own.Years, first, t.Years)}
			}
		}
		r := Row{Target: tg.Name, Ownership: own}
		r.price(tg.Steps, o)
		t.Rows = append(t.Rows, r)
	}
	if o.Baseline != "" {
		i := slices.Index(names, o.Baseline)
		if i < 0 {
			return Table{}, &Error{Msg: fmt.Sprintf("baseline %q is not one of the targets (%s)", o.Baseline, strings.Join(names, ", "))}
		}
		base := t.Rows[i]
		for j := range t.Rows {
			if j != i {
				t.Rows[j].savings(base)
			}
		}
	}
	return t, nil
}

func (o Options) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"objective_p90_ms", o.ObjectiveP90Millis}, {"target_nopm", o.TargetNOPM}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return &Error{Path: []string{f.name}, Msg: fmt.Sprintf("must be a positive number, not %v", f.v)}
		}
	}
	return nil
}

// price relates the row's total cost to the measured steps.
func (r *Row) price(steps []Step, o Options) {
	ss := slices.Clone(steps)
	slices.SortStableFunc(ss, func(a, b Step) int { return a.VUs - b.VUs })
	var peak *Step
	for i := range ss {
		if ss[i].NOPM > 0 && (peak == nil || ss[i].NOPM > peak.NOPM) {
			peak = &ss[i]
		}
	}
	switch {
	case len(ss) == 0:
		r.PeakNote = "no measured steps"
	case peak == nil:
		r.PeakNote = "no step delivered any new orders"
	default:
		r.Peak = r.stepCost(*peak)
	}

	if o.ObjectiveP90Millis > 0 && len(ss) > 0 {
		var best, fastest *Step
		for i := range ss {
			s := &ss[i]
			if s.NewOrderP90Millis <= 0 || s.NOPM <= 0 {
				continue
			}
			if fastest == nil || s.NewOrderP90Millis < fastest.NewOrderP90Millis {
				fastest = s
			}
			if s.NewOrderP90Millis <= o.ObjectiveP90Millis && (best == nil || s.NOPM > best.NOPM) {
				best = s
			}
		}
		switch {
		case best != nil:
			r.Objective = r.stepCost(*best)
		case fastest == nil:
			r.ObjectiveNote = "no step has a New-Order p90 recorded"
		default:
			r.ObjectiveNote = fmt.Sprintf("no step meets New-Order p90 ≤ %s ms (the lowest p90 is %s ms, at %s)",
				plain(o.ObjectiveP90Millis), rounded(fastest.NewOrderP90Millis, 2), plural(fastest.VUs, "VU", "VUs"))
		}
	}

	// Per-core throughput divides by the cores that produced it: the
	// measured ones, or the priced ones when nothing says what the
	// measurement ran on (and the figure says which).
	basis, which := r.MeasuredCores, "measured"
	if basis == nil {
		basis, which = r.Cores, "priced"
	}
	if r.Peak != nil && basis != nil {
		cores := basis.Value
		perCore := r.Peak.NOPM / cores
		r.NOPMPerCore = &Figure{Name: "NOPM per " + which + " core at the peak", Value: perCore, Unit: "NOPM per core",
			Text: rounded(perCore, 1) + " NOPM per core"}
		r.NOPMPerCore.Formula = fmt.Sprintf("%s NOPM at %s / %s = %s", rounded(r.Peak.NOPM, 1),
			plural(r.Peak.VUs, "VU", "VUs"), plural(int(cores), which+" core", which+" cores"), r.NOPMPerCore.Text)
		if which == "measured" && r.Cores != nil && r.Cores.Value != cores {
			r.NOPMPerCore.Formula += fmt.Sprintf(" (measured on %s; priced for %s)", basis.Text, r.Cores.Text)
		}
		if which == "priced" {
			r.NOPMPerCore.Formula += " (the cores the measurement ran on are unknown)"
		}
		if o.TargetNOPM > 0 {
			x := o.TargetNOPM / perCore
			// A quotient that is a whole number up to rounding error
			// must not cost a core more.
			n := int(math.Ceil(x - 1e-9))
			r.CoresNeeded = coresFigure(fmt.Sprintf("cores needed for %s NOPM", plain(o.TargetNOPM)), n, "")
			r.CoresNeeded.Formula = fmt.Sprintf("ceil(%s NOPM / %s) = ceil(%s) = %s, assuming NOPM grows linearly with cores",
				plain(o.TargetNOPM), r.NOPMPerCore.Text, rounded(x, 2), r.CoresNeeded.Text)
		}
	}
}

// stepCost divides the total cost by the step's throughput in thousands.
func (r *Row) stepCost(s Step) *StepCost {
	cur, tot := r.Currency, r.Total
	per := func(rate float64, metric string) Figure {
		v := tot.Value / (rate / 1000)
		unit := cur + " per 1,000 " + metric
		return Figure{Name: "cost per 1,000 " + metric + " at " + plural(s.VUs, "VU", "VUs"), Value: v, Unit: unit,
			Text:    money(v, unit),
			Formula: fmt.Sprintf("%s / (%s %s / 1,000) = %s", tot.Text, rounded(rate, 1), metric, money(v, unit))}
	}
	c := &StepCost{Step: s, PerKNOPM: per(s.NOPM, "NOPM")}
	if s.TPM > 0 {
		f := per(s.TPM, "TPM")
		c.PerKTPM = &f
	}
	return c
}

// savings compares the row with the baseline.
func (r *Row) savings(base Row) {
	cur := r.Currency
	v := base.Total.Value - r.Total.Value
	r.Saving = &Figure{Name: "saving vs " + base.Target, Value: v, Unit: cur, Text: money(v, cur),
		Formula: fmt.Sprintf("%s (%s) − %s (%s) = %s", base.Total.Text, base.Target, r.Total.Text, r.Target, money(v, cur))}
	if base.Total.Value > 0 {
		pct := v / base.Total.Value * 100
		r.SavingPct = &Figure{Name: "saving vs " + base.Target, Value: pct, Unit: "%", Text: rounded(pct, 2) + "%",
			Formula: fmt.Sprintf("%s / %s × 100 = %s", money(v, cur), base.Total.Text, rounded(pct, 2)+"%")}
	}
	if base.Peak != nil && r.Peak != nil && base.Peak.PerKNOPM.Value > 0 {
		b, m := base.Peak.PerKNOPM, r.Peak.PerKNOPM
		pct := (b.Value - m.Value) / b.Value * 100
		r.PeakPerKNOPMSavingPct = &Figure{Name: "saving per 1,000 NOPM at the peak vs " + base.Target, Value: pct, Unit: "%",
			Text:    rounded(pct, 2) + "%",
			Formula: fmt.Sprintf("(%s − %s) / %s × 100 = %s", b.Text, m.Text, b.Text, rounded(pct, 2)+"%")}
	}
}
