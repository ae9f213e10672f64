package driver

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// Spec is the verdict of a tpc-c run: the checks that a figure must pass
// to be called tpmC, and the New-Order rate against the most the
// terminals could submit. It is not an audited TPC-C result (no ACID
// tests, durability, space or price), but no figure is called tpmC unless
// every check here passed.
type Spec struct {
	Terminals  int `json:"terminals"`
	Warehouses int `json:"warehouses"`
	// NewOrdersPerMinute is the New-Order transactions that completed in
	// the window per minute, the rolled-back 1% (2.4.1.4) included: they
	// are completed business transactions, counted as the specification's
	// throughput counts them. It is tpmC when Conforming, and TpmC is set
	// only then.
	NewOrdersPerMinute float64  `json:"new_orders_per_minute"`
	TpmC               *float64 `json:"tpmc,omitempty"`
	// MaxNewOrdersPerMinute is the most the terminals can submit (at zero
	// response time, tpcc.MaxNewOrdersPerMinute): 12.61 per warehouse for
	// ten terminals each with the deck's mix.
	// EfficiencyPct is NewOrdersPerMinute over it.
	MaxNewOrdersPerMinute float64 `json:"max_new_orders_per_minute"`
	EfficiencyPct         float64 `json:"efficiency_pct"`
	// Conforming: every check passed.
	Conforming bool        `json:"conforming"`
	Checks     []SpecCheck `json:"checks"`
}

// SpecCheck is one condition of the tpc-c mode, with the clause it comes
// from, what was measured and the limit.
type SpecCheck struct {
	Name    string  `json:"name"`
	Clause  string  `json:"clause"`
	Value   float64 `json:"value"`
	Limit   float64 `json:"limit"`
	Unit    string  `json:"unit"`
	Samples int64   `json:"samples"`
	Pass    bool    `json:"pass"`
	Note    string  `json:"note,omitempty"`
}

// mixNoiseSE is how many standard errors of sampling a realised share
// below its 5.2.3 minimum may be, to be said to be within a window's noise
// (in a note: the check fails all the same).
const mixNoiseSE = 3

// judgeSpec fills Spec from the merged figures of a tpc-c run.
func (r *Result) judgeSpec() {
	o := r.Options
	s := &Spec{Terminals: o.Terminals, Warehouses: r.Warehouses}
	minutes := r.Window.Seconds / 60
	if minutes > 0 {
		s.NewOrdersPerMinute = float64(r.Kinds[tpcc.NewOrderTx].Completed) / minutes
	}
	s.MaxNewOrdersPerMinute = tpcc.MaxNewOrdersPerMinute(o.Terminals)
	if s.MaxNewOrdersPerMinute > 0 {
		s.EfficiencyPct = 100 * s.NewOrdersPerMinute / s.MaxNewOrdersPerMinute
	}

	want := tpcc.TerminalsPerWarehouse * r.Warehouses
	s.add(SpecCheck{Name: "terminals", Clause: "4.2.2", Value: float64(o.Terminals), Limit: float64(want), Unit: "terminals",
		Pass: o.Terminals == want, Note: fmt.Sprintf("%d per warehouse", tpcc.TerminalsPerWarehouse)})

	// TPC-C 5.2.5.7: at least 90% of each type within its limit.
	for k := range tpcc.NumTxKinds {
		kind := tpcc.TxKind(k)
		s.add(percentileCheck("response_time_p90_"+kind.String(), "5.2.5.7", r.hists[k], tpcc.ResponseTimeLimit(kind), 0))
	}
	if d := r.Deferred; d != nil {
		c := percentileCheck("deferred_delivery_p90", "2.7.2, 5.2.5.7", r.deferredCompletion, tpcc.DeferredDeliveryLimit, d.LateInBacklog)
		// The 90% are over the requests queued: completions over the limit
		// and requests still queued past it are late alike.
		if n := d.Completed + d.LateInBacklog; n > 0 {
			c.Pass = float64(d.Late+d.LateInBacklog) <= (1-tpcc.ResponseTimePercentile/100.0)*float64(n)
		}
		s.add(c)
	}

	// TPC-C 5.2.3: the minimum mix over the measurement interval. The deck
	// (5.2.4.2) deals every minimum with margin, but a window cuts each
	// terminal's deck at both edges: a short window can fall below. It
	// fails then, with a note when the shortfall is within sampling noise.
	var total int64
	for _, k := range r.Kinds {
		total += k.Completed
	}
	for k := range tpcc.NumTxKinds {
		kind := tpcc.TxKind(k)
		minPct := tpcc.MinMixPct[kind]
		if minPct == 0 {
			continue
		}
		c := SpecCheck{Name: "mix_" + kind.String() + "_pct", Clause: "5.2.3, 5.2.4.2", Limit: minPct, Unit: "%", Samples: total}
		if total > 0 {
			c.Value = 100 * float64(r.Kinds[k].Completed) / float64(total)
			c.Pass = c.Value >= minPct
			p := minPct / 100
			if tol := mixNoiseSE * 100 * math.Sqrt(p*(1-p)/float64(total)); !c.Pass && c.Value >= minPct-tol {
				c.Note = fmt.Sprintf("within %d standard errors (%.2f points) of sampling noise of %d transactions: a longer window deals the deck's %.2f%%",
					mixNoiseSE, tol, total, tpcc.DeckPct(kind))
			}
		}
		s.add(c)
	}

	s.add(SpecCheck{Name: "window_complete", Value: r.Window.Seconds, Limit: o.Duration.Seconds(), Unit: "s",
		Pass: !r.Partial, Note: "the measured window ran to its end"})
	r.Spec = s
	s.conclude()
}

// agreementCheck is the name of the check that the database's figures
// agree with the driver's own counts (CheckCounters).
const agreementCheck = "figures_agree"

// setAgreement records the cross-check of the database's figures: a run
// they contradict (suspect) is no tpmC; an inconclusive check contradicts
// nothing and says so. Calling it again replaces it.
func (s *Spec) setAgreement(ok bool, reasons []string, inconclusive string) {
	c := SpecCheck{Name: agreementCheck, Value: 1, Limit: 1, Pass: ok,
		Note: "the database's NOPM and TPM agree with the driver's own counts"}
	if ok && inconclusive != "" {
		c.Note = "inconclusive: " + inconclusive
	}
	if !ok {
		c.Value = 0
		c.Note = strings.Join(reasons, "; ")
	}
	i := slices.IndexFunc(s.Checks, func(c SpecCheck) bool { return c.Name == agreementCheck })
	if i < 0 {
		s.add(c)
	} else {
		s.Checks[i] = c
	}
	s.conclude()
}

// conclude sets Conforming, and TpmC only when every check passed.
func (s *Spec) conclude() {
	s.Conforming = true
	for _, c := range s.Checks {
		s.Conforming = s.Conforming && c.Pass
	}
	s.TpmC = nil
	if s.Conforming {
		v := s.NewOrdersPerMinute
		s.TpmC = &v
	}
}

func (s *Spec) add(c SpecCheck) { s.Checks = append(s.Checks, c) }

// percentileCheck is the 90th percentile of h against limit, in seconds;
// with no sample it fails. extra are requests not in h known to exceed
// the limit (noted).
func percentileCheck(name, clause string, h *hdrhistogram.Histogram, limit time.Duration, extra int64) SpecCheck {
	c := SpecCheck{Name: name, Clause: clause, Limit: limit.Seconds(), Unit: "s"}
	if h == nil || h.TotalCount() == 0 {
		c.Note = "no transaction completed in the window"
		return c
	}
	c.Samples = h.TotalCount()
	c.Value = float64(h.ValueAtQuantile(tpcc.ResponseTimePercentile)) / 1e6
	c.Pass = c.Value <= c.Limit
	if extra > 0 {
		c.Note = fmt.Sprintf("%d still queued past the limit at the window's end", extra)
	}
	return c
}
