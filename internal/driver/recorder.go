package driver

import (
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Recorder sees a run as it goes: its phases and every transaction that
// ends, measured or not. Live metrics come from it (internal/metrics); the
// stored result does not depend on it.
type Recorder interface {
	// Phase is called from the schedule's goroutine as the run enters a
	// phase: PhaseRampup when it starts (with its virtual users),
	// PhaseMeasure, PhaseGrace and PhaseDone.
	Phase(p Phase, vus int)
	// Transaction is called by every virtual user's goroutine as each of
	// its transactions ends: it must be safe for concurrent use, and
	// cheap, since it is on the hot path.
	Transaction(t Transaction)
}

// Outcome is how a transaction ended, after its retries.
type Outcome int

const (
	OutcomeCommitted  Outcome = iota
	OutcomeRolledBack         // a New-Order rolled back as its input asked (TPC-C 2.4.2.3)
	OutcomeFailed
	// OutcomeQueued: a tpc-c Delivery queued for deferred execution
	// (TPC-C 2.7.2), complete for its terminal; its execution ends later
	// as a transaction of its own.
	OutcomeQueued
	NumOutcomes
)

var outcomeNames = [NumOutcomes]string{"committed", "rolled_back", "failed", "queued"}

func (o Outcome) String() string {
	if o < 0 || o >= NumOutcomes {
		return "unknown"
	}
	return outcomeNames[o]
}

// Transaction is one ended transaction, as a Recorder sees it.
type Transaction struct {
	Kind    tpcc.TxKind
	Outcome Outcome
	Class   dialect.ErrClass // the failure's class (OutcomeFailed)
	Retries int              // retries after retryable failures before the end
	// Latency is the response time: from the intended start (the
	// schedule's, in paced modes) to the end, retries included.
	Latency time.Duration
	// Measured: it ended inside the measured window and counts in the
	// stored result.
	Measured bool
}

// notifyPhase tells r, when set, that the run entered p.
func notifyPhase(r Recorder, p Phase, vus int) {
	if r != nil {
		r.Phase(p, vus)
	}
}

// ProcessCPUSeconds is the CPU time (user plus system) this process has
// used: the driver's own cost, and with an embedded database the
// database's work too.
func ProcessCPUSeconds() float64 { return processCPUSeconds() }
