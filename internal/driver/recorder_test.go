package driver_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// tally is a Recorder that counts what it is told.
type tally struct {
	mu       sync.Mutex
	phases   []driver.Phase
	vus      []int
	measured [tpcc.NumTxKinds][driver.NumOutcomes]int64
	all      int64
}

func (r *tally) Phase(p driver.Phase, vus int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phases = append(r.phases, p)
	r.vus = append(r.vus, vus)
}

func (r *tally) Transaction(t driver.Transaction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all++
	if t.Measured {
		r.measured[t.Kind][t.Outcome]++
	}
}

// TestRecorder: a Recorder sees the phases in timeline order and, among
// every transaction, exactly the measured ones the result counts.
func TestRecorder(t *testing.T) {
	testenv.Require(t, testenv.Long)
	db, meta := builtSQLite(t)
	rec := &tally{}
	o := shortRun()
	o.Recorder = rec
	res, err := driver.Run(context.Background(), db, meta, o, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []driver.Phase{driver.PhaseRampup, driver.PhaseMeasure, driver.PhaseGrace, driver.PhaseDone}
	if !slices.Equal(rec.phases, want) {
		t.Errorf("phases: got %v, want %v", rec.phases, want)
	}
	for _, v := range rec.vus {
		if v != o.VUs {
			t.Errorf("virtual users with a phase: got %d, want %d", v, o.VUs)
		}
	}
	var measured int64
	for k, kr := range res.Kinds {
		got := rec.measured[k]
		if got[driver.OutcomeCommitted]+got[driver.OutcomeRolledBack] != kr.Completed || got[driver.OutcomeRolledBack] != kr.RolledBack {
			t.Errorf("%s: recorder saw %d committed + %d rolled back measured, result has %d completed (%d rolled back)",
				kr.Kind, got[driver.OutcomeCommitted], got[driver.OutcomeRolledBack], kr.Completed, kr.RolledBack)
		}
		var failed int64
		for _, n := range kr.Failed {
			failed += n
		}
		if got[driver.OutcomeFailed] != failed {
			t.Errorf("%s: recorder saw %d failed, result has %d", kr.Kind, got[driver.OutcomeFailed], failed)
		}
		measured += got[driver.OutcomeCommitted] + got[driver.OutcomeRolledBack] + got[driver.OutcomeFailed]
	}
	if rec.all <= measured {
		t.Errorf("recorder saw %d transactions in all and %d measured: ramp-up's are missing", rec.all, measured)
	}
}
