package report

import (
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/cost"
)

// CostGrid is a cost table as cells, with the formulas as numbered
// notes that the cells point to: `oltplab cost` and an experiment's
// report show the same grid.
type CostGrid struct {
	Header []string
	Rows   [][]string
	// Notes are the formulas, numbered from 1 in the order the cells
	// point to them.
	Notes []string
}

// note adds a numbered note and returns its marker.
func (g *CostGrid) note(mark func(int) string, text string) string {
	g.Notes = append(g.Notes, text)
	return mark(len(g.Notes))
}

// NewCostGrid lays t out; mark formats the marker of note n ("[3]").
func NewCostGrid(t cost.Table, mark func(int) string) CostGrid {
	var g CostGrid
	has := func(f func(cost.Row) bool) bool {
		for _, r := range t.Rows {
			if f(r) {
				return true
			}
		}
		return false
	}
	licence := func(r cost.Row) *cost.Figure {
		for i := range r.Components {
			if strings.HasPrefix(r.Components[i].Name, "db licence") && !strings.HasSuffix(r.Components[i].Name, "support") {
				return &r.Components[i]
			}
		}
		return nil
	}
	withLicence := has(func(r cost.Row) bool { return r.LicensedCores != nil })
	perCore := has(func(r cost.Row) bool { return r.NOPMPerCore != nil })
	obj := t.ObjectiveP90Millis > 0
	base := t.Baseline != ""

	// Priced and measured cores side by side when they differ anywhere:
	// which one a per-core figure divides by, its note says.
	measured := has(func(r cost.Row) bool {
		return r.MeasuredCores != nil && (r.Cores == nil || r.Cores.Value != r.MeasuredCores.Value)
	})
	g.Header = []string{"target", "cores"}
	if measured {
		g.Header = []string{"target", "priced cores", "measured cores"}
	}
	if withLicence {
		g.Header = append(g.Header, "licensed cores", "db licence")
	}
	g.Header = append(g.Header, "total cost", "peak VUs", "NOPM", "per 1,000 NOPM", "per 1,000 TPM †")
	if obj {
		p := strconv.FormatFloat(t.ObjectiveP90Millis, 'f', -1, 64)
		g.Header = append(g.Header, "p90 ≤ "+p+" ms: VUs", "NOPM", "p90 ms", "per 1,000 NOPM")
	}
	if perCore {
		g.Header = append(g.Header, "NOPM per core ("+perCoreBasis(t)+")")
		if t.TargetNOPM > 0 {
			g.Header = append(g.Header, "cores for "+thousands(t.TargetNOPM)+" NOPM")
		}
	}
	if base {
		g.Header = append(g.Header, "saving vs "+t.Baseline)
	}

	for _, r := range t.Rows {
		cell := func(f *cost.Figure, text string) string {
			if f == nil {
				return "-"
			}
			if f.Formula == "" {
				return text
			}
			return text + " " + g.note(mark, r.Target+" "+f.Name+": "+f.Formula)
		}
		cores := func(f *cost.Figure) string {
			if f == nil {
				return "-"
			}
			return cell(f, strconv.Itoa(int(f.Value)))
		}
		per := func(f *cost.Figure) string {
			if f == nil {
				return "-"
			}
			return cell(f, cost.Money(f.Value, r.Currency))
		}
		row := []string{r.Target, cores(r.Cores)}
		if measured {
			row = append(row, cores(r.MeasuredCores))
		}
		if withLicence {
			row = append(row, cores(r.LicensedCores), cell(licence(r), textOf(licence(r))))
		}
		// The total's note spells out the components that have no
		// column of their own.
		total := r.Total.Formula
		for i, c := range r.Components {
			if withLicence && &r.Components[i] == licence(r) {
				continue
			}
			total += "\n    " + c.Name + ": " + c.Formula
		}
		row = append(row, r.Total.Text+" "+g.note(mark, r.Target+" "+r.Total.Name+": "+total))
		if r.Peak != nil {
			var tpm *cost.Figure
			if r.Peak.PerKTPM != nil {
				tpm = r.Peak.PerKTPM
			}
			row = append(row, strconv.Itoa(r.Peak.VUs), thousands(r.Peak.NOPM), per(&r.Peak.PerKNOPM), per(tpm))
		} else {
			row = append(row, "- "+g.note(mark, r.Target+": "+r.PeakNote), "-", "-", "-")
		}
		if obj {
			if o := r.Objective; o != nil {
				row = append(row, strconv.Itoa(o.VUs), thousands(o.NOPM), strconv.FormatFloat(o.NewOrderP90Millis, 'f', 2, 64), per(&o.PerKNOPM))
			} else {
				why := r.ObjectiveNote
				if why == "" {
					why = r.PeakNote
				}
				row = append(row, "none "+g.note(mark, r.Target+": "+why), "-", "-", "-")
			}
		}
		if perCore {
			row = append(row, cell(r.NOPMPerCore, textOf(r.NOPMPerCore)))
			if t.TargetNOPM > 0 {
				row = append(row, cores(r.CoresNeeded))
			}
		}
		if base {
			switch {
			case r.Target == t.Baseline:
				row = append(row, "baseline")
			case r.Saving != nil:
				text, formula := r.Saving.Text, r.Saving.Formula
				if p := r.SavingPct; p != nil {
					text += " (" + p.Text + ")"
					formula += "; " + p.Formula
				}
				if p := r.PeakPerKNOPMSavingPct; p != nil {
					formula += "; per 1,000 NOPM at the peaks " + p.Formula
				}
				row = append(row, text+" "+g.note(mark, r.Target+" "+r.Saving.Name+": "+formula))
			default:
				row = append(row, "-")
			}
		}
		g.Rows = append(g.Rows, row)
	}
	return g
}

func textOf(f *cost.Figure) string {
	if f == nil {
		return "-"
	}
	if f.Unit == "NOPM per core" {
		return strings.TrimSuffix(f.Text, " NOPM per core")
	}
	return f.Text
}

// perCoreBasis says which cores the table's per-core figures divide by:
// "measured cores", "priced cores", or "see notes" when rows differ.
func perCoreBasis(t cost.Table) string {
	seen := map[string]bool{}
	for _, r := range t.Rows {
		if f := r.NOPMPerCore; f != nil {
			seen[strings.TrimSuffix(strings.TrimPrefix(f.Name, "NOPM per "), " core at the peak")] = true
		}
	}
	switch {
	case len(seen) == 1 && seen["measured"]:
		return "measured cores"
	case len(seen) == 1 && seen["priced"]:
		return "priced cores"
	}
	return "measured or priced: see notes"
}
