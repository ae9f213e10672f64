package driver_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestRunPacedSQLite runs the paced modes end to end on embedded SQLite
// inside a testing/synctest bubble: keying, think times and windows pass
// in fake time, which stands still while SQLite works (every response
// time is zero), so minutes of terminal cycles take a moment.
func TestRunPacedSQLite(t *testing.T) {
	testenv.Require(t, testenv.Long)
	synctest.Test(t, func(t *testing.T) {
		db, meta := builtSQLite(t)
		defer db.Close()
		ctx := context.Background()
		tpccRun := func(terminals int, window time.Duration) *driver.Result {
			t.Helper()
			o := shortRun()
			o.Mode, o.VUs, o.Terminals = driver.ModeTPCC, 0, terminals
			o.Rampup, o.Duration, o.Grace, o.LiveEvery = time.Minute, window, 10*time.Second, time.Minute
			res, err := driver.Run(ctx, db, meta, o, nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			return res
		}

		t.Log("tpc-c, ten terminals per warehouse")
		res := tpccRun(0, 10*time.Minute)
		o := res.Options
		if o.Mode != driver.ModeTPCC || o.Terminals != 10 || o.Sessions != 10 || o.DeliverySessions != 1 {
			t.Errorf("options %+v: want tpc-c with 10 terminals, 10 sessions, 1 delivery session", o)
		}
		s := res.Spec
		if s == nil {
			t.Fatalf("no spec verdict in a tpc-c result")
		}
		checks := map[string]driver.SpecCheck{}
		for _, c := range s.Checks {
			checks[c.Name] = c
		}
		for _, name := range []string{"terminals", "response_time_p90_new_order", "response_time_p90_payment",
			"response_time_p90_order_status", "response_time_p90_delivery", "response_time_p90_stock_level",
			"deferred_delivery_p90", "mix_payment_pct", "mix_order_status_pct", "mix_delivery_pct",
			"mix_stock_level_pct", "window_complete"} {
			c, ok := checks[name]
			if !ok {
				t.Errorf("check %s missing", name)
				continue
			}
			switch {
			case strings.HasPrefix(name, "mix_"):
				// Ten terminals for ten minutes cut their decks at both
				// edges of the window: a share may fall below its minimum.
				// The check must say so, never round it up.
				if c.Pass != (c.Value >= c.Limit) {
					t.Errorf("check %+v: pass must be value >= limit", c)
				}
			case !c.Pass:
				// Fake time stands still while SQLite works: no response time.
				t.Errorf("check %+v failed", c)
			}
		}
		allPass := true
		for _, c := range s.Checks {
			allPass = allPass && c.Pass
		}
		if s.Conforming != allPass || (s.TpmC != nil) != allPass || (s.TpmC != nil && *s.TpmC != s.NewOrdersPerMinute) {
			t.Errorf("conforming %v, tpmC %v with every check passed %v: want tpmC = %v exactly when every check passed",
				s.Conforming, s.TpmC, allPass, s.NewOrdersPerMinute)
		}
		if got, want := s.MaxNewOrdersPerMinute, tpcc.MaxNewOrdersPerMinute(10); got != want {
			t.Errorf("maximum: got %v, want %v", got, want)
		}
		// About 126 New-Orders in 10 minutes (12.61 a minute), a count with
		// a standard deviation near its square root.
		want := tpcc.MaxNewOrdersPerMinute(10)
		if sd := math.Sqrt(want*10) / 10; math.Abs(s.NewOrdersPerMinute-want) > 4*sd {
			t.Errorf("New-Orders per minute %v, want %v ± %v", s.NewOrdersPerMinute, want, 4*sd)
		}
		d := res.Deferred
		if d == nil || d.Completed == 0 {
			t.Fatalf("deferred deliveries: %+v, want some completed", d)
		}
		if int64(len(d.Records)) != d.Completed || res.Audit.DeliveriesExecuted != d.Completed {
			t.Errorf("%d records, %d executions in the audit, want %d (completed)", len(d.Records), res.Audit.DeliveriesExecuted, d.Completed)
		}
		if got, want := res.Kinds[tpcc.DeliveryTx].Completed, res.Audit.Count[tpcc.DeliveryTx]; got != want {
			t.Errorf("deliveries queued %d, in the mix %d", got, want)
		}
		for _, r := range d.Records {
			if r.QueueMillis < 0 || r.CompletionMillis < r.QueueMillis || r.QueuedMillis < -60e3 || r.WID != 1 {
				t.Errorf("delivery record %+v", r)
			}
		}
		if p := res.Pacing; p == nil || p.Terminals != 10 || p.SessionWaitMicros == nil || p.DispatchLagMicros == nil || p.TerminalBytes <= 0 {
			t.Errorf("pacing %+v: want 10 terminals, session wait, dispatch lag and bytes per terminal", p)
		}
		checkConsistency(t, db)

		t.Log("tpc-c, five terminals: not conforming")
		res = tpccRun(5, 5*time.Minute)
		s = res.Spec
		if s.Conforming || s.TpmC != nil {
			t.Errorf("five terminals on one warehouse: conforming %v, tpmC %v; want neither", s.Conforming, s.TpmC)
		}
		if c := s.Checks[0]; c.Name != "terminals" || c.Pass || c.Value != 5 || c.Limit != 10 {
			t.Errorf("terminals check %+v: want 5 of 10, failed", c)
		}
		if got, want := s.MaxNewOrdersPerMinute, tpcc.MaxNewOrdersPerMinute(5); got != want {
			t.Errorf("maximum of 5 terminals: got %v, want %v", got, want)
		}

		t.Log("tproc-c at 5 transactions a second per virtual user")
		o = shortRun()
		o.VUs, o.Rate = 2, 5
		o.Rampup, o.Duration, o.Grace = 10*time.Second, time.Minute, time.Second
		res, err := driver.Run(ctx, db, meta, o, nil)
		if err != nil {
			t.Fatalf("Run at a rate: %v", err)
		}
		var n int64
		for _, k := range res.Kinds {
			n += k.Completed
		}
		// In fake time nothing is late: the schedule is met exactly, give or
		// take the transaction at each edge of the window per user.
		if want := int64(2 * 5 * 60); n < want-2 || n > want+2 {
			t.Errorf("completed %d transactions, want %d ± 2 (2 users × 5/s × 60 s)", n, want)
		}
		if p := res.Pacing; p == nil || p.OfferedTPM != 600 || p.RatePerVU != 5 {
			t.Errorf("pacing %+v: want offered TPM 600 at 5/s per user", p)
		}
		if res.Spec != nil || res.Deferred != nil {
			t.Errorf("tproc-c result with a spec verdict or deferred deliveries")
		}
		checkConsistency(t, db)
	})
}
