package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/store"
	"go.yaml.in/yaml/v3"
)

const costSynopsis = "cost --prices FILE.yaml [--price-list FILE] [TARGET...] [--baseline TARGET] [--objective-p90-ms MS] [--target-nopm N] [--format text|md|json]"

// costOptions are the flags of `oltplab cost`.
type costOptions struct {
	prices    string
	priceList string
	opts      cost.Options
	format    string
	json      bool
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
	fs.StringVar(&o.prices, "prices", "", "prices `FILE` (YAML): profile labels mapped to their prices (see examples/licence-study.yaml)")
	fs.StringVar(&o.priceList, "price-list", "", "cloud instance prices `FILE` (a CSV of instance_type, vcpus, memory_gib, price_per_hour, currency, or a subset of AWS's offer file JSON; see examples/cloud-prices.csv): prices that say cloud: {instance_type: T} take T's price per hour and vCPUs from it")
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
		return usageErrorf("cost: --prices FILE is required (see examples/licence-study.yaml)")
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
	var list *cost.PriceList
	if o.priceList != "" {
		raw, err := readBounded(o.priceList, cost.MaxPriceListBytes)
		if err != nil {
			return usageErrorf("cost: read the price list: %v", err)
		}
		l, err := cost.ParsePriceList(o.priceList, raw)
		if err != nil {
			return usageErrorf("cost: %v", err)
		}
		list = &l
	}
	sheet, err := cost.ParseSheetPriced(data, list)
	if err != nil {
		if isPlan(data) {
			return usageErrorf("cost: %s is an experiment plan: its report prices its targets (oltplab experiment run, then oltplab report --experiment ID); --prices takes a prices file such as examples/licence-study.yaml", o.prices)
		}
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
	rp, err := results.Profile(ctx, st, sp, report.Include{})
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
	t.Cores, t.CoresSource = results.RecordedCores(rp)
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

// costView is what `oltplab cost` renders.
type costView struct {
	PricesFile string     `json:"prices_file"`
	Table      cost.Table `json:"table"`
}

func costJSON(w io.Writer, v costView) error { return writeJSON(w, v) }

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
	g := report.NewCostGrid(v.Table, func(n int) string { return fmt.Sprintf("[%d]", n) })
	fmt.Fprintln(w, costHeadline(v))
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(g.Header, "\t"))
	for _, r := range g.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for i, n := range g.Notes {
		fmt.Fprintf(w, "[%d] %s\n", i+1, n)
	}
	_, err := fmt.Fprintf(w, "† %s.\n", cost.TPMCaveat)
	return err
}

func costMarkdown(w io.Writer, v costView) error {
	g := report.NewCostGrid(v.Table, func(n int) string { return fmt.Sprintf("[^%d]", n) })
	fmt.Fprintf(w, "## Cost\n\n%s\n\n", costHeadline(v))
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	fmt.Fprintf(w, "| %s |\n|", strings.Join(g.Header, " | "))
	for range g.Header {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range g.Rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = esc(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	for i, n := range g.Notes {
		fmt.Fprintf(w, "[^%d]: %s\n", i+1, strings.ReplaceAll(n, "\n", "\n   "))
	}
	_, err := fmt.Fprintf(w, "\n† %s.\n", cost.TPMCaveat)
	return err
}

// isPlan reports whether data is an experiment plan (it has the steps
// and warehouses a plan requires) rather than a prices file.
func isPlan(data []byte) bool {
	var top map[string]any
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, steps := top["steps"]
	_, wh := top["warehouses"]
	return steps && wh
}

// readBounded reads a file of at most limit bytes (one more tells the
// parser it is too long).
func readBounded(path string, limit int64) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}
