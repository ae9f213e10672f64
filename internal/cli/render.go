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
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// printRunResult renders one run's measurements as readable tables.
func (a *app) printRunResult(r *driver.Result, id int64, storePath string, tg dialect.Target) {
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
	fmt.Fprintf(w, "  driver's own counts: NOPM %s, TPM %s\n\n", thousands(r.DriverNOPM), thousands(r.DriverTPM))

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
	if len(r.ErrorsByClass) > 0 {
		var parts []string
		for c, n := range r.ErrorsByClass {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
		fmt.Fprintf(w, "\nerrors by class: %s\n", strings.Join(parts, ", "))
	}

	fmt.Fprintf(w, "\naudit figures (TPC-C 9.2 and 5.2.3):\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range r.AuditFigures {
		verdict := auditVerdict(f)
		fmt.Fprintf(tw, "  %s\t%.3f\t[%g, %g]\t%d samples\t%s\n", f.Name, f.Value, f.Lo, f.Hi, f.Samples, verdict)
	}
	tw.Flush()
	fmt.Fprintf(w, "\ndriver: %.2f CPU s, %.1f µs CPU per database transaction; scheduling lag max %.1f ms, mean %.2f ms\n",
		r.DriverCPUSeconds, r.DriverCPUMicrosPerTx, r.SchedLagMaxMillis, r.SchedLagMeanMillis)
	if r.Dialect == "sqlite" {
		fmt.Fprintf(w, "        (embedded SQLite runs inside oltplab: its CPU includes the database's work)\n")
	}
	fmt.Fprintf(w, "stored as run %d in %s\n", id, storePath)
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

// printProfileSummary prints the statistics of a profile that just ran.
func (a *app) printProfileSummary(ctx context.Context, st *store.Store, id int64) error {
	p, err := st.GetProfile(ctx, id)
	if err != nil {
		return withCode(exitStore, fmt.Errorf("read profile %d: %w", id, err))
	}
	rp, err := results.Profile(ctx, st, p)
	if err != nil {
		return err
	}
	printProfileTable(a.out(), rp)
	return nil
}
