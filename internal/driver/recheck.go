package driver

import (
	"fmt"

	"math"
	"slices"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
)

// Recheck judges a result read back from outside the store (a saved file
// that `oltplab results import` loads) by the rules Run applied when it
// measured it, and says what breaks them: a negative figure (Run replaces
// one by the driver's own count, neverNegative), a rate that is not its
// count over the window, a failure rate above the allowed one that is not
// flagged (judgeFailures), figures that disagree with the driver's own
// counts (CheckCounters, run again with the allowance recorded in Check)
// while the result does not say so, or tpmC claimed though a TPC-C check
// failed, or a server that failed in the window (an outage open at its
// end, stalls beyond Options.MaxStallPct: judgeServer) while the result
// does not say so. Nil when those rules give the result as it is. r is
// not changed.
func (r *Result) Recheck() error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	c := r.copyForCheck()
	c.neverNegative()
	if c.NOPM != r.NOPM || c.TPM != r.TPM || r.DriverNOPM < 0 || r.DriverTPM < 0 {
		bad("a figure is negative (NOPM %g, TPM %g, the driver's %g and %g)", r.NOPM, r.TPM, r.DriverNOPM, r.DriverTPM)
	}
	if r.Window.Seconds < 0 || math.IsNaN(r.Window.Seconds) {
		bad("its window lasts %g s", r.Window.Seconds)
	}
	for _, k := range r.Kinds {
		neg := k.Completed < 0 || k.RolledBack < 0 || k.Retried < 0 || k.RolledBack > k.Completed
		for _, n := range k.Failed {
			neg = neg || n < 0
		}
		if neg {
			bad("the counts of %.20q are negative or inconsistent", k.Kind)
		}
	}
	if len(errs) == 0 {
		errs = append(errs, r.recheckRates()...)
	}
	if len(errs) == 0 {
		c.TooManyFailures = ""
		c.judgeFailures()
		if c.TooManyFailures != "" && r.TooManyFailures == "" {
			bad("it does not say that %s", c.TooManyFailures)
		}
		if r.Shards == nil {
			// The cross-check again, as the run made it: Check exists
			// when both edges' counters were read.
			c.countersRead = r.Check != nil
			if r.Check != nil && r.Check.Transactions != nil {
				c.txCountSource = r.TPMSource
			}
			var observers int64
			if r.Check != nil {
				observers = r.Check.ObserverStatements
			}
			if r.OwnStatements > 0 {
				c.txCountsOwn = dialect.StatementsCounted // its counter counted them: TPM left them out
			}
			c.CheckCounters(observers)
			if c.IsSuspect() && !r.IsSuspect() {
				bad("its figures disagree with the driver's own counts, yet it is not marked suspect: %s", c.Suspect[0])
			}
		}
		if !r.Options.legacy {
			// The server's failures again (judgeServer); a caller may
			// have added reasons of its own, never taken one away.
			c.ServerFailure = nil
			c.judgeServer()
			if c.ServerFailed() && !r.ServerFailed() {
				bad("its server failed in the window, yet it does not say so: %s", c.ServerFailure[0])
			}
		}
		if c.Spec != nil {
			c.Spec.conclude()
			if r.Spec.TpmC != nil && c.Spec.TpmC == nil {
				bad("it claims tpmC %g though a TPC-C check failed", *r.Spec.TpmC)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// copyForCheck copies what the checks change.
func (r *Result) copyForCheck() *Result {
	c := *r
	c.Suspect = slices.Clone(r.Suspect)
	c.ServerFailure = slices.Clone(r.ServerFailure)
	if r.Spec != nil {
		s := *r.Spec
		s.Checks = slices.Clone(r.Spec.Checks)
		c.Spec = &s
	}
	return &c
}

// recheckRates checks that NOPM and TPM, and the driver's own rates, are
// their counts over the window, as Run computed them.
func (r *Result) recheckRates() []string {
	var errs []string
	w := r.Window.Seconds
	rate := func(name string, got, want float64, from string) {
		if math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
			errs = append(errs, fmt.Sprintf("%s %g is not %s over its %.1f s window (%g)", name, got, from, w, want))
		}
	}
	if r.Shards != nil {
		return nil // merged: its rates are the shards' (MergeShards)
	}
	rate("the driver's NOPM", r.DriverNOPM, perMinute(r.committedNewOrders(), w), "its committed New-Orders")
	rate("the driver's TPM", r.DriverTPM, perMinute(r.completed(), w), "its completed transactions")
	switch {
	case r.CountsFallback != "" || strings.HasPrefix(r.NOPMSource, DriverFallbackSource):
		rate("NOPM", r.NOPM, r.DriverNOPM, "the driver's own")
	default:
		rate("NOPM", r.NOPM, perMinute(r.DBNewOrders, w), fmt.Sprintf("its %d new orders", r.DBNewOrders))
	}
	switch {
	case r.CountsFallback != "" || strings.HasPrefix(r.TPMSource, DriverFallbackSource):
		rate("TPM", r.TPM, r.DriverTPM, "the driver's own")
	default:
		net := r.DBTransactions
		if r.OwnStatements > 0 && net >= 0 {
			net = max(net-r.OwnStatements, 0)
		}
		rate("TPM", r.TPM, perMinute(net, w), fmt.Sprintf("its %d transactions less oltplab's own %d statements", r.DBTransactions, r.OwnStatements))
	}
	return errs
}
