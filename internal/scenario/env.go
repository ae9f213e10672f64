package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Env is what every scenario shares: the results store it records into, a
// logger, the scrubber every stored error text passes through, the tool's
// version, and the observer that sees progress.
type Env struct {
	Store       *store.Store
	Log         *slog.Logger
	Scrub       func(string) string // removes secrets; nil keeps text as is
	ToolVersion string
	Observer    Observer
	// Experiment, when set, ties every run and profile recorded through
	// this Env to one (target, step) of an experiment, and is part of
	// their context.
	Experiment *ExperimentContext
	// Instance, when set, describes the managed instance being measured
	// (everything it was given, the device and file system under its
	// directories): it is recorded in the context of every result.
	Instance any
	// Managed, when set, is the managed instance being measured: a run
	// on it fails when its server exits, and its CPU time and CPUs go
	// into every run's CPU account (who used the CPU).
	Managed ManagedServer
	// OwnIO, when set, reads the I/O of the database's own processes (a
	// managed instance's cgroup counters): sampled with the host, so that
	// a shared device's I/O can be told from the database's.
	OwnIO sampler.IOProbe
	// Layer, when set, is the managed instance's latency layer: its
	// figures over each measured window (the I/O as the instance saw it)
	// are stored with the window's monitor (summary.Monitor.LatencyLayer).
	Layer LatencyLayer
	// IsLocalAddress tells whether an address is this machine's (see
	// Place); nil tests loopback and the interfaces' addresses.
	IsLocalAddress func(net.IP) bool
	// FreeBytes reads the free space of a directory's file system; nil is
	// sysstat.FreeBytes.
	FreeBytes func(dir string) (int64, error)
	// MemAvailable reads the memory this host has available (CheckCapacity);
	// nil is /proc/meminfo's MemAvailable.
	MemAvailable func() (int64, error)
	// Agent is the `oltplab agent` on the database's host (its
	// HOST:PORT, pinned fingerprint and token): measurements then record
	// that host's metrics too.
	Agent agent.Client
	// Hosts, in a plan that spans machines, is where the database and the
	// driver run: recorded in every run's placement, the database then
	// never this machine's.
	Hosts *Hosts
	// MeasureRTT, when set, measures the round trip between the driver's
	// host and the database's at the start of every run.
	MeasureRTT func(ctx context.Context) (time.Duration, error)
	// Drive, when set, runs the driver instead of driver.Run here: on
	// another host's agent (a load generator's placement). It gets the
	// options as stored; Recorder and Start stay here; live, when not
	// nil, is given the remote driver's live reports as they arrive.
	Drive func(ctx context.Context, meta tpcc.Meta, d driver.Options, live func(driver.Live)) (*driver.Result, error)
	// Lost, when set, is closed when the database is known gone with its
	// host (a plan's target whose agent stopped answering): a run then
	// ends at once, failed, saying LostWhy.
	Lost    <-chan struct{}
	LostWhy func() string
	// StoreWait is how long a finished measurement waits for a results
	// store another process holds locked before it is left in a file for
	// `oltplab results import`; 0 is store.DefaultMaxWait.
	StoreWait time.Duration
	// NoCrossCheck leaves out the cross-check of the database's figures
	// against the driver's own counts: a run is stored without it, never
	// suspect. For tests that are not about the check, whose short windows
	// on shared test servers must not depend on it; no command sets it.
	NoCrossCheck bool
}

// complete stores what a measurement left behind without ever losing it
// (store.CompleteDurably): a busy store is retried, saying so through the
// observer's notes, for up to StoreWait, and a store that cannot take it
// leaves it in a file whose path the error gives with the command that
// loads it. Callers let the user see the result before calling it.
func (e *Env) complete(ctx context.Context, id int64, o store.Outcome) error {
	wait := e.StoreWait
	if wait <= 0 {
		wait = store.DefaultMaxWait
	}
	err := e.Store.CompleteDurably(context.WithoutCancel(ctx), id, o, store.Durability{
		MaxWait: wait,
		// SQLite's own wait for the lock within one attempt: short, so the
		// user hears of a locked store within seconds.
		AttemptWait: min(max(wait/10, 50*time.Millisecond), 2*time.Second),
		Notify:      func(msg string) { e.note("oltplab: %s", msg) },
	})
	if err == nil {
		return nil
	}
	var saved *store.SavedError
	if errors.As(err, &saved) {
		return &StoreError{Op: fmt.Sprintf("store run %d", id), Err: err}
	}
	return storeErr(fmt.Sprintf("record the result of run %d", id), err)
}

// ExperimentContext places a measurement in an experiment.
type ExperimentContext struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Target string `json:"target"`
	// Seq is the (target, step)'s position in the experiment's schedule;
	// Step the step's kind.
	Seq  int    `json:"seq"`
	Step string `json:"step"`
}

// ForTarget is e for one target of a step over several: what it records
// names the target in its experiment context and carries the target's
// managed instance and own I/O; its notes start with the target's name.
func (e *Env) ForTarget(name string, instance any, ownIO sampler.IOProbe) *Env {
	te := *e
	te.Instance, te.OwnIO = instance, ownIO
	if e.Experiment != nil {
		x := *e.Experiment
		x.Target = name
		te.Experiment = &x
	}
	if note := e.Observer.Note; note != nil {
		te.Observer.Note = func(msg string) { note(name + ": " + msg) }
	}
	return &te
}

// link returns the experiment id and schedule position to store with a
// run or profile (zeros outside an experiment).
func (e *Env) link() (int64, int) {
	if e.Experiment == nil {
		return 0, 0
	}
	return e.Experiment.ID, e.Experiment.Seq
}

func (e *Env) scrub(s string) string {
	if e.Scrub == nil {
		return s
	}
	return e.Scrub(s)
}

func (e *Env) logger() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// Observer is told what happens while a scenario works. Every field is
// optional.
type Observer struct {
	// Note is a line of progress for the user ("step 2/6: 4 virtual users").
	Note func(msg string)
	// BuildProgress reports a running build.
	BuildProgress func(load.Progress)
	// Live reports the rates of a running run every driver.Options.LiveEvery.
	Live func(driver.Live)
	// Recorder, when set, sees every timed run's phases and transactions
	// as they happen (live metrics, driver.Recorder).
	Recorder driver.Recorder
	// RunMeasured is called once a timed run is measured, before it is
	// stored; RunStored once it is stored.
	RunMeasured func(RunStored)
	RunStored   func(RunStored)
}

func (e *Env) note(format string, args ...any) {
	if e.Observer.Note != nil {
		e.Observer.Note(fmt.Sprintf(format, args...))
	}
}

// RunStored is one timed run, measured and recorded.
type RunStored struct {
	// Target names the run's target when several run at once (a
	// parallel window); empty otherwise.
	Target    string
	ID        int64
	ProfileID int64
	Status    store.Status
	Result    *driver.Result
	Monitor   *summary.Monitor
	StorePath string
}

// StoreError is a failure to record in the results store: the measurement
// may be fine, the store is not. It is the store's own OpError, under the
// name the scenarios' callers know.
type StoreError = store.OpError

func storeErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return &StoreError{Op: op, Err: err}
}

// RunError is a timed run that could not go on (a connection that did not
// come back, counters that could not be read). What was measured is
// stored as RunID with Status.
type RunError struct {
	RunID  int64
	Status store.Status
	Err    error
}

func (e *RunError) Error() string {
	return fmt.Sprintf("run: %v (what was measured is stored as run %d, marked %s)", e.Err, e.RunID, e.Status)
}
func (e *RunError) Unwrap() error { return e.Err }

// SuspectError is a profile whose every run was measured and stored, but
// some of whose figures cannot be trusted: the database's counters
// disagreed with the driver's own counts (driver.Result.CheckCounters).
// Those runs are stored with status suspect and their reasons.
type SuspectError struct {
	Runs  []SuspectRun
	Total int // runs of the profile
}

// SuspectRun is one suspect run and why.
type SuspectRun struct {
	RunID   int64
	VUs     int
	Reasons []string
}

func (e *SuspectError) Error() string {
	if len(e.Runs) == 0 {
		return "no suspect run"
	}
	r := e.Runs[0]
	msg := fmt.Sprintf("%d of %d run(s) suspect, stored marked suspect and left out of peaks and verdicts: run %d (%d VUs): %s",
		len(e.Runs), e.Total, r.RunID, r.VUs, strings.Join(r.Reasons, "; "))
	if len(e.Runs) > 1 {
		msg += fmt.Sprintf(" (and %d more; see `oltplab results list`)", len(e.Runs)-1)
	}
	return msg
}

// FailuresError is a profile some of whose runs were measured to their
// end and stored, but with more failed transactions than
// driver.Options.MaxFailurePct allows: stored with status failures, not
// a success.
type FailuresError struct {
	Runs  []SuspectRun // Reasons holds driver.Result.TooManyFailures
	Total int          // runs of the profile
}

func (e *FailuresError) Error() string {
	if len(e.Runs) == 0 {
		return "no run with too many failures"
	}
	r := e.Runs[0]
	msg := fmt.Sprintf("%d of %d run(s) failed too often, stored with status failures and left out of peaks and verdicts: run %d (%d VUs): %s",
		len(e.Runs), e.Total, r.RunID, r.VUs, strings.Join(r.Reasons, "; "))
	if len(e.Runs) > 1 {
		msg += fmt.Sprintf(" (and %d more; see `oltplab results list`)", len(e.Runs)-1)
	}
	return msg
}

// ServerFailedError is a run whose server failed under it (an outage
// still open when its window ended, stalls beyond the allowed share of
// the window, a managed server that exited: driver.Result.ServerFailure):
// what it measured is stored with status failed and left out of peaks,
// ratios and cost, and the profile stopped there.
type ServerFailedError struct {
	Run SuspectRun // Reasons holds driver.Result.ServerFailure
}

func (e *ServerFailedError) Error() string {
	return fmt.Sprintf("the server failed during run %d (%d VUs): %s; what it measured is stored with status failed and left out of peaks and verdicts",
		e.Run.RunID, e.Run.VUs, strings.Join(e.Run.Reasons, "; "))
}

// ContaminatedError is a profile whose every run was measured and
// stored, but some while other processes (or other machines, steal) took
// more of the CPU than allowed (driver.Result.Contaminated): those runs
// are stored with status contaminated and their figures.
type ContaminatedError struct {
	Runs  []SuspectRun
	Total int // runs of the profile
}

func (e *ContaminatedError) Error() string {
	if len(e.Runs) == 0 {
		return "no contaminated run"
	}
	r := e.Runs[0]
	msg := fmt.Sprintf("%d of %d run(s) contaminated, stored marked contaminated and left out of peaks and verdicts (--include-contaminated counts them): run %d (%d VUs): %s",
		len(e.Runs), e.Total, r.RunID, r.VUs, strings.Join(r.Reasons, "; "))
	if len(e.Runs) > 1 {
		msg += fmt.Sprintf(" (and %d more; see `oltplab results list`)", len(e.Runs)-1)
	}
	return msg
}

// SpaceError is a copy a scenario must make that the free space cannot
// hold; nothing was copied.
type SpaceError struct {
	What       string // "the baseline copy --reset-between keeps"
	Need, Free int64  // bytes
	Where      string // the directory whose file system was checked
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("not enough free space for %s: it needs %s with headroom, %s are free in %s",
		e.What, formatBytes(e.Need), formatBytes(e.Free), e.Where)
}

// UnsupportedError is a requested ability the target's dialect lacks
// (e.g. a checkpoint before each step on a dialect that cannot checkpoint).
type UnsupportedError struct {
	What    string // "checkpoint before each step"
	Dialect string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("the %s dialect cannot %s", e.Dialect, e.What)
}

var (
	// ErrInvalidOptions: options a scenario cannot run with (bad input).
	ErrInvalidOptions = errors.New("invalid options")
	// ErrNoSchema: the target holds no oltplab TPC-C schema.
	ErrNoSchema = errors.New("no oltplab TPC-C schema")
	// ErrNotPostBuild: --reset-between needs the database as it was built.
	ErrNotPostBuild = errors.New("the database is not in its post-build state")
	// ErrIncompleteSchema: the schema metadata is present but incomplete.
	ErrIncompleteSchema = errors.New("schema metadata is incomplete")
)

// JSON marshals v for a stored column; a value that cannot be marshalled
// is stored as an error object rather than lost silently.
func JSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("{%q:%q}", "error", err.Error()))
	}
	return b
}

// watchLost returns the context a run measures in: ended at once when
// the database is known gone with its host (Lost). lost stops watching
// and says why the run was cut short ("" when it was not).
func (e *Env) watchLost(ctx context.Context) (context.Context, func() string) {
	if e.Lost == nil {
		return ctx, func() string { return "" }
	}
	runCtx, cancel := context.WithCancel(ctx)
	var why string
	stopped := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-e.Lost:
			if e.LostWhy != nil {
				why = e.LostWhy()
			}
			if why == "" {
				why = "the database's host was lost"
			}
			cancel()
		case <-stopped:
		}
	}()
	return runCtx, func() string {
		close(stopped)
		<-done
		cancel()
		return why
	}
}
