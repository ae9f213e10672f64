package cli

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// printRunResult renders one run's measurements as readable tables.
func (a *app) printRunResult(r *driver.Result, id int64, storePath string, tg dialect.Target) {
	w := a.out()
	o := r.Options
	state := ""
	if r.Partial {
		state = "  (PARTIAL: interrupted before the window ended)"
	}
	users := fmt.Sprintf("%d virtual user(s)", o.VUs)
	if o.Mode == driver.ModeTPCC {
		users = fmt.Sprintf("%d terminal(s) sharing %d session(s), %d more for deferred Delivery", o.Terminals, o.Sessions, o.DeliverySessions)
	}
	fmt.Fprintf(w, "\nrun %d: %s, %s, %s, %d warehouse(s), seed %d%s\n",
		id, tg, users, o.Style, r.Warehouses, o.Seed, state)
	fmt.Fprintf(w, "measured %.1f s (ramp-up %s and grace excluded); mode %s\n\n",
		r.Window.Seconds, o.Rampup, o.ModeLabel())
	if r.Spec != nil {
		printSpecHeadline(w, r.Spec)
	}
	fmt.Fprintf(w, "  NOPM %12s   from %s\n", thousands(r.NOPM), r.NOPMSource)
	fmt.Fprintf(w, "  TPM  %12s   from %s\n", thousands(r.TPM), r.TPMSource)
	fmt.Fprintf(w, "  driver's own counts: NOPM %s, TPM %s\n", thousands(r.DriverNOPM), thousands(r.DriverTPM))
	if p := r.Pacing; p != nil && p.OfferedTPM > 0 {
		fmt.Fprintf(w, "  offered TPM %s (%g transactions/s for each of %d virtual users)\n", thousands(p.OfferedTPM), p.RatePerVU, o.VUs)
	}
	fmt.Fprintln(w)

	paced := o.Paced()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "transaction\tcompleted\trolled back\tretried\tfailed\tmix %\tp50 ms\tp90 ms\tp95 ms\tp99 ms\tp99.9 ms\tmax ms\t"
	if paced {
		head += "service p50\tservice p99\t"
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
			fmt.Fprintf(tw, "%s\t%s\t", ms(k.ServiceMicros.P50), ms(k.ServiceMicros.P99))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if paced {
		fmt.Fprintf(w, "(latency from each transaction's intended start; service from the moment its session was asked)\n")
	}
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
		printSpecChecks(w, r.Spec)
	}

	fmt.Fprintf(w, "\naudit figures (TPC-C 9.2 and 5.2.3):\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range r.AuditFigures {
		verdict := auditVerdict(f)
		fmt.Fprintf(tw, "  %s\t%.3f\t[%g, %g]\t%d samples\t%s\n", f.Name, f.Value, f.Lo, f.Hi, f.Samples, verdict)
	}
	tw.Flush()
	fmt.Fprintf(w, "\ndriver: %.2f CPU s (%.3f of a core), %.1f µs CPU per database transaction; scheduling lag max %.1f ms, mean %.2f ms\n",
		r.DriverCPUSeconds, r.DriverCPUCores, r.DriverCPUMicrosPerTx, r.SchedLagMaxMillis, r.SchedLagMeanMillis)
	if p := r.Pacing; p != nil {
		printPacing(w, p, o)
	}
	if r.Dialect == "sqlite" {
		fmt.Fprintf(w, "        (embedded SQLite runs inside oltplab: its CPU includes the database's work)\n")
	}
	fmt.Fprintf(w, "stored as run %d in %s\n", id, storePath)
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

// printSpecChecks prints the checks of the tpc-c mode.
func printSpecChecks(w io.Writer, s *driver.Spec) {
	fmt.Fprintf(w, "\ntpc-c checks (90th percentiles from the intended start):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range s.Checks {
		verdict := "pass"
		if !c.Pass {
			verdict = "FAIL"
		}
		value := fmt.Sprintf("%.3f %s", c.Value, c.Unit)
		limit := fmt.Sprintf("%g %s", c.Limit, c.Unit)
		switch {
		case c.Unit == "terminals":
			value, limit = fmt.Sprintf("%.0f", c.Value), fmt.Sprintf("want %.0f", c.Limit)
		case c.Unit == "%":
			limit = fmt.Sprintf("at least %g%%", c.Limit)
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

// auditVerdict judges one audit figure. A share measured on too few
// samples to tell a bound apart from sampling noise says so instead of
// crying failure; a mix share is a minimum the deck deals exactly, which a
// window can undercut at its edges.
func auditVerdict(f tpcc.Figure) string {
	switch {
	case f.NotApplicable:
		return "n/a (one warehouse)"
	case f.OK:
		return "ok"
	case f.Samples == 0:
		return "no samples"
	case f.Clause == "5.2.3":
		return "below the 5.2.3 minimum"
	}
	if p := (f.Lo + f.Hi) / 200; p > 0 && p < 1 && f.Name != "average_order_lines" {
		se := 100 * math.Sqrt(p*(1-p)/float64(f.Samples))
		if (f.Hi-f.Lo)/2 < 3*se {
			return fmt.Sprintf("outside, but %d samples are too few to judge (±%.2f at 95%%)", f.Samples, 1.96*se)
		}
	}
	return "OUT OF BOUNDS"
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

// printProfileTable renders the per-step statistics of one profile.
func printProfileTable(w io.Writer, p report.Profile) {
	name := p.Label
	if name == "" {
		name = fmt.Sprintf("profile %d", p.ID)
	}
	fmt.Fprintf(w, "\n%s (profile %d): %s\n", name, p.ID, p.Target)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "VUs\tn\tNOPM mean\tsd\t95% CI\tTPM mean\tsd\t95% CI\tTPM/VU\tCV\t\t")
	for _, s := range p.Steps {
		ci := func(lo, hi float64, ok bool) string {
			if !ok {
				return "-"
			}
			return thousands(lo) + ".." + thousands(hi)
		}
		flag := ""
		if s.NOPM.HighVariation || s.TPM.HighVariation {
			flag = "high variation"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%s\t\n", s.VUs, s.NOPM.N,
			thousands(s.NOPM.Mean), thousands(s.NOPM.StdDev), ci(s.NOPM.CILo, s.NOPM.CIHi, s.NOPM.HasCI()),
			thousands(s.TPM.Mean), thousands(s.TPM.StdDev), ci(s.TPM.CILo, s.TPM.CIHi, s.TPM.HasCI()),
			thousands(s.TPMPerVU.Mean), 100*s.NOPM.CV, flag)
	}
	tw.Flush()
	if p.Verdict.Reason != "" {
		fmt.Fprintf(w, "verdict: %s\n", p.Verdict.Reason)
	}
}
