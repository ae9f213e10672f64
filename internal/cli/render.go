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
	o := r.Options
	state := ""
	if r.Partial {
		state = "  (PARTIAL: interrupted before the window ended)"
	}
	users := fmt.Sprintf("%d virtual user(s)", o.VUs)
	if o.Mode == driver.ModeTPCC {
		users = fmt.Sprintf("%d terminal(s) sharing %d session(s), %d more for deferred Delivery", o.Terminals, o.Sessions, o.DeliverySessions)
		if want := tpcc.TerminalsPerWarehouse * r.Warehouses; o.Terminals != want {
			users += fmt.Sprintf(" (NON-CONFORMING: TPC-C 4.2.2 runs %d, 10 per warehouse)", want)
		}
	}
	fmt.Fprintf(w, "\nrun %d: %s, %s, %s, %d warehouse(s), seed %d%s\n",
		id, tg, users, o.Style, r.Warehouses, o.Seed, state)
	fmt.Fprintf(w, "measured %.1f s (ramp-up %s and grace excluded); mode %s\n\n",
		r.Window.Seconds, o.Rampup, o.ModeLabel())
	if r.Spec != nil {
		printSpecHeadline(w, r.Spec)
	}
	fmt.Fprintf(w, "  NOPM %12s   from %s\n", thousands(r.NOPM), r.NOPMSource)
	if r.OwnStatements > 0 {
		fmt.Fprintf(w, "  TPM  %12s   from %s, less oltplab's own %d sampling statements\n", thousands(r.TPM), r.TPMSource, r.OwnStatements)
	} else {
		fmt.Fprintf(w, "  TPM  %12s   from %s\n", thousands(r.TPM), r.TPMSource)
	}
	fmt.Fprintf(w, "  driver's own counts: NOPM %s, TPM %s%s\n", thousands(r.DriverNOPM), thousands(r.DriverTPM), agreement(r))
	if p := r.Pacing; p != nil && p.OfferedTPM > 0 {
		fmt.Fprintf(w, "  offered TPM %s (%g transactions/s for each of %d virtual users)\n", thousands(p.OfferedTPM), p.RatePerVU, o.VUs)
	}
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
	if d := r.Deferred; d != nil {
		printDeferred(w, d)
	}
	if r.Spec != nil {
		printSpecChecks(w, r.Spec, a.red)
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
	fmt.Fprintf(w, "\ndriver: %.2f CPU s (%.3f of a core), %.1f µs CPU per database transaction; scheduling lag max %.1f ms, mean %.2f ms",
		r.DriverCPUSeconds, r.DriverCPUCores, r.DriverCPUMicrosPerTx, r.SchedLagMaxMillis, r.SchedLagMeanMillis)
	if r.DriverProcs > 0 {
		fmt.Fprintf(w, "; up to %d Go processor(s)", r.DriverProcs)
	}
	fmt.Fprintln(w)
	if p := r.Pacing; p != nil {
		printPacing(w, p, o)
	}
	if r.EmbeddedDatabase {
		fmt.Fprintf(w, "        (embedded SQLite runs inside oltplab: its CPU includes the database's work)\n")
	}
}

// printFaults prints what went wrong on the server's side during a run
// (driver.Result.FaultNotes): its outages and stalls, why TPM and NOPM
// are the driver's own counts, and, in red, a server that failed under
// it, a failure rate past --max-failure-rate, and the interference that
// contaminated it.
func (a *app) printFaults(w io.Writer, r *driver.Result) {
	for _, n := range r.FaultNotes() {
		fmt.Fprintf(w, "  %s\n", n)
	}
	for _, reason := range r.ServerFailure {
		fmt.Fprintln(w, a.red("  FAILED: "+reason))
	}
	if r.ServerFailed() {
		fmt.Fprintln(w, a.red("  this run is stored with status failed: its figures are not the server's; left out of peaks, ratios and cost"))
	}
	if r.TooManyFailures != "" {
		fmt.Fprintln(w, a.red("  FAILURES: "+r.TooManyFailures))
		fmt.Fprintln(w, a.red("  this run is stored with status failures and left out of peaks and verdicts"))
	}
	for _, reason := range r.Contaminated {
		fmt.Fprintln(w, a.red("  CONTAMINATED: "+reason))
	}
	if len(r.Contaminated) > 0 {
		fmt.Fprintln(w, a.red("  this run is stored with status contaminated and left out of peaks and verdicts (--include-contaminated counts it)"))
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
// mix and latency percentiles; in a paced mode the latency counts from
// each transaction's intended start, and the service time beside it from
// the moment its session was asked.
func printKindsTable(w io.Writer, r *driver.Result) {
	paced := r.Options.Paced()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "transaction\tcompleted\trolled back\tretried\tfailed\tmix %\tp50 ms\tp90 ms\tp95 ms\tp99 ms\tp99.9 ms\tmax ms\t"
	if paced {
		head += "service p50\tservice p90\tservice p99\t"
	}
	fmt.Fprintln(tw, head)
	for _, k := range r.Kinds {
		var failed int64
		for _, n := range k.Failed {
			failed += n
		}
		l := k.LatencyMicros
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t", k.Kind, k.Completed, k.RolledBack, k.Retried,
			failed, r.MixPct[k.Kind], ms(l.P50), ms(l.P90), ms(l.P95), ms(l.P99), ms(l.P999), ms(l.Max))
		if paced {
			s := k.ServiceMicros
			fmt.Fprintf(tw, "%s\t%s\t%s\t", ms(s.P50), ms(s.P90), ms(s.P99))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if paced {
		fmt.Fprintf(w, "(response time from each transaction's intended start; service time from the moment its session was asked)\n")
	}
}

// printSpecHeadline prints the tpc-c mode's figure: tpmC only when every
// check passed, otherwise the New-Order rate and what kept it from tpmC.
func printSpecHeadline(w io.Writer, s *driver.Spec) {
	of := fmt.Sprintf("%.1f%% of the %s the %d terminal(s) can submit (%.2f per warehouse of 10 terminals)",
		s.EfficiencyPct, thousands(s.MaxNewOrdersPerMinute), s.Terminals, tpcc.MaxNewOrdersPerMinute(tpcc.TerminalsPerWarehouse))
	if s.TpmC != nil {
		fmt.Fprintf(w, "  tpmC %12s   %s; every check below passed\n", thousands(*s.TpmC), of)
		return
	}
	var failed []string
	for _, c := range s.Checks {
		if !c.Pass {
			failed = append(failed, c.Name)
		}
	}
	fmt.Fprintf(w, "  New-Orders per minute %s   %s\n", thousands(s.NewOrdersPerMinute), of)
	fmt.Fprintf(w, "  NOT tpmC: failed %s\n", strings.Join(failed, ", "))
}

// printSpecChecks prints the checks of the tpc-c mode, a failed one
// through red.
func printSpecChecks(w io.Writer, s *driver.Spec, red func(string) string) {
	fmt.Fprintf(w, "\ntpc-c checks (90th percentiles from the intended start):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range s.Checks {
		verdict := "pass"
		if !c.Pass {
			verdict = red("FAIL")
		}
		value := fmt.Sprintf("%.3f %s", c.Value, c.Unit)
		limit := fmt.Sprintf("%g %s", c.Limit, c.Unit)
		switch {
		case c.Unit == "terminals":
			value, limit = fmt.Sprintf("%.0f", c.Value), fmt.Sprintf("want %.0f", c.Limit)
		case c.Unit == "%":
			limit = fmt.Sprintf("at least %g%%", c.Limit)
		case c.Name == "figures_agree":
			value, limit = "no", "cross-check"
			if c.Pass {
				value = "yes"
			}
		case c.Name == "window_complete":
			value, limit = fmt.Sprintf("%.1f s", c.Value), fmt.Sprintf("of %g s", c.Limit)
		default:
			limit = "limit " + limit
		}
		clause := ""
		if c.Clause != "" {
			clause = "TPC-C " + c.Clause
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", c.Name, value, limit, clause, verdict, c.Note)
	}
	tw.Flush()
}

// printDeferred prints the deferred Deliveries of a tpc-c run.
func printDeferred(w io.Writer, d *driver.DeferredDelivery) {
	var failed int64
	for _, n := range d.Failed {
		failed += n
	}
	fmt.Fprintf(w, "\ndeferred Delivery (TPC-C 2.7.2): %d completed, %d failed on %d session(s); queue p50 %s ms, p90 %s ms; "+
		"queued to completed p90 %s ms, max %s ms; %d districts skipped in %d Deliveries; %d still queued at the end\n",
		d.Completed, failed, d.Sessions, ms(d.QueueMicros.P50), ms(d.QueueMicros.P90),
		ms(d.CompletionMicros.P90), ms(d.CompletionMicros.Max), d.SkippedDistricts, d.WithSkipped, d.BacklogAtEnd)
}

// printPacing prints how late paced transactions started.
func printPacing(w io.Writer, p *driver.Pacing, o driver.Options) {
	l := p.StartLagMicros
	fmt.Fprintf(w, "pacing: start lag against the schedule p50 %s ms, p99 %s ms, max %s ms", ms(l.P50), ms(l.P99), ms(l.Max))
	if d := p.DispatchLagMicros; d != nil {
		fmt.Fprintf(w, "; of it, the driver's dispatch lag p99 %s ms, max %s ms", ms(d.P99), ms(d.Max))
	}
	if sw := p.SessionWaitMicros; sw != nil {
		fmt.Fprintf(w, ", the wait for one of %d pooled session(s) p99 %s ms", p.Sessions, ms(sw.P99))
	}
	fmt.Fprintln(w)
	if o.Mode == driver.ModeTPCC {
		fmt.Fprintf(w, "        %.1f µs CPU per terminal per second, %.0f bytes per terminal\n", p.CPUMicrosPerUserSecond, p.TerminalBytes)
	}
}

// agreement says how the database's figures compare with the driver's
// own counts, when the cross-check ran.
func agreement(r *driver.Result) string {
	c := r.Check
	if c == nil || r.IsSuspect() {
		return ""
	}
	verdict := "agree"
	if c.Inconclusive != "" {
		verdict = fmt.Sprintf("cross-check inconclusive under %s transactions", thousands(driver.MinCheckedTransactions))
	}
	s := fmt.Sprintf(" (%s: new orders %+.1f%%", verdict, c.NewOrders.DiffPct)
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
	if p.Mode != "" {
		fmt.Fprintf(w, "mode %s\n", p.Mode)
	}
	users := "VUs"
	if strings.HasPrefix(p.Mode, driver.ModeTPCC.String()+" ") {
		users = "terminals"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, users+"\tn\tNOPM mean\tsd\t95% CI\tTPM mean\tsd\t95% CI\tTPM/user\tCV\t\t")
	tooFew := false
	for _, s := range p.Steps {
		ci := func(sum profile.Summary) string {
			switch {
			case sum.HasCI():
				return interval(thousands(sum.CILo), thousands(sum.CIHi))
			case sum.N > 0:
				return "too few runs"
			}
			return "-"
		}
		var flags []string
		if s.NOPM.HighVariation || s.TPM.HighVariation {
			flags = append(flags, "high variation")
		}
		if s.NOPM.N > 0 && !s.NOPM.HasCI() {
			flags = append(flags, fmt.Sprintf("n=%d: no interval", s.NOPM.N))
			tooFew = true
		}
		if s.NOPM.N == 0 {
			// No run of the step counts: a mean of 0 would read as no
			// throughput.
			fmt.Fprintf(tw, "%d\t0\t-\t-\t-\t-\t-\t-\t-\t-\tno run counts\t\n", s.VUs)
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%s\t\n", s.VUs, s.NOPM.N,
			thousands(s.NOPM.Mean), thousands(s.NOPM.StdDev), ci(s.NOPM),
			thousands(s.TPM.Mean), thousands(s.TPM.StdDev), ci(s.TPM),
			thousands(s.TPMPerVU.Mean), 100*s.NOPM.CV, strings.Join(flags, ", "))
	}
	tw.Flush()
	printStopping(w, p, users)
	if tooFew {
		fmt.Fprintf(w, "note: too few runs: no interval is drawn from fewer than %d runs of a step (two give Student's t = 12.7, "+
			"ten times their spread): use --repeat %d or more\n", profile.MinRepeats, profile.MinRepeats)
	}
	for _, s := range p.Steps {
		for _, r := range s.Repeats {
			switch {
			case r.Suspect:
				what := "left out of the statistics and verdict"
				if r.Counted {
					what = "counted (--include-suspect)"
				}
				fmt.Fprintln(w, red(fmt.Sprintf("suspect: run %d (%d VUs, NOPM %s) %s: %s", r.RunID, s.VUs, thousands(r.NOPM), what,
					strings.Join(r.Reasons, "; "))))
			case r.Contaminated:
				what := "left out of the statistics and verdict"
				if r.Counted {
					what = "counted (--include-contaminated)"
				}
				fmt.Fprintln(w, red(fmt.Sprintf("contaminated: run %d (%d VUs, NOPM %s) %s: %s", r.RunID, s.VUs, thousands(r.NOPM), what,
					strings.Join(r.Interference, "; "))))
			case r.ServerFailed:
				fmt.Fprintln(w, red(fmt.Sprintf("failed: run %d (%d VUs, NOPM %s) left out: %s", r.RunID, s.VUs, thousands(r.NOPM),
					strings.Join(r.Faults, "; "))))
			}
		}
	}
	if p.Verdict.Reason != "" {
		fmt.Fprintf(w, "verdict: %s\n", p.Verdict.Reason)
	}
}

// printStopping says, for a profile measured with --repeat auto, which
// ended each step: the precision, or the budget of runs.
func printStopping(w io.Writer, p report.Profile, users string) {
	st := p.Stopping
	if st == nil {
		return
	}
	r := st.Rule
	fmt.Fprintf(w, "repeat auto: each step until the 95%% interval of its %s is within %s, %d to %d runs\n",
		stoppingOf(st), profile.FormatPrecision(r.Precision), r.Min, r.Max)
	for _, s := range st.Stops {
		fmt.Fprintf(w, "  %d %s: %s\n", s.Users, users, s.Text(r.Precision))
	}
}

// stoppingOf says what a profile's stopping rule bounded.
func stoppingOf(st *profile.Stopping) string {
	if st.Baseline != "" {
		return "NOPM ratio to " + st.Baseline + " (its mean NOPM where " + st.Baseline + " has no runs)"
	}
	return "mean NOPM"
}

// printProfileSummary prints the statistics of a profile that just ran.
func (a *app) printProfileSummary(ctx context.Context, st *store.Store, id int64, inc report.Include) error {
	p, err := st.GetProfile(ctx, id)
	if err != nil {
		return withCode(exitStore, fmt.Errorf("read profile %d: %w", id, err))
	}
	rp, err := results.Profile(ctx, st, p, inc)
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
