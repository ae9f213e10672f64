package dialect

import (
	"context"
	"fmt"
)

// WaitClass is what a database session is doing at one instant, in classes
// common to every engine (the ASH / "DB time" view): on CPU, or waiting for
// data I/O, log/commit I/O, a lock, a latch, the client, or something else.
// The set is closed; dialects map their own wait events onto it as data.
type WaitClass int

const (
	// WaitOther is any wait that fits no other class (IPC, timeouts,
	// extensions, buffer pins, unknown events).
	WaitOther WaitClass = iota
	// WaitCPU: the session is running (active, not waiting on an event).
	WaitCPU
	// WaitDataIO: reading or writing data files.
	WaitDataIO
	// WaitLogIO: writing or syncing the transaction log (commit latency).
	WaitLogIO
	// WaitLock: a heavyweight lock held by another transaction (row, table).
	WaitLock
	// WaitLatch: a short-term internal lock (PostgreSQL LWLock, InnoDB mutex/rwlock).
	WaitLatch
	// WaitClient: waiting on the network or for the client inside a
	// statement or an open transaction.
	WaitClient
	// WaitIdle: the session has no statement in progress and waits for the
	// client's next one. It is not database time and is reported apart.
	WaitIdle

	numWaitClasses
)

var waitClassNames = [numWaitClasses]string{
	WaitOther: "other", WaitCPU: "cpu", WaitDataIO: "data_io", WaitLogIO: "log_io",
	WaitLock: "lock", WaitLatch: "latch", WaitClient: "client", WaitIdle: "idle",
}

// WaitClasses lists every class, in declaration order.
func WaitClasses() []WaitClass {
	out := make([]WaitClass, numWaitClasses)
	for i := range out {
		out[i] = WaitClass(i)
	}
	return out
}

func (c WaitClass) String() string {
	if c < 0 || c >= numWaitClasses {
		return fmt.Sprintf("WaitClass(%d)", int(c))
	}
	return waitClassNames[c]
}

// MarshalText writes the class name ("lock", "log_io", ...).
func (c WaitClass) MarshalText() ([]byte, error) {
	if c < 0 || c >= numWaitClasses {
		return nil, fmt.Errorf("unknown wait class %d", int(c))
	}
	return []byte(waitClassNames[c]), nil
}

// UnmarshalText reads a class name written by MarshalText.
func (c *WaitClass) UnmarshalText(b []byte) error {
	for i, n := range waitClassNames {
		if string(b) == n {
			*c = WaitClass(i)
			return nil
		}
	}
	return fmt.Errorf("unknown wait class %q", b)
}

// WaitSample is one session's state at the instant SampleWaits ran.
type WaitSample struct {
	Session int64     // server-side session id (PostgreSQL pid, MySQL connection id)
	Class   WaitClass // the common class
	// Event is the engine's own name for what the session waits on,
	// "type:event" where the engine has both (PostgreSQL "LWLock:WALWrite",
	// MariaDB performance_schema "wait/io/file/innodb/innodb_log_file"),
	// empty when on CPU or unknown.
	Event string
}

// AvgWait names two cumulative counters of a WaitProbe whose deltas give
// an average wait time: Σ Δ TimeCounter / Σ Δ CountCounter, in
// milliseconds per event (PostgreSQL "ms per WAL sync", MariaDB "ms per
// row lock wait").
type AvgWait struct {
	Label        string // e.g. "wal_sync", "row_lock_wait"
	TimeCounter  string // key in DBCounters, cumulative milliseconds
	CountCounter string // key in DBCounters, cumulative count of events
}

// WaitSampler is implemented by a Database that can report what its
// sessions wait on. OpenWaitProbe opens the probe's own connection, which
// is not a benchmark session and is left out of every sample.
type WaitSampler interface {
	OpenWaitProbe(ctx context.Context) (WaitProbe, error)
}

// WaitProbe samples waits and engine counters on one connection of its
// own. Its queries are cheap and read catalog views only, so sampling
// several times a second does not disturb a run. One goroutine owns it.
type WaitProbe interface {
	// SampleWaits returns, for every other session connected to the target
	// database, its wait class at this instant. Idle sessions are included
	// with WaitIdle.
	SampleWaits(ctx context.Context) ([]WaitSample, error)
	// DBCounters returns the engine's cumulative counters (names with units
	// where they have one, e.g. "wal_sync_time_ms"); callers take deltas.
	DBCounters(ctx context.Context) (map[string]float64, error)
	// AvgWaits says which counter pairs give an average wait time.
	AvgWaits() []AvgWait
	// WaitSource says where SampleWaits looks and what it cannot see, for
	// reports (e.g. "information_schema.PROCESSLIST (performance_schema off:
	// no wait events, active sessions count as CPU)").
	WaitSource() string
	Close() error
}
