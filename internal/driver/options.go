// Package driver owns a timed run of the TPC-C workload: the virtual users
// of the tproc-c mode (back to back, or at a fixed rate) and the terminals
// of the tpc-c mode (keying and think times, a session pool, deferred
// Delivery, tpmC); the ramp-up, measured and grace windows, alone or
// started with other runs (Barrier, StartAt); retries, reconnection and
// outages (outage.go); latency histograms and the per-second series; the
// database counters read at the window's edges and their cross-check
// against its own counts (crosscheck.go); its own CPU and scheduling lag,
// which show it is not the bottleneck.
//
// It sees databases only through internal/dialect and imports only dialect
// and tpcc.
package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Options are the parameters of one run.
type Options struct {
	// Mode chooses the pacing: ModeTPROCC (virtual users) or ModeTPCC
	// (terminals with keying and think times).
	Mode Mode
	// VUs is the number of virtual users of ModeTPROCC, each with its own
	// session.
	VUs int
	// Rate paces each virtual user of ModeTPROCC at this many transactions
	// per second on a fixed schedule, so that the offered load is VUs ×
	// Rate whatever the server does; a transaction's latency counts from
	// its scheduled start. 0: back to back.
	Rate float64
	// Terminals is the number of terminals of ModeTPCC; 0 means ten per
	// warehouse (TPC-C 4.2.2), the only count that conforms.
	Terminals int
	// Sessions is the size of the session pool that the terminals of
	// ModeTPCC share; a terminal holds a session only while its
	// transaction runs. 0: one per terminal, at most DefaultSessionsMax.
	Sessions int
	// DeliverySessions is the number of sessions that execute the
	// deferred Deliveries of ModeTPCC (TPC-C 2.7.2), beside the pool. 0:
	// one per DeliveryTerminalsPerSession terminals, at least one.
	DeliverySessions int
	// Rampup runs transactions without measuring them, so the measured
	// window starts on a warm cache.
	Rampup time.Duration
	// Duration is the measured window.
	Duration time.Duration
	// Grace is how long in-flight transactions may take to finish after
	// the measured window before they are canceled. Nothing that ends in
	// the grace period is measured; it exists so that sessions end cleanly.
	Grace time.Duration
	// Seed draws the run-time NURand constants and every virtual user's
	// random stream; recorded with the result so a run can be reproduced.
	Seed uint64
	// AllWarehouses spreads each virtual user over several warehouses, as
	// HammerDB's "use all warehouses": user i (from 0) drives the
	// warehouses w with (w-1) % VUs == i, one chosen uniformly per
	// transaction. With VUs >= warehouses it is the same as the default
	// (each user bound to its home warehouse).
	AllWarehouses bool
	// Style chooses stored procedures or client-side SQL.
	Style dialect.Style
	// MaxRetries bounds the retries of one transaction after a retryable
	// failure (serialization, deadlock, lock timeout).
	MaxRetries int
	// LiveEvery is the interval of the live callback.
	LiveEvery time.Duration
	// Shard, when active, makes this run one driver's part of a run
	// several drivers share (see Shard); VUs is then this shard's own
	// virtual users, from Shard.Split.
	Shard Shard
	// Recorder, when set, sees the run's phases and every transaction as
	// it ends (live metrics). It is not a parameter of the measurement and
	// is not stored.
	Recorder Recorder
	// Start, when set, synchronises this run with the others sharing it
	// (targets driven at once): the run opens its sessions, waits there
	// for all of them, and its ramp-up and measured window are timed from
	// the instant they are released (see Barrier). Not stored.
	Start *Barrier
	// StartAt, when not zero, is the wall-clock instant the ramp-up
	// begins, agreed by driver processes that share a run (shards: each
	// on its own host, `oltplab run --start-at`): the run opens its
	// sessions, waits until then, and measures from StartAt+Rampup to
	// StartAt+Rampup+Duration, instants taken from the clock. A run that
	// reaches it late ramps up less; one that reaches it after the
	// window's start measures from when it could (Merge records the
	// offset). Not stored with the options (the result's window is).
	StartAt time.Time
	// ReconnectFor is how long a virtual user that lost its connection
	// keeps trying to open a new one before the run ends (ErrServerGone).
	// Meanwhile the run goes on and the outage is recorded.
	ReconnectFor time.Duration
	// AnswerTimeout is how long a call of a virtual user's session may go
	// without the server's answer before its connection is taken for dead
	// (a server or network that went silent without closing it: a
	// firewall's dropped state, a frozen middlebox). The session is then
	// interrupted and reopened like a lost connection, and the outage is
	// recorded. 0: never. It also bounds each read of the window's
	// counters.
	AnswerTimeout time.Duration
	// MaxFailurePct is the share of the measured window's transactions,
	// in percent, that may fail before the run is not a success
	// (Result.TooManyFailures).
	MaxFailurePct float64
	// MaxStallPct is the share of the measured window, in percent, that
	// the run's stalls may cover before the run is one whose server failed
	// (Result.ServerFailure; DefaultMaxStallPct). 100 never fails a run
	// for its stalls; 0 fails it for any.
	MaxStallPct float64

	// MaxForeignCPUPct and MaxStealPct are the interference a run may
	// meet: foreign CPU (what neither the database server nor oltplab
	// used of the host's cores, or of the server's own CPUs when it is
	// confined) and steal, in percent of those cores over the window. The
	// driver does not measure them: the caller judges the run's CPU
	// account against them (Result.Contaminated) and they are stored with
	// the run's options (DefaultMaxForeignCPUPct, DefaultMaxStealPct);
	// 100 never contaminates a run.
	MaxForeignCPUPct float64
	MaxStealPct      float64

	// legacy: read from a result stored before MaxStallPct existed, whose
	// server failures were never judged (Recheck leaves them alone).
	legacy bool
}

// Defaults are HammerDB's timed-run defaults where it has them (2 minutes
// of ramp-up, 5 minutes measured), a 10 s grace (enough for a Delivery on
// a loaded server, short enough not to delay Ctrl-C much), 10 retries, a
// live line every 10 s, 5 minutes of reconnection (a crashed server's
// recovery, a failover), 2 minutes without an answer before a connection
// is taken for dead (far above any transaction's response time at
// oltplab's scales, TPC-C 5.2.5.4's 20 s for Stock-Level included, and
// below the kernel's own give-up after about 15 minutes of
// retransmissions) and at most 5% of failed transactions (a correct
// run at oltplab's scales fails well under 1%; wrong metadata or a
// misbehaving server fails far more).
func Defaults() Options {
	return Options{
		VUs:        4,
		Rampup:     2 * time.Minute,
		Duration:   5 * time.Minute,
		Grace:      10 * time.Second,
		Seed:       1,
		Style:      dialect.StyleProcedures,
		MaxRetries: 10,
		LiveEvery:  10 * time.Second,

		ReconnectFor:  5 * time.Minute,
		AnswerTimeout: 2 * time.Minute,
		MaxFailurePct: 5,
		MaxStallPct:   DefaultMaxStallPct,

		MaxForeignCPUPct: DefaultMaxForeignCPUPct,
		MaxStealPct:      DefaultMaxStealPct,
	}
}

// DefaultSessionsMax bounds the default session pool of ModeTPCC: a
// server rarely takes thousands of connections, and terminals that key
// and think hold none.
const DefaultSessionsMax = 64

// DeliveryTerminalsPerSession sizes the default deferred-Delivery
// sessions: 1,000 terminals queue about two Deliveries a second.
const DeliveryTerminalsPerSession = 1000

// MaxRate bounds the rate of one virtual user: one transaction every 10
// µs is faster than any database answers one session, and far higher
// rates round the interval between transactions down to nothing (an
// unpaced run, labelled paced).
const MaxRate = 100_000

// MaxSchedule bounds ramp-up plus measured window plus grace: longer is
// a typing mistake, and far longer would overflow the schedule's clock.
const MaxSchedule = 366 * 24 * time.Hour

// Validate checks the options.
func (o Options) Validate() error {
	var errs []error
	switch o.Mode {
	case ModeTPROCC:
		if o.VUs < 1 {
			errs = append(errs, fmt.Errorf("virtual users must be at least 1, got %d", o.VUs))
		}
		if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) || o.Rate > MaxRate {
			errs = append(errs, fmt.Errorf("rate must be a positive number of transactions per second, at most %d (or 0: none), got %v", MaxRate, o.Rate))
		}
		if o.Terminals != 0 || o.Sessions != 0 || o.DeliverySessions != 0 {
			errs = append(errs, errors.New("terminals, sessions and delivery sessions belong to the tpc-c mode"))
		}
	case ModeTPCC:
		if o.Terminals < 0 || o.Sessions < 0 || o.DeliverySessions < 0 {
			errs = append(errs, fmt.Errorf("terminals (%d), sessions (%d) and delivery sessions (%d) must not be negative",
				o.Terminals, o.Sessions, o.DeliverySessions))
		}
		if o.Rate != 0 {
			errs = append(errs, errors.New("a rate paces the tproc-c mode; tpc-c terminals are paced by keying and think times (TPC-C 5.2.5)"))
		}
		if o.AllWarehouses {
			errs = append(errs, errors.New("all-warehouses belongs to the tproc-c mode; a tpc-c terminal keeps its home warehouse (TPC-C 2.4.1.1)"))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown mode %d", int(o.Mode)))
	}
	if o.Rampup < 0 {
		errs = append(errs, fmt.Errorf("ramp-up must not be negative, got %s", o.Rampup))
	}
	if o.Duration < time.Second {
		errs = append(errs, fmt.Errorf("duration must be at least 1s, got %s", o.Duration))
	}
	if o.Grace < 0 {
		errs = append(errs, fmt.Errorf("grace must not be negative, got %s", o.Grace))
	}
	// Each bound first, so the sum below cannot overflow.
	if o.Rampup > MaxSchedule || o.Duration > MaxSchedule || o.Grace > MaxSchedule ||
		o.Rampup+o.Duration+o.Grace > MaxSchedule {
		errs = append(errs, fmt.Errorf("ramp-up, duration and grace add up to more than %s", MaxSchedule))
	}
	if o.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("max retries must not be negative, got %d", o.MaxRetries))
	}
	if o.AnswerTimeout < 0 || o.AnswerTimeout > MaxSchedule {
		errs = append(errs, fmt.Errorf("answer-timeout must be between 0 and %s, got %s", MaxSchedule, o.AnswerTimeout))
	}
	if o.ReconnectFor < 0 || o.ReconnectFor > MaxSchedule {
		errs = append(errs, fmt.Errorf("reconnect-for must be between 0 and %s, got %s", MaxSchedule, o.ReconnectFor))
	}
	if !(o.MaxFailurePct >= 0 && o.MaxFailurePct <= 100) { // NaN too
		errs = append(errs, fmt.Errorf("max failure rate must be a percentage from 0 to 100, got %g", o.MaxFailurePct))
	}
	if !(o.MaxStallPct >= 0 && o.MaxStallPct <= 100) { // NaN too
		errs = append(errs, fmt.Errorf("max stall must be a percentage of the window from 0 to 100, got %g", o.MaxStallPct))
	}
	if !(o.MaxForeignCPUPct >= 0 && o.MaxForeignCPUPct <= 100) || !(o.MaxStealPct >= 0 && o.MaxStealPct <= 100) {
		errs = append(errs, fmt.Errorf("max foreign CPU and max steal must be percentages from 0 to 100, got %g and %g", o.MaxForeignCPUPct, o.MaxStealPct))
	}
	if o.LiveEvery <= 0 {
		errs = append(errs, fmt.Errorf("live interval must be positive, got %s", o.LiveEvery))
	}
	if sh := o.Shard; sh.Active() && (sh.Index < 0 || sh.Index >= sh.Count || sh.FirstWarehouse < 1 || sh.LastWarehouse < sh.FirstWarehouse) {
		errs = append(errs, fmt.Errorf("shard %s was not split over the step (Shard.Split)", sh))
	}
	if o.Style != dialect.StyleProcedures && o.Style != dialect.StyleClientSQL {
		errs = append(errs, fmt.Errorf("unknown execution style %d", o.Style))
	}
	return errors.Join(errs...)
}

// ForWarehouses returns o with the defaults that depend on the database
// filled in: ten terminals per warehouse, the session pool and the
// deferred-Delivery sessions (ModeTPCC only, which has no virtual users;
// a pool larger than the terminals is cut to them).
func (o Options) ForWarehouses(warehouses int) Options {
	if o.Mode != ModeTPCC {
		return o
	}
	o.VUs = 0
	if o.Terminals == 0 {
		o.Terminals = tpcc.TerminalsPerWarehouse * warehouses
	}
	if o.Sessions == 0 {
		o.Sessions = DefaultSessionsMax
	}
	o.Sessions = min(o.Sessions, o.Terminals)
	if o.DeliverySessions == 0 {
		o.DeliverySessions = max(1, (o.Terminals+DeliveryTerminalsPerSession-1)/DeliveryTerminalsPerSession)
	}
	return o
}

// Users is the number of emulated users of a run: virtual users
// (ModeTPROCC) or terminals (ModeTPCC).
func (o Options) Users() int {
	if o.Mode == ModeTPCC {
		return o.Terminals
	}
	return o.VUs
}

// Paced reports whether transactions have scheduled starts (a rate or
// the terminals' keying and think times), from which latency counts.
func (o Options) Paced() bool { return o.Mode == ModeTPCC || o.Rate > 0 }

// ModeLabel says in words how the run paced its users; every figure of
// the run carries it.
func (o Options) ModeLabel() string {
	switch {
	case o.Mode == ModeTPCC:
		return "tpc-c (keying and think times, deferred Delivery)"
	case o.Rate > 0:
		return fmt.Sprintf("tproc-c (paced at %g transactions/s per virtual user, no keying or think time)", o.Rate)
	}
	return "tproc-c (no keying or think time)"
}

// optionsJSON is the stored form of Options: durations in seconds, the
// style by name.
type optionsJSON struct {
	Mode             Mode    `json:"mode"`
	VUs              int     `json:"vus"`
	RatePerVU        float64 `json:"rate_per_vu,omitempty"`
	Terminals        int     `json:"terminals,omitempty"`
	Sessions         int     `json:"sessions,omitempty"`
	DeliverySessions int     `json:"delivery_sessions,omitempty"`
	RampupSeconds    float64 `json:"rampup_seconds"`
	DurationSeconds  float64 `json:"duration_seconds"`
	GraceSeconds     float64 `json:"grace_seconds"`
	Seed             uint64  `json:"seed"`
	AllWarehouses    bool    `json:"all_warehouses"`
	Style            string  `json:"style"`
	MaxRetries       int     `json:"max_retries"`
	LiveEverySecs    float64 `json:"live_every_seconds"`
	Shard            *Shard  `json:"shard,omitempty"`
	ReconnectSecs    float64 `json:"reconnect_for_seconds,omitempty"`
	AnswerSecs       float64 `json:"answer_timeout_seconds,omitempty"`
	MaxFailurePct    float64 `json:"max_failure_pct,omitempty"`
	// MaxStallPct is absent from results stored before it existed.
	MaxStallPct      *float64 `json:"max_stall_pct,omitempty"`
	MaxForeignCPUPct float64  `json:"max_foreign_cpu_pct,omitempty"`
	MaxStealPct      float64  `json:"max_steal_pct,omitempty"`
}

// MarshalJSON writes durations in seconds and the style by name.
func (o Options) MarshalJSON() ([]byte, error) {
	var shard *Shard
	if o.Shard.Active() {
		shard = &o.Shard
	}
	var stall *float64
	if !o.legacy { // a result stored before the rule is written as it was read
		stall = &o.MaxStallPct
	}
	return json.Marshal(optionsJSON{
		Shard:            shard,
		Mode:             o.Mode,
		VUs:              o.VUs,
		RatePerVU:        o.Rate,
		Terminals:        o.Terminals,
		Sessions:         o.Sessions,
		DeliverySessions: o.DeliverySessions,
		RampupSeconds:    o.Rampup.Seconds(),
		DurationSeconds:  o.Duration.Seconds(),
		GraceSeconds:     o.Grace.Seconds(),
		Seed:             o.Seed,
		AllWarehouses:    o.AllWarehouses,
		Style:            o.Style.String(),
		MaxRetries:       o.MaxRetries,
		LiveEverySecs:    o.LiveEvery.Seconds(),
		ReconnectSecs:    o.ReconnectFor.Seconds(),
		AnswerSecs:       o.AnswerTimeout.Seconds(),
		MaxFailurePct:    o.MaxFailurePct,
		MaxStallPct:      stall,
		MaxForeignCPUPct: o.MaxForeignCPUPct,
		MaxStealPct:      o.MaxStealPct,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *Options) UnmarshalJSON(b []byte) error {
	// Results stored before modes existed have none: tproc-c.
	j := optionsJSON{Mode: ModeTPROCC}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	secs := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	*o = Options{
		Mode:             j.Mode,
		Rate:             j.RatePerVU,
		Terminals:        j.Terminals,
		Sessions:         j.Sessions,
		DeliverySessions: j.DeliverySessions,
		VUs:              j.VUs,
		Rampup:           secs(j.RampupSeconds),
		Duration:         secs(j.DurationSeconds),
		Grace:            secs(j.GraceSeconds),
		Seed:             j.Seed,
		AllWarehouses:    j.AllWarehouses,
		MaxRetries:       j.MaxRetries,
		LiveEvery:        secs(j.LiveEverySecs),
		ReconnectFor:     secs(j.ReconnectSecs),
		AnswerTimeout:    secs(j.AnswerSecs),
		MaxFailurePct:    j.MaxFailurePct,
		MaxStallPct:      noStallLimit,
		MaxForeignCPUPct: j.MaxForeignCPUPct,
		MaxStealPct:      j.MaxStealPct,
		legacy:           j.MaxStallPct == nil,
	}
	if j.MaxStallPct != nil {
		o.MaxStallPct = *j.MaxStallPct
	}
	if j.Shard != nil {
		o.Shard = *j.Shard
	}
	switch j.Style {
	case dialect.StyleProcedures.String(), "":
		o.Style = dialect.StyleProcedures
	case dialect.StyleClientSQL.String():
		o.Style = dialect.StyleClientSQL
	default:
		return fmt.Errorf("unknown execution style %q", j.Style)
	}
	return nil
}
