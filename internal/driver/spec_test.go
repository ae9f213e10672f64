package driver

import (
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// specResult is a complete 10-minute tpc-c window of 100 terminals on 10
// warehouses: the mix of counts given (new_order, payment, order_status,
// delivery, stock_level), every response time at latency, the deferred
// Deliveries completed at completion after being queued.
func specResult(counts [tpcc.NumTxKinds]int64, latency, completion time.Duration) *Result {
	r := &Result{
		Options:    Options{Mode: ModeTPCC, Terminals: 100, Sessions: 64, DeliverySessions: 1, Duration: 10 * time.Minute},
		Warehouses: 10,
		Window:     Window{Seconds: 600},
		Kinds:      make([]KindResult, tpcc.NumTxKinds),
	}
	for k := range tpcc.NumTxKinds {
		r.Kinds[k] = KindResult{Kind: tpcc.TxKind(k).String(), Completed: counts[k]}
		r.hists[k] = newLatencyHistogram()
		_ = r.hists[k].RecordValues(micros(latency), counts[k])
	}
	r.deferredCompletion = newDeferredHistogram()
	_ = r.deferredCompletion.RecordValues(deferredMicros(completion), counts[tpcc.DeliveryTx])
	r.Deferred = &DeferredDelivery{Completed: counts[tpcc.DeliveryTx]}
	if completion > tpcc.DeferredDeliveryLimit {
		r.Deferred.Late = counts[tpcc.DeliveryTx]
	}
	return r
}

func checkOf(s *Spec, name string) SpecCheck {
	for _, c := range s.Checks {
		if c.Name == name {
			return c
		}
	}
	return SpecCheck{}
}

// TestJudgeSpec: tpmC is the New-Order rate exactly when every check
// passed, each check failing on its own takes it away, and the maximum is
// the terminals' (12.61 per warehouse's ten).
func TestJudgeSpec(t *testing.T) {
	deck := [tpcc.NumTxKinds]int64{1260, 1260, 126, 126, 126} // 10/10/1/1/1 of 2,898
	tests := []struct {
		name       string
		counts     [tpcc.NumTxKinds]int64
		latency    time.Duration
		completion time.Duration
		edit       func(r *Result)
		failed     string // the one check that fails; "" for none
	}{
		{"conforming", deck, 200 * time.Millisecond, 2 * time.Second, nil, ""},
		{"New-Order over 5 s", deck, 6 * time.Second, 2 * time.Second, nil, ""},
		{"deferred Delivery over 80 s", deck, time.Second, 90 * time.Second, nil, "deferred_delivery_p90"},
		{"Stock-Level short", [tpcc.NumTxKinds]int64{1260, 1260, 126, 126, 100}, time.Second, time.Second, nil, "mix_stock_level_pct"},
		{"fewer terminals", deck, time.Second, time.Second, func(r *Result) { r.Options.Terminals = 50 }, "terminals"},
		{"interrupted", deck, time.Second, time.Second, func(r *Result) { r.Partial = true }, "window_complete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := specResult(tt.counts, tt.latency, tt.completion)
			if tt.edit != nil {
				tt.edit(r)
			}
			r.judgeSpec()
			s := r.Spec
			var failed []string
			for _, c := range s.Checks {
				if !c.Pass {
					failed = append(failed, c.Name)
				}
			}
			switch {
			case tt.latency > 5*time.Second:
				// Every kind but Stock-Level (20 s) is over its limit.
				if len(failed) != 4 || checkOf(s, "response_time_p90_stock_level").Pass != true {
					t.Errorf("failed %v, want the four kinds limited to 5 s", failed)
				}
			case tt.failed == "" && len(failed) > 0:
				t.Errorf("failed %v, want none", failed)
			case tt.failed != "" && (len(failed) != 1 || failed[0] != tt.failed):
				t.Errorf("failed %v, want only %s", failed, tt.failed)
			}
			if s.Conforming != (len(failed) == 0) || (s.TpmC != nil) != s.Conforming {
				t.Errorf("conforming %v, tpmC %v with %d failed checks", s.Conforming, s.TpmC, len(failed))
			}
			if want := float64(tt.counts[tpcc.NewOrderTx]) / 10; s.NewOrdersPerMinute != want {
				t.Errorf("New-Orders per minute %v, want %v", s.NewOrdersPerMinute, want)
			}
			if want := tpcc.MaxNewOrdersPerMinute(r.Options.Terminals); s.MaxNewOrdersPerMinute != want ||
				s.EfficiencyPct != 100*s.NewOrdersPerMinute/want {
				t.Errorf("maximum %v, efficiency %v%%; want %v", s.MaxNewOrdersPerMinute, s.EfficiencyPct, want)
			}
		})
	}
}

// TestSpecAgreement: figures the database's counters contradict take
// tpmC away, and a later agreeing cross-check gives it back.
func TestSpecAgreement(t *testing.T) {
	r := specResult([tpcc.NumTxKinds]int64{1260, 1260, 126, 126, 126}, time.Second, time.Second)
	r.judgeSpec()
	if r.Spec.TpmC == nil {
		t.Fatal("no tpmC before the cross-check")
	}
	r.Spec.setAgreement(false, []string{"NOPM from the database is +40% off"}, "")
	if r.Spec.TpmC != nil || r.Spec.Conforming || checkOf(r.Spec, agreementCheck).Note != "NOPM from the database is +40% off" {
		t.Errorf("suspect figures: tpmC %v, conforming %v, check %+v", r.Spec.TpmC, r.Spec.Conforming, checkOf(r.Spec, agreementCheck))
	}
	r.Spec.setAgreement(true, nil, "the driver counted 56 transactions")
	if c := checkOf(r.Spec, agreementCheck); !c.Pass || r.Spec.TpmC == nil || !strings.HasPrefix(c.Note, "inconclusive: ") {
		t.Errorf("inconclusive cross-check: tpmC %v, check %+v; want tpmC and the check passed, saying inconclusive", r.Spec.TpmC, c)
	}
	r.Spec.setAgreement(true, nil, "")
	n := 0
	for _, c := range r.Spec.Checks {
		if c.Name == agreementCheck {
			n++
		}
	}
	if n != 1 || r.Spec.TpmC == nil {
		t.Errorf("after an agreeing cross-check: %d agreement checks, tpmC %v; want 1 and tpmC", n, r.Spec.TpmC)
	}
}

// TestCheckCountersDeferred: in the tpc-c mode the database counts a
// Delivery when a delivery session executes it, not when its terminal
// queued it, and the sessions (not the terminals) bound what is in flight
// at the window's edges.
func TestCheckCountersDeferred(t *testing.T) {
	r := specResult([tpcc.NumTxKinds]int64{1260, 1260, 126, 126, 126}, time.Second, time.Second)
	r.countersRead = true
	r.TPMSource, r.TxCountLagSeconds = "pg_stat_database xact_commit+xact_rollback", 1
	r.txCountSource = r.TPMSource
	r.Deferred.Completed = 100 // 26 still queued
	r.DBNewOrders = 1260
	r.DBTransactions = 1260 + 1260 + 126 + 100 + 126
	r.judgeSpec()
	r.CheckCounters(0)
	if c := r.Check.Transactions; c == nil || c.Driver != r.DBTransactions || !c.OK {
		t.Fatalf("transactions check %+v: want the driver's count %d (deliveries executed, not queued)", c, r.DBTransactions)
	}
	if got, want := r.Check.NewOrders.Allowance, int64(2*(64+1)); got < want {
		t.Errorf("new-order allowance %d, want at least 2 × 65 sessions", got)
	}
	if r.Spec.TpmC == nil || !checkOf(r.Spec, agreementCheck).Pass {
		t.Errorf("agreeing figures: tpmC %v, agreement %+v", r.Spec.TpmC, checkOf(r.Spec, agreementCheck))
	}
}
