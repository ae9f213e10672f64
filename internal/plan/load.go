package plan

import (
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
)

// Load is how a step drives each target: the driver options the profile,
// parallel and neighbours steps of a plan share with the run, parallel
// and neighbours commands, written once. Its yaml names are the plan's
// fields (a step's options embed Load with ",inline" and leave out, with
// yamldoc.OmitFields, what the step does not take); RegisterFlags makes
// them a command's flags (the same names with '-'); Driver makes them
// driver.Options.
//
//	rampup: 10s
//	duration: 30s
//	grace: 10s
//	client_sql: true
//	all_warehouses: true
//	max_retries: 10
//	reconnect_for: 5m
//	max_failure_rate: 5
//	max_stall: 10
//	max_foreign_cpu: 10
//	max_steal: 10
//	seed: 7
type Load struct {
	// Rampup is executed before each measured window, not measured.
	Rampup time.Duration `yaml:"rampup"`
	// Duration is each measured window.
	Duration time.Duration `yaml:"duration"`
	// Grace is what in-flight transactions get to finish after the
	// window, not measured.
	Grace time.Duration `yaml:"grace"`
	// ClientSQL sends each statement from the client instead of calling
	// stored procedures.
	ClientSQL bool `yaml:"client_sql,omitempty"`
	// AllWarehouses spreads each virtual user over several warehouses.
	AllWarehouses bool `yaml:"all_warehouses,omitempty"`
	// MaxRetries of one transaction after a serialization failure,
	// deadlock or lock timeout.
	MaxRetries int `yaml:"max_retries"`
	// ReconnectFor is how long a virtual user that lost its connection
	// keeps reconnecting.
	ReconnectFor time.Duration `yaml:"reconnect_for"`
	// MaxFailureRate is the percentage of a window's transactions that
	// may fail.
	MaxFailureRate float64 `yaml:"max_failure_rate"`
	// MaxStall is the percentage of a window its stalls may cover before
	// the run is one whose server failed.
	MaxStall float64 `yaml:"max_stall"`
	// MaxForeignCPU and MaxSteal are the percentages of the cores that
	// others may take in a window (foreign CPU; steal) before the run is
	// contaminated.
	MaxForeignCPU float64 `yaml:"max_foreign_cpu"`
	MaxSteal      float64 `yaml:"max_steal"`
	// Seed is the random seed; 0 draws one, recorded with the result.
	Seed uint64 `yaml:"seed,omitempty"`
}

// DefaultLoad is the driver's defaults (driver.Defaults), with no seed.
func DefaultLoad() Load {
	d := driver.Defaults()
	return Load{Rampup: d.Rampup, Duration: d.Duration, Grace: d.Grace, MaxRetries: d.MaxRetries,
		ReconnectFor: d.ReconnectFor, MaxFailureRate: d.MaxFailurePct, MaxStall: d.MaxStallPct,
		MaxForeignCPU: d.MaxForeignCPUPct, MaxSteal: d.MaxStealPct}
}

// Driver is driver.Defaults() with l's options.
func (l Load) Driver() driver.Options {
	d := driver.Defaults()
	l.ApplyTo(&d)
	return d
}

// ApplyTo sets l's options in d and leaves d's others as they are.
func (l Load) ApplyTo(d *driver.Options) {
	d.Rampup, d.Duration, d.Grace = l.Rampup, l.Duration, l.Grace
	d.AllWarehouses, d.MaxRetries, d.Seed = l.AllWarehouses, l.MaxRetries, l.Seed
	d.ReconnectFor, d.MaxFailurePct = l.ReconnectFor, l.MaxFailureRate
	d.MaxStallPct, d.MaxForeignCPUPct, d.MaxStealPct = l.MaxStall, l.MaxForeignCPU, l.MaxSteal
	d.Style = dialect.StyleProcedures
	if l.ClientSQL {
		d.Style = dialect.StyleClientSQL
	}
}

// Validate checks l as the driver would run it with vus virtual users.
func (l Load) Validate(vus int) error {
	d := l.Driver()
	d.VUs = vus
	return d.Validate()
}

// RegisterFlags adds a flag for each of l's options but those omit names
// (by their yaml names), bound to l: its values are the defaults.
func (l *Load) RegisterFlags(fs *pflag.FlagSet, omit ...string) {
	take := func(name string) bool { return !slices.Contains(omit, name) }
	if take("rampup") {
		fs.DurationVar(&l.Rampup, "rampup", l.Rampup, "`DURATION` of the ramp-up before each measured window (executed, not measured)")
	}
	if take("duration") {
		fs.DurationVar(&l.Duration, "duration", l.Duration, "`DURATION` of the measured window of each step")
	}
	if take("grace") {
		fs.DurationVar(&l.Grace, "grace", l.Grace, "`DURATION` in-flight transactions get to finish after the window (not measured)")
	}
	if take("client_sql") {
		fs.BoolVar(&l.ClientSQL, "client-sql", l.ClientSQL, "send each statement from the client instead of calling stored procedures")
	}
	if take("all_warehouses") {
		fs.BoolVar(&l.AllWarehouses, "all-warehouses", l.AllWarehouses, "spread each virtual user over several warehouses (HammerDB's \"use all warehouses\")")
	}
	if take("max_retries") {
		fs.IntVar(&l.MaxRetries, "max-retries", l.MaxRetries, "`N` retries of one transaction after a serialization failure, deadlock or lock timeout")
	}
	if take("reconnect_for") {
		fs.DurationVar(&l.ReconnectFor, "reconnect-for", l.ReconnectFor,
			"`DURATION` a virtual user that lost its connection (a server restart, a failover) keeps reconnecting while the run goes on; "+
				"each outage is recorded with the run. A server not back by then ends the run (exit 8)")
	}
	if take("max_failure_rate") {
		fs.Float64Var(&l.MaxFailureRate, "max-failure-rate", l.MaxFailureRate,
			"`PERCENT` of the measured window's transactions that may fail; a run with more is stored with status failures, "+
				"left out of peaks and verdicts, and exits 19")
	}
	if take("max_stall") {
		fs.Float64Var(&l.MaxStall, "max-stall", l.MaxStall,
			"`PERCENT` of the measured window that stalls (2 s or more without a completed transaction) may cover; a run with more, "+
				"or whose server was down when its window ended, is stored with status failed, left out of peaks and verdicts, and exits 24")
	}
	if take("max_foreign_cpu") {
		fs.Float64Var(&l.MaxForeignCPU, "max-foreign-cpu", l.MaxForeignCPU,
			"`PERCENT` of the cores that foreign CPU (what neither the database server nor oltplab used, on the host and on a "+
				"confined server's own CPUs) may take in a window; a run with more is stored with status contaminated, left out of "+
				"peaks and verdicts unless --include-contaminated, and exits 25")
	}
	if take("max_steal") {
		fs.Float64Var(&l.MaxSteal, "max-steal", l.MaxSteal,
			"`PERCENT` of the host's cores that steal (a hypervisor serving other machines) may take in a window; a run with more is contaminated")
	}
	if take("seed") {
		fs.Uint64Var(&l.Seed, "seed", l.Seed, "random `SEED` (default: drawn and recorded with the result)")
	}
}
