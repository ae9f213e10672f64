// Package driver owns a timed run of the TPC-C workload: the virtual users
// (one session, one terminal and one random stream each), their pacing
// (none: TPROC-C mode, as HammerDB), the ramp-up, measured and grace
// windows, retries of serialization and deadlock failures, reconnection
// and the outages it rides through (outage.go), per-kind HDR latency
// histograms, the per-second series of the measured window, the database
// counters read at the window's edges (NOPM, TPM), their fallback to its
// own counts when the server restarted, and their cross-check against its
// own counts (crosscheck.go), and the driver's own CPU and scheduling lag,
// which show it is not the bottleneck.
//
// It must not import internal/cli, internal/store, internal/load or any
// dialect package (internal/dialect/...): it sees a database only through
// the dialect interfaces.
package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

// Options are the parameters of one run.
type Options struct {
	// VUs is the number of virtual users, each with its own session.
	VUs int
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
	// ReconnectFor is how long a virtual user that lost its connection
	// keeps trying to open a new one before the run ends (ErrServerGone).
	// Meanwhile the run goes on and the outage is recorded.
	ReconnectFor time.Duration
	// MaxFailurePct is the share of the measured window's transactions,
	// in percent, that may fail before the run is not a success
	// (Result.TooManyFailures).
	MaxFailurePct float64
}

// Defaults are HammerDB's timed-run defaults where it has them (2 minutes
// of ramp-up, 5 minutes measured), a 10 s grace (enough for a Delivery on
// a loaded server, short enough not to delay Ctrl-C much), 10 retries, a
// live line every 10 s, 5 minutes of reconnection (a crashed server's
// recovery, a failover) and at most 5% of failed transactions (a correct
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
		MaxFailurePct: 5,
	}
}

// MaxSchedule bounds ramp-up plus measured window plus grace: longer is
// a typing mistake, and far longer would overflow the schedule's clock.
const MaxSchedule = 366 * 24 * time.Hour

// Validate checks the options.
func (o Options) Validate() error {
	var errs []error
	if o.VUs < 1 {
		errs = append(errs, fmt.Errorf("virtual users must be at least 1, got %d", o.VUs))
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
	if o.ReconnectFor < 0 || o.ReconnectFor > MaxSchedule {
		errs = append(errs, fmt.Errorf("reconnect-for must be between 0 and %s, got %s", MaxSchedule, o.ReconnectFor))
	}
	if !(o.MaxFailurePct >= 0 && o.MaxFailurePct <= 100) { // NaN too
		errs = append(errs, fmt.Errorf("max failure rate must be a percentage from 0 to 100, got %g", o.MaxFailurePct))
	}
	if o.LiveEvery <= 0 {
		errs = append(errs, fmt.Errorf("live interval must be positive, got %s", o.LiveEvery))
	}
	if o.Style != dialect.StyleProcedures && o.Style != dialect.StyleClientSQL {
		errs = append(errs, fmt.Errorf("unknown execution style %d", o.Style))
	}
	return errors.Join(errs...)
}

// optionsJSON is the stored form of Options: durations in seconds, the
// style by name.
type optionsJSON struct {
	VUs             int     `json:"vus"`
	RampupSeconds   float64 `json:"rampup_seconds"`
	DurationSeconds float64 `json:"duration_seconds"`
	GraceSeconds    float64 `json:"grace_seconds"`
	Seed            uint64  `json:"seed"`
	AllWarehouses   bool    `json:"all_warehouses"`
	Style           string  `json:"style"`
	MaxRetries      int     `json:"max_retries"`
	LiveEverySecs   float64 `json:"live_every_seconds"`
	ReconnectSecs   float64 `json:"reconnect_for_seconds,omitempty"`
	MaxFailurePct   float64 `json:"max_failure_pct,omitempty"`
}

// MarshalJSON writes durations in seconds and the style by name.
func (o Options) MarshalJSON() ([]byte, error) {
	return json.Marshal(optionsJSON{
		VUs:             o.VUs,
		RampupSeconds:   o.Rampup.Seconds(),
		DurationSeconds: o.Duration.Seconds(),
		GraceSeconds:    o.Grace.Seconds(),
		Seed:            o.Seed,
		AllWarehouses:   o.AllWarehouses,
		Style:           o.Style.String(),
		MaxRetries:      o.MaxRetries,
		LiveEverySecs:   o.LiveEvery.Seconds(),
		ReconnectSecs:   o.ReconnectFor.Seconds(),
		MaxFailurePct:   o.MaxFailurePct,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *Options) UnmarshalJSON(b []byte) error {
	var j optionsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	secs := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	*o = Options{
		VUs:           j.VUs,
		Rampup:        secs(j.RampupSeconds),
		Duration:      secs(j.DurationSeconds),
		Grace:         secs(j.GraceSeconds),
		Seed:          j.Seed,
		AllWarehouses: j.AllWarehouses,
		MaxRetries:    j.MaxRetries,
		LiveEvery:     secs(j.LiveEverySecs),
		ReconnectFor:  secs(j.ReconnectSecs),
		MaxFailurePct: j.MaxFailurePct,
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
