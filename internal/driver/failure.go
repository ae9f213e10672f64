package driver

import (
	"fmt"
	"strings"
)

// DefaultMaxStallPct is the share of the measured window, in percent,
// that the run's stalls may cover before the run is taken for one whose
// server failed (Options.MaxStallPct). A stall is a stretch of at least
// StallThreshold in which no virtual user completed anything: the
// server stood still. Stalls covering a tenth of the window take at
// least a tenth off its mean rate, more than the differences the
// studies oltplab reproduces set out to measure between two
// configurations (and far more than the cross-check's 2% and 5%): the
// window's NOPM then describes an event, not the server's rate. Shorter
// stalls are kept on record with the run (FaultNotes) and the run
// counts.
const DefaultMaxStallPct = 10

// DefaultMaxForeignCPUPct and DefaultMaxStealPct are the interference a
// run may meet before it is contaminated (Options.MaxForeignCPUPct,
// MaxStealPct): foreign CPU, or steal, above a tenth of the cores over the
// window. A tenth of the cores taken by others is up to a tenth of the
// server's capacity gone when it is CPU-bound (the cores comparisons
// oltplab runs are), the size of the effects they measure: measured, a
// confined PostgreSQL's NOPM followed the CPU it was left while its CPU
// per transaction stayed put (docs/architecture.md, "Who used the CPU").
const (
	DefaultMaxForeignCPUPct = 10
	DefaultMaxStealPct      = 10
)

// noStallLimit is MaxStallPct for results stored before the rule (no
// max_stall_pct in their options): their stalls were never judged.
const noStallLimit = 100

// judgeServer sets ServerFailure from what the run saw of its server: an
// outage still open when the measured window ended (the server was down
// at the end of the figures: a crash, a server killed or stopped, a path
// cut for good), and stalls covering more than Options.MaxStallPct of
// the window. A caller that knows more (a managed server that exited)
// adds its own reason with FailServer.
func (r *Result) judgeServer() {
	w := r.Window
	if w.Start.IsZero() || w.End.IsZero() {
		return
	}
	for i, o := range r.Outages {
		if !o.Start.Before(w.End) || (!o.Ongoing && !o.End.After(w.End)) {
			continue // after the window, or over before its end
		}
		from := "before the measured window"
		if !o.Start.Before(w.Start) {
			from = fmt.Sprintf("%.1f s into the measured window", o.Start.Sub(w.Start).Seconds())
		}
		r.FailServer(fmt.Sprintf("the server was down when the measured window ended (outage %d, from %s, %d connection(s) lost)",
			i+1, from, o.VUs))
	}
	var stalled float64
	for _, s := range r.Stalls {
		stalled += s.Seconds
	}
	if stalled > 0 && w.Seconds > 0 {
		if pct := 100 * stalled / w.Seconds; pct > r.Options.MaxStallPct {
			r.FailServer(fmt.Sprintf("no transaction completed for %.1f s of the %.1f s measured window (%.0f%%), more than the %g%% allowed (--max-stall)",
				stalled, w.Seconds, pct, r.Options.MaxStallPct))
		}
	}
}

// FailServer records why the run's server failed in it (the caller's
// own knowledge, such as a managed server that exited): the run is then
// stored with status failed and left out of peaks, ratios and cost.
func (r *Result) FailServer(reason string) {
	for _, have := range r.ServerFailure {
		if have == reason {
			return
		}
	}
	r.ServerFailure = append(r.ServerFailure, reason)
}

// ServerFailed reports whether the run's server failed in it
// (ServerFailure).
func (r *Result) ServerFailed() bool { return len(r.ServerFailure) > 0 }

// ServerFailureText is ServerFailure as one sentence.
func (r *Result) ServerFailureText() string { return strings.Join(r.ServerFailure, "; ") }
