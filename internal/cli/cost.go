package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/store"
)

const costSynopsis = "cost --prices FILE.yaml [TARGET...] [--baseline TARGET] [--objective-p90-ms MS] [--target-nopm N] [--format text|md|json]"

// costOptions are the flags of `oltplab cost`.
type costOptions struct {
	prices string
	opts   cost.Options
	format string
	json   bool
}

// runCost prices the targets of a prices file and relates the prices to
// the stored profiles with the same labels: total cost of ownership,
// cost per 1,000 NOPM and TPM at the peak (and at the best step meeting
// a latency objective), NOPM per core and savings against a baseline,
// every figure with its formula.
func runCost(ctx context.Context, a *app, args []string) error {
	var (
		sf storeFlags
		o  costOptions
	)
	fs := newFlagSet("cost")
	sf.register(fs, a.env)
	fs.StringVar(&o.prices, "prices", "", "prices `FILE` (YAML): profile labels mapped to their prices (see examples/licences.yaml)")
	fs.StringVar(&o.opts.Baseline, "baseline", "", "show each target's savings against `TARGET`")
	fs.Float64Var(&o.opts.ObjectiveP90Millis, "objective-p90-ms", 0,
		"latency objective: also price the best step whose New-Order p90 is at most `MS` milliseconds")
	fs.Float64Var(&o.opts.TargetNOPM, "target-nopm", 0,
		"show the cores `N` NOPM would need at each target's measured NOPM per core (assumes linear scaling)")
	fs.StringVar(&o.format, "format", "text", "`FORMAT`: text (table, formulas as numbered notes), md (Markdown) or json")
	fs.BoolVar(&o.json, "json", false, "same as --format json")
	refs, err := a.parseWithArgs(fs, costSynopsis, args)
	if err != nil {
		return helpOK(err)
	}
	if o.json {
		o.format = "json"
	}
	write := map[string]func(io.Writer, costView) error{"text": costText, "md": costMarkdown, "json": costJSON}[o.format]
	if write == nil {
		return usageErrorf("cost: unknown --format %q (want text, md or json)", o.format)
	}
	if o.prices == "" {
		return usageErrorf("cost: --prices FILE is required (see examples/licences.yaml)")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"--objective-p90-ms", o.opts.ObjectiveP90Millis}, {"--target-nopm", o.opts.TargetNOPM}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return usageErrorf("cost: %s must be 0 (none) or a positive number, not %v", f.name, f.v)
		}
	}
	data, err := os.ReadFile(o.prices)
	if err != nil {
		return usageErrorf("cost: read the prices: %v", err)
	}
	sheet, err := cost.ParseSheet(data)
	if err != nil {
		return pricesError(o.prices, err)
	}
	names := sheet.Names()
	if len(refs) > 0 {
		for _, r := range refs {
			if _, ok := sheet.Lookup(r); !ok {
				return usageErrorf("cost: %s has no prices for %q (it prices %s)", o.prices, r, strings.Join(names, ", "))
			}
		}
		names = refs
	}

	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	var targets []cost.Target
	unmeasured := map[string]bool{}
	for _, name := range names {
		p, _ := sheet.Lookup(name)
		t, found, err := costTarget(ctx, st, name, p)
		if err != nil {
			return err
		}
		if !found {
			unmeasured[name] = true
		}
		targets = append(targets, t)
	}
	tab, err := cost.Compute(targets, o.opts)
	if err != nil {
		return pricesError(o.prices, cost.LocateIn(err, data))
	}
	for i, r := range tab.Rows {
		if unmeasured[r.Target] {
			tab.Rows[i].PeakNote = fmt.Sprintf("no stored profile is labelled %q", r.Target)
		}
	}
	return write(a.out(), costView{PricesFile: o.prices, Table: tab})
}

// pricesError makes a cost.Error one usage line: FILE:LINE: field what.
func pricesError(file string, err error) error {
	var e *cost.Error
	if !errors.As(err, &e) {
		return err
	}
	if e.Line > 0 {
		return usageErrorf("%s:%d: %s", file, e.Line, e.Message())
	}
	return usageErrorf("%s: %s", file, e.Message())
}

// costTarget reads the stored profile labelled name, when there is one,
// into the steps the cost model needs.
func costTarget(ctx context.Context, st *store.Store, name string, p cost.Prices) (cost.Target, bool, error) {
	t := cost.Target{Name: name, Prices: p}
	sp, err := st.ProfileByLabelOrID(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return t, false, nil
	}
	if err != nil {
		return t, false, withCode(exitStore, fmt.Errorf("find profile %q: %w", name, err))
	}
	rp, err := results.Profile(ctx, st, sp, false)
	if err != nil {
		return t, false, err
	}
	for _, s := range rp.Steps {
		if s.NOPM.N == 0 {
			continue // no complete repeat
		}
		p90, err := newOrderP90(ctx, st, s)
		if err != nil {
			return t, false, err
		}
		t.Steps = append(t.Steps, cost.Step{VUs: s.VUs, NOPM: s.NOPM.Mean, TPM: s.TPM.Mean, NewOrderP90Millis: p90})
	}
	t.Cores, t.CoresSource = recordedCores(rp)
	return t, true, nil
}

// newOrderP90 is the 90th-percentile New-Order latency, in milliseconds,
// of the exactly merged histograms of a step's complete repeats (the ones
// its NOPM mean is taken over); 0 when none was recorded.
func newOrderP90(ctx context.Context, st *store.Store, s report.Step) (float64, error) {
	var ids []int64
	for _, r := range s.Repeats {
		if !r.Partial {
			ids = append(ids, r.RunID)
		}
	}
	hs, err := st.MergeHistograms(ctx, ids...)
	if err != nil {
		return 0, withCode(exitStore, fmt.Errorf("merge the latency histograms of the %d-VU step: %w", s.VUs, err))
	}
	h := hs["new_order"]
	if h == nil || h.TotalCount() == 0 {
		return 0, nil
	}
	return float64(h.ValueAtQuantile(90)) / 1000, nil
}

// recordedCores is the recorded host's logical CPUs when the profile's
// database ran on that host (embedded SQLite, or a server on loopback);
// 0 otherwise, since the recorded host is then the load generator.
func recordedCores(p report.Profile) (int, string) {
	n, err := strconv.Atoi(p.Context["host.LogicalCPUs"])
	if err != nil || n <= 0 {
		return 0, ""
	}
	local := p.Dialect == "sqlite" || strings.HasPrefix(p.Target, "sqlite:")
	if u, err := url.Parse(p.Target); err == nil && !local {
		switch u.Hostname() {
		case "127.0.0.1", "localhost", "::1":
			local = true
		}
	}
	if !local {
		return 0, ""
	}
	return n, "the logical CPUs of the host the profile recorded (its database ran there)"
}

// costView is what `oltplab cost` renders.
type costView struct {
	PricesFile string     `json:"prices_file"`
	Table      cost.Table `json:"table"`
}

func costJSON(w io.Writer, v costView) error { return writeJSON(w, v) }

// costGrid is the cost table as cells, with the formulas as numbered
// notes that the cells point to.
type costGrid struct {
	header []string
	rows   [][]string
	notes  []string
}

// note adds a numbered note and returns its marker.
func (g *costGrid) note(mark func(int) string, text string) string {
	g.notes = append(g.notes, text)
	return mark(len(g.notes))
}

func buildCostGrid(t cost.Table, mark func(int) string) costGrid {
	var g costGrid
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

	g.header = []string{"target", "cores"}
	if withLicence {
		g.header = append(g.header, "licensed cores", "db licence")
	}
	g.header = append(g.header, "total cost", "peak VUs", "NOPM", "per 1,000 NOPM", "per 1,000 TPM †")
	if obj {
		p := strconv.FormatFloat(t.ObjectiveP90Millis, 'f', -1, 64)
		g.header = append(g.header, "p90 ≤ "+p+" ms: VUs", "NOPM", "p90 ms", "per 1,000 NOPM")
	}
	if perCore {
		g.header = append(g.header, "NOPM per core")
		if t.TargetNOPM > 0 {
			g.header = append(g.header, "cores for "+thousands(t.TargetNOPM)+" NOPM")
		}
	}
	if base {
		g.header = append(g.header, "saving vs "+t.Baseline)
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
		g.rows = append(g.rows, row)
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

func costHeadline(v costView) string {
	t := v.Table
	years := fmt.Sprintf("%d years", t.Years)
	if t.Years == 1 {
		years = "1 year"
	}
	return fmt.Sprintf("Cost over %s in %s (prices: %s). Cost per 1,000 NOPM or TPM is the total cost over the period divided by the throughput in thousands.",
		years, t.Currency, v.PricesFile)
}

func costText(w io.Writer, v costView) error {
	g := buildCostGrid(v.Table, func(n int) string { return fmt.Sprintf("[%d]", n) })
	fmt.Fprintln(w, costHeadline(v))
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(g.header, "\t"))
	for _, r := range g.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for i, n := range g.notes {
		fmt.Fprintf(w, "[%d] %s\n", i+1, n)
	}
	_, err := fmt.Fprintf(w, "† %s.\n", cost.TPMCaveat)
	return err
}

func costMarkdown(w io.Writer, v costView) error {
	g := buildCostGrid(v.Table, func(n int) string { return fmt.Sprintf("[^%d]", n) })
	fmt.Fprintf(w, "## Cost\n\n%s\n\n", costHeadline(v))
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	fmt.Fprintf(w, "| %s |\n|", strings.Join(g.header, " | "))
	for range g.header {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range g.rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = esc(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	for i, n := range g.notes {
		fmt.Fprintf(w, "[^%d]: %s\n", i+1, strings.ReplaceAll(n, "\n", "\n   "))
	}
	_, err := fmt.Fprintf(w, "\n† %s.\n", cost.TPMCaveat)
	return err
}
