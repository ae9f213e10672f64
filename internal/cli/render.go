package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// printRunResult renders one run's measurements as readable tables.
func (a *app) printRunResult(r *driver.Result, id int64, tg dialect.Target) {
	w := a.out()
	state := ""
	if r.Partial {
		state = "  (PARTIAL: interrupted before the window ended)"
	}
	fmt.Fprintf(w, "\nrun %d: %s, %d virtual user(s), %s, %d warehouse(s), seed %d%s\n",
		id, tg, r.Options.VUs, r.Options.Style, r.Warehouses, r.Options.Seed, state)
	fmt.Fprintf(w, "measured %.1f s (ramp-up %s and grace excluded); mode tproc-c (no keying or think time)\n\n",
		r.Window.Seconds, r.Options.Rampup)
	fmt.Fprintf(w, "  NOPM %12s   from %s\n", thousands(r.NOPM), r.NOPMSource)
	fmt.Fprintf(w, "  TPM  %12s   from %s\n", thousands(r.TPM), r.TPMSource)
	fmt.Fprintf(w, "  driver's own counts: NOPM %s, TPM %s%s\n", thousands(r.DriverNOPM), thousands(r.DriverTPM), agreement(r))
	for _, reason := range r.Suspect {
		fmt.Fprintln(w, a.red("  SUSPECT: "+reason))
	}
	if r.IsSuspect() {
		fmt.Fprintln(w, a.red("  this run is stored with status suspect and left out of peaks and verdicts (--include-suspect shows it)"))
	}
	a.printFaults(w, r)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  note: %s\n", warn)
	}
	fmt.Fprintln(w)

	printKindsTable(w, r)
	if len(r.ErrorsByClass) > 0 {
		var parts []string
		for c, n := range r.ErrorsByClass {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
		fmt.Fprintf(w, "\nerrors by class: %s\n", strings.Join(parts, ", "))
	}

	fmt.Fprintf(w, "\naudit figures (TPC-C 9.2 and 5.2.3):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range r.AuditFigures {
		verdict := auditVerdict(f)
		if strings.HasPrefix(verdict, "BELOW") || strings.HasPrefix(verdict, "OUT OF") {
			verdict = a.red(verdict) // the last column: colour codes cannot upset the alignment
		}
		fmt.Fprintf(tw, "  %s\t%.3f\t[%g, %g]\t%d samples\t%s\n", f.Name, f.Value, f.Lo, f.Hi, f.Samples, verdict)
	}
	tw.Flush()
	fmt.Fprintf(w, "\ndriver: %.2f CPU s, %.1f µs CPU per database transaction; scheduling lag max %.1f ms, mean %.2f ms\n",
		r.DriverCPUSeconds, r.DriverCPUMicrosPerTx, r.SchedLagMaxMillis, r.SchedLagMeanMillis)
	if r.EmbeddedDatabase {
		fmt.Fprintf(w, "        (embedded SQLite runs inside oltplab: its CPU includes the database's work)\n")
	}
}

// printFaults prints what went wrong on the server's side during a run
// (driver.Result.FaultNotes): its outages, why TPM and NOPM are the
// driver's own counts, and a failure rate past --max-failure-rate, in red.
func (a *app) printFaults(w io.Writer, r *driver.Result) {
	for _, n := range r.FaultNotes() {
		fmt.Fprintf(w, "  %s\n", n)
	}
	if r.TooManyFailures != "" {
		fmt.Fprintln(w, a.red("  FAILURES: "+r.TooManyFailures))
		fmt.Fprintln(w, a.red("  this run is stored with status failures and left out of peaks and verdicts"))
	}
}

// auditVerdict judges one audit figure. A mix share below its clause
// 5.2.3 minimum is a failure: the deck deals every minimum with margin.
// Another figure outside its bounds, but by less than the sampling noise
// of its count (3 standard errors: a correct generator strays further in
// 0.3% of runs), is said to be within that noise, with the noise and the
// count; beyond it, it is out of bounds.
func auditVerdict(f tpcc.Figure) string {
	switch {
	case f.NotApplicable:
		return "n/a (one warehouse)"
	case f.OK:
		return "ok"
	case f.Samples == 0:
		return "no samples"
	case f.Clause == "5.2.3":
		return fmt.Sprintf("BELOW the 5.2.3 minimum of %g%%", f.Lo)
	}
	if p := (f.Lo + f.Hi) / 200; p > 0 && p < 1 && f.Name != "average_order_lines" {
		noise := 3 * 100 * math.Sqrt(p*(1-p)/float64(f.Samples))
		if f.Value >= f.Lo-noise && f.Value <= f.Hi+noise {
			return fmt.Sprintf("within sampling noise of the bounds (±%.2f: 3 standard errors of %s samples)", noise, thousands(float64(f.Samples)))
		}
	}
	return "OUT OF BOUNDS"
}

// printKindsTable prints each transaction kind's counts, share of the
// mix and latency percentiles.
func printKindsTable(w io.Writer, r *driver.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transaction\tcompleted\trolled back\tretried\tfailed\tmix %\tp50 ms\tp90 ms\tp95 ms\tp99 ms\tp99.9 ms\tmax ms\t")
	for _, k := range r.Kinds {
		var failed int64
		for _, n := range k.Failed {
			failed += n
		}
		l := k.LatencyMicros
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", k.Kind, k.Completed, k.RolledBack, k.Retried,
			failed, r.MixPct[k.Kind], ms(l.P50), ms(l.P90), ms(l.P95), ms(l.P99), ms(l.P999), ms(l.Max))
	}
	tw.Flush()
}

// agreement says how the database's figures compare with the driver's
// own counts, when the cross-check ran.
func agreement(r *driver.Result) string {
	c := r.Check
	if c == nil || r.IsSuspect() {
		return ""
	}
	s := fmt.Sprintf(" (agree: new orders %+.1f%%", c.NewOrders.DiffPct)
	if c.Transactions != nil {
		s += fmt.Sprintf(", transactions %+.1f%%", c.Transactions.DiffPct)
	}
	return s + ")"
}

// red marks text that must not be missed: in red on a terminal, as is
// elsewhere (NO_COLOR turns colour off, https://no-color.org).
func (a *app) red(s string) string {
	if a.env["NO_COLOR"] != "" || !isTerminal(a.stdio.Out) {
		return s
	}
	return "\x1b[31m" + s + "\x1b[0m"
}

func ms(us int64) string { return fmt.Sprintf("%.2f", float64(us)/1000) }

// thousands formats a rate with thousands separators and no decimals.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// printProfileTable renders the per-step statistics of one profile, the
// suspect runs it left out (through red), and the verdict.
func printProfileTable(w io.Writer, p report.Profile, red func(string) string) {
	name := p.Label
	if name == "" {
		name = fmt.Sprintf("profile %d", p.ID)
	}
	fmt.Fprintf(w, "\n%s (profile %d): %s\n", name, p.ID, p.Target)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "VUs\tn\tNOPM mean\tsd\t95% CI\tTPM mean\tsd\t95% CI\tTPM/VU\tCV\t\t")
	tooFew := false
	for _, s := range p.Steps {
		ci := func(sum profile.Summary) string {
			if !sum.HasCI() {
				return "-"
			}
			return interval(thousands(sum.CILo), thousands(sum.CIHi))
		}
		var flags []string
		if s.NOPM.HighVariation || s.TPM.HighVariation {
			flags = append(flags, "high variation")
		}
		if s.NOPM.HasCI() && !s.NOPM.Conclusive() {
			flags = append(flags, fmt.Sprintf("n=%d: too few to conclude", s.NOPM.N))
			tooFew = true
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%s\t\n", s.VUs, s.NOPM.N,
			thousands(s.NOPM.Mean), thousands(s.NOPM.StdDev), ci(s.NOPM),
			thousands(s.TPM.Mean), thousands(s.TPM.StdDev), ci(s.TPM),
			thousands(s.TPMPerVU.Mean), 100*s.NOPM.CV, strings.Join(flags, ", "))
	}
	tw.Flush()
	if tooFew {
		fmt.Fprintf(w, "note: an interval from fewer than %d repeats rests on too few degrees of freedom to conclude anything: use --repeat %d or more\n",
			profile.MinRepeats, profile.MinRepeats)
	}
	for _, s := range p.Steps {
		for _, r := range s.Repeats {
			if !r.Suspect {
				continue
			}
			what := "left out of the statistics and verdict"
			if r.Counted {
				what = "counted (--include-suspect)"
			}
			fmt.Fprintln(w, red(fmt.Sprintf("suspect: run %d (%d VUs, NOPM %s) %s: %s", r.RunID, s.VUs, thousands(r.NOPM), what,
				strings.Join(r.Reasons, "; "))))
		}
	}
	if p.Verdict.Reason != "" {
		fmt.Fprintf(w, "verdict: %s\n", p.Verdict.Reason)
	}
}

// printProfileSummary prints the statistics of a profile that just ran.
func (a *app) printProfileSummary(ctx context.Context, st *store.Store, id int64) error {
	p, err := st.GetProfile(ctx, id)
	if err != nil {
		return withCode(exitStore, fmt.Errorf("read profile %d: %w", id, err))
	}
	rp, err := results.Profile(ctx, st, p, false)
	if err != nil {
		return err
	}
	printProfileTable(a.out(), rp, a.red)
	return nil
}

// interval writes a confidence interval so that no sign and no separator
// can be mistaken for the other: "[−1.20, 26.15]" (U+2212 minus).
func interval(lo, hi string) string {
	minus := func(s string) string {
		if rest, ok := strings.CutPrefix(s, "-"); ok {
			return "−" + rest
		}
		return s
	}
	return "[" + minus(lo) + ", " + minus(hi) + "]"
}
