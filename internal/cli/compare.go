package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
)

const compareSynopsis = `compare PROFILE PROFILE... | TPCH-RESULT TPCH-RESULT... [--format text|md|json]

Profiles (labels or ids) are compared step by step: each one's mean NOPM and
TPM, the ratio to the first with its 95% confidence interval, the peaks and
the recorded context that differs. TPC-H results (result ids or labels of
"oltplab tpch" runs) are compared with each other: Power@Size,
Throughput@Size and QphH@Size, each query's and refresh function's
power-test interval, each throughput stream's geometric mean, the ratios to
the first, and what differs (test, scale factor, streams, seed, dialect,
target, recorded context). A TPC-H result does not compare with a profile.`

func runCompare(ctx context.Context, a *app, args []string) error {
	var (
		sf     storeFlags
		format string
		inc    report.Include
	)
	fs := newFlagSet("compare")
	sf.register(fs, a.env)
	registerInclude(fs, &inc)
	fs.StringVar(&format, "format", "text", "`FORMAT`: text, md (Markdown tables) or json")
	refs, err := a.parseWithArgs(fs, compareSynopsis, args)
	if err != nil {
		return helpOK(err)
	}
	if len(refs) < 2 {
		return usageErrorf("compare: name at least two profiles (labels or ids; see `oltplab results list`)")
	}
	text := func(w io.Writer, in report.Input) error { return compareText(w, in, a.red) }
	write := map[string]func(io.Writer, report.Input) error{"text": text, "md": report.Markdown, "json": report.JSON}[format]
	if write == nil {
		return usageErrorf("compare: unknown --format %q (want text, md or json)", format)
	}
	hs, err := a.compareKind(ctx, sf, "compare", refs)
	if err != nil {
		return err
	}
	if hs != nil {
		c := compareTPCH(hs)
		switch format {
		case "md":
			return writeTPCHComparisonMarkdown(a.out(), c)
		case "json":
			return writeJSON(a.out(), c)
		}
		return writeTPCHComparisonText(a.out(), c)
	}
	if err := a.onlyProfiles(ctx, sf, refs); err != nil {
		return err
	}
	return a.renderProfiles(ctx, sf, refs, inc, "", write)
}

// compareText prints, per step, each profile's mean NOPM and TPM with the
// ratio to the first profile and its 95% confidence interval; then the
// peaks and the context keys whose values differ.
func compareText(w io.Writer, in report.Input, red func(string) string) error {
	ps := in.Profiles
	base := ps[0]
	for _, p := range ps {
		printProfileTable(w, p, red)
	}
	fmt.Fprintf(w, "\nratio to %s (mean NOPM; 95%% CI on the log scale):\n", name(base))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "VUs"
	for _, p := range ps {
		header += "\t" + name(p) + " NOPM"
	}
	for _, p := range ps[1:] {
		header += "\t" + name(p) + "/" + name(base)
	}
	fmt.Fprintln(tw, header)
	for _, vus := range allVUs(ps) {
		line := fmt.Sprint(vus)
		var den *report.Step
		for _, p := range ps {
			s := stepOf(p, vus)
			if s == nil {
				line += "\t-"
				continue
			}
			if den == nil && p.ID == base.ID {
				den = s
			}
			line += "\t" + thousands(s.NOPM.Mean)
		}
		for _, p := range ps[1:] {
			s := stepOf(p, vus)
			if s == nil || den == nil {
				line += "\t-"
				continue
			}
			line += "\t" + ratioText(profile.Ratio(s.NOPM, den.NOPM))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()

	fmt.Fprintf(w, "\npeaks:\n")
	for _, p := range ps {
		fmt.Fprintf(w, "  %-12s %s\n", name(p), p.Verdict.Reason)
	}
	printCPUShares(w, ps)
	ctxs := make([]map[string]string, len(ps))
	for i, p := range ps {
		ctxs[i] = p.Context
	}
	diff := profile.DiffKeys(ctxs)
	differs := map[string]bool{}
	for _, k := range diff {
		differs[k] = true
	}
	header = "  parameter"
	for _, p := range ps {
		header += "\t" + name(p)
	}
	// Every run parameter, the ones that shape the load first, whether it
	// differs or not: a ratio means little without knowing that both
	// sides ran the same load the same way.
	fmt.Fprintf(w, "\nrun parameters (* differs):\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, k := range runParams(ctxs) {
		mark := " "
		if differs["param."+k] {
			mark = "*"
		}
		fmt.Fprintln(tw, contextLine(mark+" "+k, "param."+k, ctxs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var rest []string
	for _, k := range diff {
		if !strings.HasPrefix(k, "param.") && !ignoredDiff(k) {
			rest = append(rest, k)
		}
	}
	if len(rest) == 0 {
		fmt.Fprintf(w, "\nno other differences in recorded context\n")
		return nil
	}
	fmt.Fprintf(w, "\nwhat else differs between them:\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Replace(header, "parameter", "key", 1))
	for _, k := range rest {
		fmt.Fprintln(tw, contextLine("  "+k, k, ctxs))
	}
	return tw.Flush()
}

// leadingParams are the run parameters that shape the load, listed first
// by compare in this order; the others follow by name.
var leadingParams = []string{"mode", "mode_label", "style", "vus", "terminals", "sessions", "delivery_sessions", "rate_per_vu",
	"warehouses", "all_warehouses", "rampup_seconds", "duration_seconds", "grace_seconds", "repeat", "interleave",
	"checkpoint_before", "reset_between", "dialect"}

// runParams is every run parameter recorded with any of the profiles
// (their "param." keys, the seed left out), leadingParams first.
func runParams(ctxs []map[string]string) []string {
	var out []string
	seen := map[string]bool{"seed": true}
	all := profile.Keys(ctxs)
	for _, k := range leadingParams {
		if slices.Contains(all, "param."+k) {
			out, seen[k] = append(out, k), true
		}
	}
	for _, k := range all {
		if p, ok := strings.CutPrefix(k, "param."); ok && !seen[p] {
			out, seen[p] = append(out, p), true
		}
	}
	return out
}

// contextLine is one row of a context table: label, then key's value in
// each context ("-" where it has none), shortened to 40 characters.
func contextLine(label, key string, ctxs []map[string]string) string {
	line := label
	for _, c := range ctxs {
		v := c[key]
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		if v == "" {
			v = "-"
		}
		line += "\t" + v
	}
	return line
}

// printCPUShares prints who used the CPU in each profile's steps (every
// measured run of a step, contaminated and failed ones included), when
// it was sampled.
func printCPUShares(w io.Writer, ps []report.Profile) {
	var rows []string
	for _, p := range ps {
		for _, s := range p.Steps {
			c := s.CPU
			if c == nil {
				continue
			}
			opt := func(v *float64) string {
				if v == nil {
					return "-"
				}
				return fmt.Sprintf("%.2f", *v)
			}
			foreignPct, setPct := "-", "-"
			if c.ForeignCores != nil && c.HostCores > 0 {
				foreignPct = fmt.Sprintf("%.1f%%", 100**c.ForeignCores/c.HostCores)
			}
			if c.CPUSetForeignPct != nil {
				setPct = fmt.Sprintf("%.1f%% of %s", *c.CPUSetForeignPct, c.CPUSet)
			}
			rows = append(rows, fmt.Sprintf("  %s\t%d\t%d\t%g\t%s\t%.2f\t%s\t%s\t%.2f\t%.2f\t%s", name(p), s.VUs, c.Runs, c.HostCores,
				opt(c.ServerCores), c.OltplabCores, opt(c.ForeignCores), foreignPct, c.StealCores, c.IdleCores, setPct))
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nwho used the CPU (cores, averaged over every measured run of a step; foreign: neither the database server nor oltplab):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  profile\tVUs\truns\tcores\tserver\toltplab\tforeign\tforeign %\tsteal\tidle\tforeign on the server's CPUs")
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	tw.Flush()
}

// ignoredDiff hides keys that always differ between two profiles.
func ignoredDiff(k string) bool {
	return k == "param.seed" || strings.HasSuffix(k, "built_at")
}

// ratioText is a ratio with its interval, written so that no sign can be
// taken for a separator: "1.20x [0.95, 1.52] not significant", "1.29x
// (too few runs: n<3 a side)".
func ratioText(r profile.RatioCI) string {
	ci := func() string {
		return interval(fmt.Sprintf("%.2f", r.Lo), fmt.Sprintf("%.2f", r.Hi))
	}
	switch {
	case !r.Defined:
		return "-"
	case r.TooFew:
		return fmt.Sprintf("%.2fx (too few runs: n<%d a side)", r.Ratio, profile.MinRepeats)
	case !r.HasCI:
		return fmt.Sprintf("%.2fx (no CI: a side measured nothing)", r.Ratio)
	case !r.Significant:
		return fmt.Sprintf("%.2fx %s not significant", r.Ratio, ci())
	}
	return fmt.Sprintf("%.2fx %s", r.Ratio, ci())
}

func name(p report.Profile) string {
	if p.Label != "" {
		return p.Label
	}
	return fmt.Sprintf("#%d", p.ID)
}

func allVUs(ps []report.Profile) []int {
	seen := map[int]bool{}
	var out []int
	for _, p := range ps {
		for _, s := range p.Steps {
			if !seen[s.VUs] {
				seen[s.VUs] = true
				out = append(out, s.VUs)
			}
		}
	}
	sort.Ints(out)
	return out
}

func stepOf(p report.Profile, vus int) *report.Step {
	for i := range p.Steps {
		if p.Steps[i].VUs == vus {
			return &p.Steps[i]
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// onlyProfiles refuses a reference that names a monitor rather than a
// profile: a monitor has no steps to compare.
func (a *app) onlyProfiles(ctx context.Context, sf storeFlags, refs []string) error {
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, ref := range refs {
		if _, err := st.ProfileByLabelOrID(ctx, ref); err == nil {
			continue
		}
		if _, found, _ := results.MonitorByRef(ctx, st, ref); found {
			return usageErrorf("compare: %q is a monitor result, which has no steps to compare; show it with oltplab report", ref)
		}
	}
	return nil
}
