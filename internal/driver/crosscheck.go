package driver

import (
	"fmt"
	"math"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// The cross-check compares the database's own figures (NOPM from the
// schema, TPM from the server's counter) with what the driver itself
// counted over the same window. They measure the same transactions, so
// they agree up to what the window's edges, the counter's publication lag
// and oltplab's own observer queries explain; a larger gap means something
// else changed the database during the run (another client, a rebuild, a
// statistics reset) and the database's figure does not describe this
// workload.
//
// The allowance of each comparison, in transactions, is the sum of:
//
//   - 2 x VUs: at each edge of the window every virtual user may have one
//     transaction in flight, committed on one side of the counter read and
//     recorded by the driver on the other (a virtual user records a
//     transaction when its answer arrives, and has at most one unanswered);
//   - the edge rate x the time the counter reads took at both edges,
//     measured from before the first read to after the gate opened or
//     closed (CounterReadSeconds: it includes any scheduling delay between
//     the reads and the driver's window boundary, when virtual users keep
//     working while the counters are read). The edge rate is the larger of
//     the busiest second of the window (a loaded host runs in bursts) and,
//     for unpaced runs, VUs / the median service time of the compared
//     transactions: the rate at which the virtual users complete
//     transactions back to back while they run unimpeded, which a window
//     whose seconds hold waits (the driver descheduled on a loaded host,
//     lock waits) shows below what it reaches at an edge (edgeRate);
//   - for TPM from a server counter: the edge rate x 2 x the counter's
//     publication lag (dialect.Capabilities.TxCountLag: a PostgreSQL
//     backend publishes its counts about once a second), the retried and
//     failed attempts (the server counts their rollbacks), the counter
//     reads themselves, and oltplab's own statements on the database
//     (the samplers' queries inside the window: observerStatements). A
//     counter that counts each of them as a transaction
//     (dialect.StatementsCounted, PostgreSQL) has them taken out of its
//     figure (Result.OwnStatements, and out of TPM): only their rate over
//     the edges' reads and lag stays in the allowance, plus one in flight
//     at each edge, so that a divergence as large as the samplers' whole
//     count still fails. One that does not count them
//     (dialect.StatementsNotCounted, MySQL's Com_commit) allows nothing
//     for them; one that may (unknown) allows all of them;
//   - for NOPM: the New-Orders that failed (a lost connection may hide a
//     commit);
//
// and on top of it a relative tolerance of the driver's own count:
// NewOrderTolerance for NOPM (the schema counts exactly one per committed
// New-Order), TransactionTolerance for TPM (engines also count
// housekeeping transactions such as autovacuum's).
//
// A window in which the driver counted fewer than MinCheckedTransactions
// transactions is too short for the comparisons to conclude: they are
// recorded, marked inconclusive, and never make the run suspect, unless a
// figure went backwards, which nothing but a rebuild or a reset explains
// at any count. The minimum is where the relative tolerance starts to
// cover what the engine does on its own and neither the driver nor the
// allowance sees: 5% of 1,000 is 50 transactions, while one autovacuum
// pass over the nine TPC-C tables (a vacuum and an analyze each) commits
// up to 18; below it, in the 1-5 s windows of smoke tests, such background
// alone can exceed the tolerance, and a disagreement of a few dozen
// transactions says nothing about another client. A real run of one
// minute counts tens of thousands. Paced runs (the tpc-c mode, --rate)
// are judged at any count: they run few transactions over long windows by
// design, and their allowance takes out what oltplab itself sent.
const (
	NewOrderTolerance      = 0.02
	TransactionTolerance   = 0.05
	MinCheckedTransactions = 1000
)

// counterReadStatements is how many transactions reading the NOPM and TPM
// counters adds to the server's count at each edge (PostgreSQL runs each
// statement in its own transaction: the NOPM sum, the snapshot reset and
// the counter read).
const counterReadStatements = 3

// CounterCheck is one comparison of a database figure with the driver's
// own count over the measured window.
type CounterCheck struct {
	Database  int64   `json:"database"`  // delta of the database's counter
	Driver    int64   `json:"driver"`    // the driver's own count
	Allowance int64   `json:"allowance"` // absolute slack, in transactions (see the package comment above)
	Tolerance float64 `json:"tolerance"` // relative slack, a fraction of Driver
	// DiffPct is (Database - Driver) / Driver in percent; 0 when Driver is 0.
	DiffPct float64 `json:"diff_pct"`
	OK      bool    `json:"ok"`
}

// Limit is the largest difference the check accepts.
func (c CounterCheck) Limit() float64 {
	return float64(c.Allowance) + c.Tolerance*float64(c.Driver)
}

func newCounterCheck(db, drv, allowance int64, tol float64) CounterCheck {
	c := CounterCheck{Database: db, Driver: drv, Allowance: allowance, Tolerance: tol}
	if drv > 0 {
		c.DiffPct = 100 * float64(db-drv) / float64(drv)
	}
	c.OK = db >= 0 && math.Abs(float64(db-drv)) <= c.Limit()
	return c
}

// CrossCheck is the agreement of a run's database figures with the
// driver's own counts.
type CrossCheck struct {
	NewOrders CounterCheck `json:"new_orders"`
	// Transactions is nil when TPM is the driver's own count (no server
	// counter): there is nothing to compare.
	Transactions *CounterCheck `json:"transactions,omitempty"`
	// ObserverStatements is what oltplab's own samplers ran on the
	// database inside the window: taken out of the counter's figure
	// (Result.OwnStatements) where it counts them, allowed for where it
	// may.
	ObserverStatements int64 `json:"observer_statements"`
	// Inconclusive says why the comparisons conclude nothing (the driver
	// counted fewer than MinCheckedTransactions): their OK is then only
	// shown, and the run is suspect only if a figure went backwards.
	Inconclusive string `json:"inconclusive,omitempty"`
}

// CheckCounters compares the database's figures with the driver's own
// counts and marks the result suspect (Suspect, with one reason per
// failed comparison) when they disagree beyond the allowance: a negative
// figure, a counter that went backwards, or a divergence beyond the
// tolerance; below MinCheckedTransactions only a figure that went
// backwards does (the check is then inconclusive). observerStatements is
// the number of statements oltplab's samplers ran on the target database
// inside the measured window (0 when none ran): where the server's counter
// counts them, TPM leaves them out (OwnStatements). A result without a
// measured window, or whose counters could not be read at both edges (its
// database figures do not exist), is left alone. Calling it again
// replaces the previous check.
func (r *Result) CheckCounters(observerStatements int64) {
	r.Suspect = nil
	r.Check = nil
	if r.Window.Seconds <= 0 || !r.countersRead {
		return
	}
	var completed, newOrders, retried, failed, noFailed int64
	for _, k := range r.Kinds {
		completed += k.Completed
		retried += k.Retried
		var f int64
		for _, n := range k.Failed {
			f += n
		}
		failed += f
		if k.Kind == tpcc.NewOrderTx.String() {
			newOrders = k.Completed - k.RolledBack
			noFailed = f
		}
	}
	// The transactions that may be in flight at an edge: one per virtual
	// user; in the tpc-c mode one per pooled or delivery session (the
	// terminals keying and thinking run none).
	vus := int64(r.Options.VUs)
	if d := r.Deferred; d != nil {
		vus = int64(r.Options.Sessions + r.Options.DeliverySessions)
		// A deferred Delivery is a database transaction when a delivery
		// session executes it (TPC-C 2.7.2), not when its terminal queued
		// it: count the executions in place of the requests.
		for _, k := range r.Kinds {
			if k.Kind == tpcc.DeliveryTx.String() {
				completed -= k.Completed
			}
		}
		completed += d.Completed
		retried += d.Retried
		for _, n := range d.Failed {
			failed += n
		}
	}
	// The rate at the edges: the busiest second's, at least the window's
	// mean, and for unpaced users at least their back-to-back rate.
	var peakTx, peakNO float64
	for _, s := range r.Series {
		if s.IntervalSeconds > 0 {
			peakTx = max(peakTx, float64(s.Transactions)/s.IntervalSeconds)
			peakNO = max(peakNO, float64(s.NewOrders)/s.IntervalSeconds)
		}
	}
	var noService, txService int64 // median service times, µs
	if !r.Options.Paced() {
		noService, txService = r.medianServiceMicros()
	}
	noRate := edgeRate(max(float64(newOrders)/r.Window.Seconds, peakNO), vus, noService)
	txRate := edgeRate(max(float64(completed)/r.Window.Seconds, peakTx), vus, txService)
	edges := r.CounterReadSeconds

	c := &CrossCheck{ObserverStatements: observerStatements}
	// Paced users (the tpc-c mode's terminals, --rate) run few
	// transactions by design over windows of minutes: their check
	// concludes at any count, so that a counter far off the driver's (the
	// samplers' statements counted as transactions) is never waved
	// through as too short to tell.
	conclusive := completed >= MinCheckedTransactions || r.Options.Paced()
	if !conclusive {
		c.Inconclusive = fmt.Sprintf("the driver counted %d transactions in the window, fewer than the %d the cross-check needs to tell a disagreement from the engine's own background",
			completed, MinCheckedTransactions)
	}
	noAllow := 2*vus + ceil(noRate*edges) + noFailed
	c.NewOrders = newCounterCheck(r.DBNewOrders, newOrders, noAllow, NewOrderTolerance)
	switch {
	case r.DBNewOrders < 0:
		r.Suspect = append(r.Suspect, fmt.Sprintf(
			"SUM(d_next_o_id) went backwards by %d during the window: the schema was rebuilt, reset or restored while the run went on",
			-r.DBNewOrders))
	case !c.NewOrders.OK && conclusive:
		r.Suspect = append(r.Suspect, fmt.Sprintf(
			"NOPM from the database (%d new orders) is %+.1f%% off the driver's own count (%d), beyond the allowed ±%.0f: "+
				"another client wrote to this database, or it was rebuilt during the run",
			r.DBNewOrders, c.NewOrders.DiffPct, newOrders, c.NewOrders.Limit()))
	}
	r.OwnStatements = 0
	if src := r.txCountSource; src != "" {
		lag := r.TxCountLagSeconds
		dbTx, own, ownAllow := r.DBTransactions, int64(0), observerStatements
		switch r.txCountsOwn {
		case dialect.StatementsCounted:
			if dbTx >= 0 {
				own = observerStatements
				dbTx = max(dbTx-own, 0)
			}
			ownRate := float64(observerStatements) / r.Window.Seconds
			ownAllow = ceil(ownRate*(edges+2*lag)) + min(observerStatements, 2)
		case dialect.StatementsNotCounted:
			ownAllow = 0
		}
		txAllow := 2*vus + ceil(txRate*(edges+2*lag)) + retried + failed + ownAllow + 2*counterReadStatements
		tc := newCounterCheck(dbTx, completed, txAllow, TransactionTolerance)
		c.Transactions = &tc
		less := ""
		if own > 0 {
			less = fmt.Sprintf(" once oltplab's own %d statements are taken out", own)
			r.OwnStatements = own
			if r.TPMSource == src { // not replaced by the driver's count
				r.TPM = perMinute(dbTx, r.Window.Seconds)
			}
		}
		switch {
		case r.DBTransactions < 0:
			r.Suspect = append(r.Suspect, fmt.Sprintf(
				"the server's transaction counter (%s) went backwards by %d during the window: its statistics were reset or the database re-created",
				src, -r.DBTransactions))
		case !tc.OK && conclusive:
			r.Suspect = append(r.Suspect, fmt.Sprintf(
				"TPM from %s (%d transactions%s) is %+.1f%% off the driver's own count (%d), beyond the allowed ±%.0f: "+
					"another client ran transactions there, or its counters were reset during the run",
				src, dbTx, less, tc.DiffPct, completed, tc.Limit()))
		}
	}
	r.Check = c
	if r.Spec != nil {
		r.Spec.setAgreement(!r.IsSuspect(), r.Suspect, c.Inconclusive)
	}
}

// IsSuspect reports whether the cross-check found the database's figures
// at odds with the driver's own counts.
func (r *Result) IsSuspect() bool { return len(r.Suspect) > 0 }

func ceil(x float64) int64 { return int64(math.Ceil(x)) }

// edgeRate is the rate, per second, at which transactions may complete
// while the counters are read at an edge: the observed rate (the busiest
// second, at least the window's mean), at least vus back to back at
// serviceMicros each (0: unknown, or a paced run whose users wait for
// their schedule).
func edgeRate(observed float64, vus, serviceMicros int64) float64 {
	if serviceMicros <= 0 {
		return observed
	}
	return max(observed, float64(vus)*1e6/float64(serviceMicros))
}

// medianServiceMicros returns the median service time of New-Order and,
// weighted by their counts, of all kinds; 0 when nothing completed.
func (r *Result) medianServiceMicros() (newOrder, all int64) {
	var sum float64
	var n int64
	for _, k := range r.Kinds {
		if k.Completed == 0 || k.ServiceMicros.P50 <= 0 {
			continue
		}
		if k.Kind == tpcc.NewOrderTx.String() {
			newOrder = k.ServiceMicros.P50
		}
		sum += float64(k.ServiceMicros.P50) * float64(k.Completed)
		n += k.Completed
	}
	if n > 0 {
		all = int64(math.Round(sum / float64(n)))
	}
	return newOrder, all
}
