package driver

import (
	"fmt"
	"math"

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
//     transaction committed on one side of the counter read and recorded
//     by the driver on the other;
//   - the driver's rate x the time the counter reads took at both edges
//     (virtual users keep working while the counters are read), at the
//     busiest second of the window: a loaded host runs in bursts;
//   - for TPM from a server counter: the driver's rate x 2 x the
//     counter's publication lag (dialect.Capabilities.TxCountLag: a
//     PostgreSQL backend publishes its counts about once a second), the
//     retried and failed attempts (the server counts their rollbacks),
//     oltplab's own statements on the database (the counter reads and the
//     samplers' queries: observerStatements);
//   - for NOPM: the New-Orders that failed (a lost connection may hide a
//     commit);
//
// and on top of it a relative tolerance of the driver's own count:
// NewOrderTolerance for NOPM (the schema counts exactly one per committed
// New-Order), TransactionTolerance for TPM (engines also count
// housekeeping transactions such as autovacuum's).
const (
	NewOrderTolerance    = 0.02
	TransactionTolerance = 0.05
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
	// database during the run, allowed for in Transactions.
	ObserverStatements int64 `json:"observer_statements"`
}

// CheckCounters compares the database's figures with the driver's own
// counts and marks the result suspect (Suspect, with one reason per
// failed comparison) when they disagree beyond the allowance: a negative
// figure, a counter that went backwards, or a divergence beyond the
// tolerance. observerStatements is the number of statements oltplab's
// samplers ran on the target database while the run went on (0 when none
// ran). A result without a measured window, or whose counters could not
// be read at both edges (its database figures do not exist), is left
// alone. Calling it again replaces the previous check.
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
	// The rate at the edges is taken as the busiest second's, at least
	// the window's mean.
	var peakTx, peakNO float64
	for _, s := range r.Series {
		if s.IntervalSeconds > 0 {
			peakTx = max(peakTx, float64(s.Transactions)/s.IntervalSeconds)
			peakNO = max(peakNO, float64(s.NewOrders)/s.IntervalSeconds)
		}
	}
	perSecond := func(n int64, peak float64) float64 { return max(float64(n)/r.Window.Seconds, peak) }
	edges := r.CounterReadSeconds

	c := &CrossCheck{ObserverStatements: observerStatements}
	noAllow := 2*vus + ceil(perSecond(newOrders, peakNO)*edges) + noFailed
	c.NewOrders = newCounterCheck(r.DBNewOrders, newOrders, noAllow, NewOrderTolerance)
	switch {
	case r.DBNewOrders < 0:
		r.Suspect = append(r.Suspect, fmt.Sprintf(
			"SUM(d_next_o_id) went backwards by %d during the window: the schema was rebuilt, reset or restored while the run went on",
			-r.DBNewOrders))
	case !c.NewOrders.OK:
		r.Suspect = append(r.Suspect, fmt.Sprintf(
			"NOPM from the database (%d new orders) is %+.1f%% off the driver's own count (%d), beyond the allowed ±%.0f: "+
				"another client wrote to this database, or it was rebuilt during the run",
			r.DBNewOrders, c.NewOrders.DiffPct, newOrders, c.NewOrders.Limit()))
	}
	if src := r.txCountSource; src != "" {
		lag := r.TxCountLagSeconds
		txAllow := 2*vus + ceil(perSecond(completed, peakTx)*(edges+2*lag)) + retried + failed +
			observerStatements + 2*counterReadStatements
		tc := newCounterCheck(r.DBTransactions, completed, txAllow, TransactionTolerance)
		c.Transactions = &tc
		switch {
		case r.DBTransactions < 0:
			r.Suspect = append(r.Suspect, fmt.Sprintf(
				"the server's transaction counter (%s) went backwards by %d during the window: its statistics were reset or the database re-created",
				src, -r.DBTransactions))
		case !tc.OK:
			r.Suspect = append(r.Suspect, fmt.Sprintf(
				"TPM from %s (%d transactions) is %+.1f%% off the driver's own count (%d), beyond the allowed ±%.0f: "+
					"another client ran transactions there, or its counters were reset during the run",
				src, r.DBTransactions, tc.DiffPct, completed, tc.Limit()))
		}
	}
	r.Check = c
	if r.Spec != nil {
		r.Spec.setAgreement(!r.IsSuspect(), r.Suspect)
	}
}

// IsSuspect reports whether the cross-check found the database's figures
// at odds with the driver's own counts.
func (r *Result) IsSuspect() bool { return len(r.Suspect) > 0 }

func ceil(x float64) int64 { return int64(math.Ceil(x)) }
