package driver

import (
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
)

// checked builds the Result of a 60 s window of 4 virtual users whose
// driver counted 10,000 transactions of which 4,400 committed New-Orders,
// with the database's deltas given, and cross-checks it.
func checked(dbNewOrders, dbTx int64, serverCounter bool, observer int64) *Result {
	r := &Result{
		Options:            Options{VUs: 4},
		Window:             Window{Seconds: 60},
		DBNewOrders:        dbNewOrders,
		DBTransactions:     dbTx,
		TPMSource:          DriverTPMSource,
		CounterReadSeconds: 0.01,
		countersRead:       true,
		Kinds: []KindResult{
			{Kind: "new_order", Completed: 4444, RolledBack: 44},
			{Kind: "payment", Completed: 4356},
			{Kind: "order_status", Completed: 400},
			{Kind: "delivery", Completed: 400},
			{Kind: "stock_level", Completed: 400},
		},
	}
	if serverCounter {
		r.TPMSource = "pg_stat_database xact_commit+xact_rollback"
		r.txCountSource = r.TPMSource
		r.TxCountLagSeconds = 1
	}
	r.CheckCounters(observer)
	return r
}

func TestCheckCounters(t *testing.T) {
	tests := []struct {
		name          string
		dbNO, dbTx    int64
		serverCounter bool
		observer      int64
		suspect       []string // fragments of the reasons, in order; none: not suspect
	}{
		{name: "exact agreement", dbNO: 4400, dbTx: 10000, serverCounter: true},
		{name: "window edges and counter lag", dbNO: 4408, dbTx: 9700, serverCounter: true},
		{name: "samplers' own statements", dbNO: 4400, dbTx: 10000 + 360, serverCounter: true, observer: 360},
		{name: "no server counter: TPM is the driver's", dbNO: 4400, dbTx: 10000},
		{name: "another client wrote new orders (+37%)", dbNO: 6028, dbTx: 10000, serverCounter: true,
			suspect: []string{"NOPM from the database (6028 new orders) is +37.0% off the driver's own count (4400)"}},
		{name: "new orders missing", dbNO: 4000, dbTx: 10000,
			suspect: []string{"-9.1% off"}},
		{name: "schema rebuilt during the run", dbNO: -3096, dbTx: -8166, serverCounter: true,
			suspect: []string{"SUM(d_next_o_id) went backwards by 3096", "went backwards by 8166"}},
		{name: "another client's transactions", dbNO: 4400, dbTx: 13700, serverCounter: true,
			suspect: []string{"TPM from pg_stat_database xact_commit+xact_rollback (13700 transactions) is +37.0% off"}},
		{name: "counters reset, fewer transactions", dbNO: 4400, dbTx: 6000, serverCounter: true,
			suspect: []string{"-40.0% off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := checked(tt.dbNO, tt.dbTx, tt.serverCounter, tt.observer)
			if got, want := r.IsSuspect(), len(tt.suspect) > 0; got != want {
				t.Fatalf("suspect: got %v (%q), want %v; check %+v", got, r.Suspect, want, r.Check)
			}
			if got, want := len(r.Suspect), len(tt.suspect); got != want {
				t.Fatalf("reasons: got %d %q, want %d", got, r.Suspect, want)
			}
			for i, frag := range tt.suspect {
				if !strings.Contains(r.Suspect[i], frag) {
					t.Errorf("reason %d = %q, want it to contain %q", i, r.Suspect[i], frag)
				}
			}
			if r.Check == nil || (r.Check.Transactions != nil) != tt.serverCounter {
				t.Errorf("check %+v: want a transaction comparison only with a server counter", r.Check)
			}
		})
	}
}

// TestCheckCountersInconclusive: a window in which the driver counted
// fewer than MinCheckedTransactions transactions concludes nothing: a
// disagreement beyond the allowance is recorded but the run is not
// suspect, except when a figure went backwards; from the minimum on the
// same disagreement is suspect.
func TestCheckCountersInconclusive(t *testing.T) {
	short := func(completed, dbNO, dbTx int64) *Result {
		noCompleted := completed * 44 / 100
		r := &Result{
			Options: Options{VUs: 1}, Window: Window{Seconds: 2},
			DBNewOrders: dbNO, DBTransactions: dbTx, CounterReadSeconds: 0.001, countersRead: true,
			TPMSource: "pg_stat_database xact_commit+xact_rollback", TxCountLagSeconds: 1,
			Kinds: []KindResult{{Kind: "new_order", Completed: noCompleted}, {Kind: "payment", Completed: completed - noCompleted}},
		}
		r.txCountSource = r.TPMSource
		r.CheckCounters(0)
		return r
	}
	const n = MinCheckedTransactions
	for _, c := range []struct {
		name         string
		r            *Result
		inconclusive bool
		suspect      string
	}{
		{"below the minimum, 37% more new orders", short(n-1, (n-1)*44/100*137/100, n-1), true, ""},
		{"below the minimum, 37% more transactions", short(n-1, (n-1)*44/100, (n-1)*137/100), true, ""},
		{"below the minimum, the schema rebuilt", short(n-1, -300, n-1), true, "went backwards by 300"},
		{"at the minimum, 37% more new orders", short(n, n*44/100*137/100, n), false, "NOPM from the database"},
		{"at the minimum, agreement", short(n, n*44/100, n), false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.r.Check.Inconclusive != ""; got != c.inconclusive {
				t.Errorf("inconclusive: got %q, want %v", c.r.Check.Inconclusive, c.inconclusive)
			}
			if c.suspect == "" && c.r.IsSuspect() {
				t.Errorf("suspect %q, want not suspect", c.r.Suspect)
			}
			if c.suspect != "" && (!c.r.IsSuspect() || !strings.Contains(c.r.Suspect[0], c.suspect)) {
				t.Errorf("suspect %q, want a reason saying %q", c.r.Suspect, c.suspect)
			}
		})
	}
}

func TestCheckCountersAllowance(t *testing.T) {
	r := checked(4400, 10000, true, 100)
	// New-Orders: 2 per user at the edges, 4400/60 per second for 0.01 s.
	if got, want := r.Check.NewOrders.Allowance, int64(2*4+1); got != want {
		t.Errorf("new-order allowance: got %d, want %d", got, want)
	}
	// Transactions: the same, plus 2 s of counter lag, the observers and
	// the counter reads themselves.
	if got, want := r.Check.Transactions.Allowance, int64(2*4+335+100+2*counterReadStatements); got != want {
		t.Errorf("transaction allowance: got %d, want %d", got, want)
	}
	// A window never opened, or whose end counters could not be read, is
	// not checked.
	empty := &Result{}
	empty.CheckCounters(0)
	if empty.Check != nil || empty.IsSuspect() {
		t.Errorf("a result without a window was checked: %+v", empty.Check)
	}
	unread := checked(0, 0, true, 0)
	unread.countersRead = false
	unread.CheckCounters(0)
	if unread.Check != nil || unread.IsSuspect() {
		t.Errorf("a result without its end counters was checked: %q", unread.Suspect)
	}
}

func TestLagWarning(t *testing.T) {
	for _, tt := range []struct {
		window, lag float64
		source      string
		want        string
	}{
		{3, 1, "pg_stat_database", "off by up to ±33% in a 3 s window"},
		{15, 1, "pg_stat_database", "±7% in a 15 s window"},
		{60, 1, "pg_stat_database", ""},
		{3, 0, "Com_commit+Com_rollback (global)", ""},
		{3, 1, DriverTPMSource, ""},
	} {
		r := &Result{Window: Window{Seconds: tt.window}, TxCountLagSeconds: tt.lag, TPMSource: tt.source}
		got := lagWarning(r)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("window %v s, lag %v s, %s: got %q, want %q", tt.window, tt.lag, tt.source, got, tt.want)
		}
	}
}

// TestEdgeAllowance: the allowance's edge term takes the virtual users'
// back-to-back rate when the window's busiest second shows less (a
// short, loaded window), so a database count a few above the driver's is
// the window's edges; a 10% miscount still fails, in a tiny window and
// in a minute's.
func TestEdgeAllowance(t *testing.T) {
	// 4 virtual users, 5 s, 229 committed New-Orders, the busiest second
	// 60 of them; the counter reads took 30 ms at the two edges together
	// and a New-Order's median service time was 15 ms.
	tiny := func(dbNO int64, paced bool) *Result {
		r := &Result{
			Options:            Options{VUs: 4},
			Window:             Window{Seconds: 5},
			DBNewOrders:        dbNO,
			TPMSource:          DriverTPMSource,
			CounterReadSeconds: 0.03,
			countersRead:       true,
			Series:             []SecondSample{{IntervalSeconds: 1, NewOrders: 60, Transactions: 130}},
			Kinds: []KindResult{
				{Kind: "new_order", Completed: 231, RolledBack: 2, ServiceMicros: Latency{P50: 15000}},
				{Kind: "payment", Completed: 230, ServiceMicros: Latency{P50: 10000}},
			},
		}
		if paced {
			r.Options.Rate = 50
		}
		r.CheckCounters(0)
		return r
	}
	for _, tc := range []struct {
		name      string
		r         *Result
		allowance int64
		ok        bool
	}{
		// 2 x 4 in flight + ceil(max(60, 4 / 0.015 s) x 0.03 s) = 8 + 8;
		// limit 16 + 2% of 229 = 20.6.
		{"tiny window, database 17 above", tiny(246, false), 16, true},
		{"tiny window, database 10% above", tiny(252, false), 16, false},
		{"tiny window, database 10% below", tiny(206, false), 16, false},
		// Paced users wait for their schedule: the busiest second only,
		// 8 + ceil(60 x 0.03) = 10; limit 14.6.
		{"paced tiny window, database 17 above", tiny(246, true), 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.r.Check.NewOrders
			if c.Allowance != tc.allowance || c.OK != tc.ok {
				t.Errorf("allowance %d, ok %v (database %d, driver %d, limit %.1f); want %d, %v",
					c.Allowance, c.OK, c.Database, c.Driver, c.Limit(), tc.allowance, tc.ok)
			}
		})
	}
	// A minute of 4 users at a 5 ms median New-Order: 8 + ceil(800/s x
	// 0.01 s) = 16, limit 104; 10% more New-Orders (440) is a miscount.
	r := checked(4840, 10000, false, 0)
	r.Kinds[0].ServiceMicros.P50 = 5000
	r.CheckCounters(0)
	if c := r.Check.NewOrders; c.Allowance != 16 || c.OK {
		t.Errorf("a minute's window 10%% above: allowance %d, ok %v; want 16, not ok", c.Allowance, c.OK)
	}
}

// TestCheckCountersOwnStatements: in the tpc-c mode's minute of keying
// and thinking terminals the driver completed 58 transactions while
// PostgreSQL's counter rose by 424, 366 of them oltplab's own samplers'
// queries (a wait sample every 200 ms and the counters every second).
// TPM is the counter less what oltplab sent, not 424; another client's
// transactions on top still fail the check.
func TestCheckCountersOwnStatements(t *testing.T) {
	tpcc := func(dbTx, observer int64, counting dialect.StatementCounting) *Result {
		r := &Result{
			Options:            Options{Mode: ModeTPCC, Terminals: 10},
			Window:             Window{Seconds: 60},
			DBNewOrders:        26,
			NOPM:               26,
			DriverNOPM:         26,
			DriverTPM:          58,
			DBTransactions:     dbTx,
			TPM:                float64(dbTx),
			TPMSource:          "pg_stat_database xact_commit+xact_rollback",
			TxCountLagSeconds:  1,
			CounterReadSeconds: 0.01,
			countersRead:       true,
			Series:             []SecondSample{{IntervalSeconds: 1, NewOrders: 1, Transactions: 2}},
			Kinds: []KindResult{
				{Kind: "new_order", Completed: 26},
				{Kind: "payment", Completed: 25},
				{Kind: "order_status", Completed: 3},
				{Kind: "delivery", Completed: 2},
				{Kind: "stock_level", Completed: 2},
			},
		}
		r.txCountSource = r.TPMSource
		r.txCountsOwn = counting
		r.CheckCounters(observer)
		return r
	}
	clean := tpcc(424, 366, dialect.StatementsCounted)
	if clean.TPM != 58 || clean.OwnStatements != 366 || clean.IsSuspect() {
		t.Errorf("PostgreSQL, 424 counted of which 366 oltplab's: TPM %v, own %d, suspect %q; want TPM 58 (the counter less oltplab's own statements), agreeing",
			clean.TPM, clean.OwnStatements, clean.Suspect)
	}
	if c := clean.Check.Transactions; c.Database != 58 || c.Limit() > 30 {
		t.Errorf("transactions check %+v (limit %.1f): want 58 compared, a limit that no longer holds the samplers' whole count", c, c.Limit())
	}
	// Another client's 40 transactions in the minute (+69%): beyond
	// what the edges explain.
	other := tpcc(424+40, 366, dialect.StatementsCounted)
	if !other.IsSuspect() || !strings.Contains(other.Suspect[0], "(98 transactions once oltplab's own 366 statements are taken out)") {
		t.Errorf("another client's 40 transactions: suspect %q, want the check to fail naming what was taken out", other.Suspect)
	}
	// MySQL's Com_commit does not count the samplers' reads: nothing is
	// taken out and nothing allowed for them.
	my := tpcc(58+40, 366, dialect.StatementsNotCounted)
	if my.TPM != 98 || my.OwnStatements != 0 || !my.IsSuspect() {
		t.Errorf("Com_commit 40 above the driver: TPM %v, own %d, suspect %q; want 98, nothing taken out, suspect", my.TPM, my.OwnStatements, my.Suspect)
	}
	// The stored result rechecks as it was judged.
	if err := clean.Recheck(); err != nil {
		t.Errorf("recheck: %v", err)
	}
}
