package load

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// Phase is a step of the build, in the order Build runs them.
type Phase int

const (
	PhaseCheck      Phase = iota // looking for an existing schema
	PhaseDrop                    // dropping the old schema (--drop)
	PhaseCreate                  // creating the tables
	PhaseLoad                    // generating and loading rows
	PhaseIndex                   // creating keys and indexes
	PhaseProcedures              // installing stored procedures
	PhaseAnalyze                 // refreshing planner statistics
	PhaseMeta                    // writing the metadata row
	PhaseDone                    // finished
	numPhases
)

var phaseNames = [numPhases]string{"check", "drop", "create", "load", "index", "procedures", "analyze", "meta", "done"}

func (p Phase) String() string {
	if p < 0 || p >= numPhases {
		return "unknown"
	}
	return phaseNames[p]
}

// Progress is one report of a running build.
type Progress struct {
	Phase Phase
	// Rows is the number of rows handed to the loaders so far.
	Rows int64
	// ExpectedRows is the number of rows the build will load (ORDER_LINE
	// counted at its mean of 10 lines per order, so Rows may end slightly
	// above or below it).
	ExpectedRows int64
	// Elapsed is the time since Build started.
	Elapsed time.Duration
	// RowsPerSec is the mean load rate since the load phase started.
	RowsPerSec float64
	// ETA is the estimated time left in the load phase at that rate; 0
	// when unknown or outside the load phase.
	ETA time.Duration
}

// ExpectedRows is the number of rows a build of warehouses loads: ITEM plus
// every per-warehouse table (ORDER_LINE at its mean).
func ExpectedRows(warehouses int) int64 {
	n := int64(tpcc.ItemCount)
	for _, t := range tpcc.Tables {
		n += int64(warehouses) * int64(tpcc.RowsPerWarehouse(t))
	}
	return n
}

// progressInterval is how often the reporter calls the progress callback.
const progressInterval = 500 * time.Millisecond

// reporter owns the counters the workers update and the goroutine that
// turns them into Progress calls. The callback is never called
// concurrently with itself.
type reporter struct {
	fn       func(Progress)
	start    time.Time
	expected int64

	rows      atomic.Int64
	phase     atomic.Int32
	loadStart atomic.Int64 // nanoseconds since start at which PhaseLoad began; -1 before

	mu   sync.Mutex // serialises fn
	stop chan struct{}
	done chan struct{}
}

func newReporter(fn func(Progress), start time.Time, expected int64) *reporter {
	r := &reporter{fn: fn, start: start, expected: expected, stop: make(chan struct{}), done: make(chan struct{})}
	r.loadStart.Store(-1)
	if fn == nil {
		close(r.done)
		return r
	}
	go r.loop()
	return r
}

func (r *reporter) loop() {
	defer close(r.done)
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.report()
		}
	}
}

// setPhase records a phase change and reports it at once.
func (r *reporter) setPhase(p Phase) {
	if p == PhaseLoad {
		r.loadStart.Store(int64(time.Since(r.start)))
	}
	r.phase.Store(int32(p))
	r.report()
}

func (r *reporter) addRows(n int64) { r.rows.Add(n) }

func (r *reporter) snapshot() Progress {
	elapsed := time.Since(r.start)
	p := Progress{
		Phase:        Phase(r.phase.Load()),
		Rows:         r.rows.Load(),
		ExpectedRows: r.expected,
		Elapsed:      elapsed,
	}
	if ls := r.loadStart.Load(); ls >= 0 {
		if d := elapsed - time.Duration(ls); d > 0 && p.Rows > 0 {
			p.RowsPerSec = float64(p.Rows) / d.Seconds()
			if p.Phase == PhaseLoad && p.Rows < p.ExpectedRows {
				p.ETA = time.Duration(float64(p.ExpectedRows-p.Rows) / p.RowsPerSec * float64(time.Second))
			}
		}
	}
	return p
}

func (r *reporter) report() {
	if r.fn == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fn(r.snapshot())
}

// close stops the ticker goroutine and waits for it.
func (r *reporter) close() {
	if r.fn == nil {
		return
	}
	close(r.stop)
	<-r.done
}
