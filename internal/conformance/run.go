package conformance

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// A short timed run: long enough for every kind to complete several
// times, short enough to keep the suite near a minute per dialect.
const (
	runVUs      = 4
	runRampup   = time.Second
	runDuration = 8 * time.Second
	runGrace    = 5 * time.Second
	runSeed     = 11
)

// runLonger are the windows a run is repeated with when the window before
// completed fewer than minRunTx transactions: a server slowed down by a
// busy host is measured longer, never judged on a handful.
var runLonger = []time.Duration{30 * time.Second, 2 * time.Minute}

// minRunTx is the fewest transactions a window must complete before the
// test asserts that every kind completed: each virtual user deals its own
// 23-card deck (TPC-C 5.2.4.2), so with this many one of the runVUs users
// completed at least a whole deck, and every kind was dealt.
const minRunTx = runVUs * tpcc.DeckSize

// nominal is what a clause 9.2 audit figure is by construction of the
// inputs: the mean of one sample and its variance, and the figure's scale
// (100 for a percentage).
type nominal struct {
	mean, variance, scale float64
}

// share is a proportion p: a Bernoulli sample of variance p(1-p).
func share(p float64) nominal { return nominal{mean: p, variance: p * (1 - p), scale: 100} }

// auditNominal holds the nominal value of each clause 9.2 input
// distribution that tpcc.Audit figures.
var auditNominal = map[string]nominal{
	"new_order_rollback_pct": share(0.01), // TPC-C 2.4.1.4: 1% of New-Orders roll back
	// TPC-C 2.4.1.3: OL_CNT uniform within [5 .. 15]: mean 10, variance (11^2-1)/12 = 10.
	"average_order_lines":      {mean: 10, variance: 10, scale: 1},
	"remote_order_lines_pct":   share(0.01), // TPC-C 2.4.1.5: 1% of order lines are remote
	"remote_payment_pct":       share(0.15), // TPC-C 2.5.1.2: 15% of Payments are remote
	"payment_by_name_pct":      share(0.60), // TPC-C 2.5.1.2: 60% by last name
	"order_status_by_name_pct": share(0.60), // TPC-C 2.6.1.2: 60% by last name
}

// minStandardErrors is how many standard errors of its nominal value a
// figure's tolerance must span on each side before the figure is asserted:
// a conforming dialect fails such an assertion with a probability below
// 1e-4, so the test is not flaky.
const minStandardErrors = 4

func testRun(t *testing.T, db dialect.Database) {
	ctx := subtestContext(t)
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	meta, err := tpcc.ReadMeta(ctx, c)
	c.Close()
	if err != nil {
		t.Fatalf("ReadMeta: %v", err)
	}

	o := driver.Defaults()
	o.VUs, o.Rampup, o.Duration, o.Grace, o.Seed = runVUs, runRampup, runDuration, runGrace, runSeed
	o.Style = styles(db.Caps())[0]
	start := time.Now()
	res, err := driver.Run(ctx, db, meta, o, nil)
	for _, longer := range runLonger {
		if err != nil || completed(res) >= minRunTx {
			break
		}
		t.Logf("%s: %d transactions in a %s window, fewer than %d: the server is slow here, measuring %s",
			db.Name(), completed(res), o.Duration, minRunTx, longer)
		o.Duration = longer
		start = time.Now()
		res, err = driver.Run(ctx, db, meta, o, nil)
	}
	if err != nil {
		t.Fatalf("driver.Run(%d VUs, %s, %s): %v", o.VUs, o.Style, o.Duration, err)
	}
	if n := completed(res); n < minRunTx {
		t.Fatalf("%s: %d transactions in a %s window, fewer than the %d the test needs to judge the mix", db.Name(), n, o.Duration, minRunTx)
	}
	t.Logf("%s %s: %d VUs for %s in %s: TPM %.0f (%s), NOPM %.0f, driver TPM %.0f, mix %v, errors %v",
		db.Name(), o.Style, o.VUs, o.Duration, time.Since(start).Round(time.Millisecond),
		res.TPM, res.TPMSource, res.NOPM, res.DriverTPM, res.MixPct, res.ErrorsByClass)

	if res.Partial {
		t.Errorf("Partial = true, want a complete run")
	}
	for _, k := range res.Kinds {
		if k.Completed == 0 {
			t.Errorf("%s: no transaction completed (failed %v)", k.Kind, k.Failed)
		}
	}
	if got := len(res.Kinds); got != tpcc.NumTxKinds {
		t.Errorf("%d kinds in the result, want %d", got, tpcc.NumTxKinds)
	}
	// Errors no retry or reconnection explains are bugs: a statement the
	// database rejects, a missing object.
	for _, class := range []dialect.ErrClass{dialect.ClassOther, dialect.ClassUndefinedObject, dialect.ClassAuth} {
		if n := res.ErrorsByClass[class.String()]; n > 0 {
			t.Errorf("%d transactions failed with class %s, want none", n, class)
		}
	}
	if res.NOPM <= 0 || res.DBNewOrders <= 0 {
		t.Errorf("NOPM = %v from %d new orders, want > 0", res.NOPM, res.DBNewOrders)
	}
	if res.TPM <= 0 {
		t.Errorf("TPM = %v, want > 0", res.TPM)
	}
	if res.NOPMSource != driver.NOPMSource {
		t.Errorf("NOPMSource = %q, want %q", res.NOPMSource, driver.NOPMSource)
	}
	wantTPM := driver.DriverTPMSource
	if tc, ok := db.(dialect.TxCounter); ok {
		wantTPM = tc.TxCountSource()
	}
	if res.TPMSource == "" || res.TPMSource != wantTPM {
		t.Errorf("TPMSource = %q, want %q", res.TPMSource, wantTPM)
	}

	if res.CountsFallback != "" || res.ServerRestarted || len(res.Outages) > 0 {
		t.Errorf("counts fallback %q, restarted %v, outages %v: want the database's own figures of an undisturbed run",
			res.CountsFallback, res.ServerRestarted, res.Outages)
	}
	checkServerStart(t, ctx, db)

	checkAuditFigures(t, res.AuditFigures)
	checkConsistency(t, ctx, db, false)
}

// completed is how many transactions the run's window completed.
func completed(res *driver.Result) int64 {
	var n int64
	for _, k := range res.Kinds {
		n += k.Completed
	}
	return n
}

// checkServerStart: a dialect.ServerStartReader reads a start time in the
// past, and the same one (to the second) again while the server runs.
func checkServerStart(t *testing.T, ctx context.Context, db dialect.Database) {
	t.Helper()
	sr, ok := db.(dialect.ServerStartReader)
	if !ok {
		return
	}
	first, err := sr.ServerStartTime(ctx)
	if err != nil {
		t.Fatalf("ServerStartTime: %v", err)
	}
	again, err := sr.ServerStartTime(ctx)
	if err != nil {
		t.Fatalf("ServerStartTime again: %v", err)
	}
	if first.IsZero() || first.After(time.Now().Add(time.Second)) {
		t.Errorf("ServerStartTime = %v: want a time in the past", first)
	}
	if d := again.Sub(first); d > time.Second || d < -time.Second {
		t.Errorf("ServerStartTime read %v, then %v: want the same start of a server that did not restart", first, again)
	}
}

// checkAuditFigures asserts each clause 9.2 figure that the sample count
// makes decisive: its tolerance spans at least minStandardErrors standard
// errors, se = sqrt(variance/n), on each side of the nominal value. The
// others, and the figures of other clauses (the minimum mix of 5.2.3,
// whose bound is the deck's own share, and skipped deliveries, which
// concurrent Deliveries may cause within the 1% 2.7.4.2 allows), are logged.
func checkAuditFigures(t *testing.T, figs []tpcc.Figure) {
	t.Helper()
	for _, f := range figs {
		desc := func() string {
			return fmt.Sprintf("%s = %.3f (clause %s, bounds [%g, %g], n %d)", f.Name, f.Value, f.Clause, f.Lo, f.Hi, f.Samples)
		}
		nom, ok := auditNominal[f.Name]
		switch {
		case !ok || !strings.Contains(f.Clause, "9.2"):
			t.Logf("%s: not a clause 9.2 input distribution, logged only (OK %v)", desc(), f.OK)
			continue
		case f.NotApplicable:
			if !f.OK {
				t.Errorf("%s: not applicable but not OK", desc())
			}
			continue
		case f.Samples == 0:
			t.Logf("%s: no sample, not asserted", desc())
			continue
		}
		center := nom.mean * nom.scale
		se := math.Sqrt(nom.variance/float64(f.Samples)) * nom.scale
		half := math.Min(center-f.Lo, f.Hi-center)
		if half < minStandardErrors*se {
			need := math.Ceil(nom.variance * math.Pow(minStandardErrors*nom.scale/half, 2))
			t.Logf("%s: tolerance %.3g is %.1f standard errors (%.3g) of the nominal %.3g, not asserted (needs n >= %.0f)",
				desc(), half, half/se, se, center, need)
			continue
		}
		if !f.OK || f.Value < f.Lo || f.Value > f.Hi {
			t.Errorf("%s: outside its bounds (nominal %.3g, standard error %.3g): OK %v", desc(), center, se, f.OK)
		} else {
			t.Logf("%s: within bounds, asserted (%.1f standard errors each side)", desc(), half/se)
		}
	}
}
