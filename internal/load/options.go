// Package load owns the parallel build of a TPC-C database: it drops and
// creates the schema through a dialect, generates the initial population
// (TPC-C 4.3.3.1) with tpcc.Generator on a bounded set of workers, each
// with its own dialect.Loader, then adds indexes, installs stored
// procedures, refreshes statistics and finally writes the metadata row
// that run and check require (so an interrupted build is recognisably
// half-built).
//
// It sees databases only through internal/dialect and imports only dialect
// and tpcc.
package load

import (
	"errors"
	"fmt"

	"github.com/oltplab/oltplab/internal/dialect"
)

// Options are the parameters of one build.
type Options struct {
	// Warehouses is the scale: the number of warehouses to load (>= 1).
	Warehouses int
	// Workers is the number of parallel load connections (>= 1). Build
	// uses at most Warehouses of them and at most the dialect's
	// Capabilities.MaxLoadWorkers.
	Workers int
	// Seed makes the population reproducible; it is recorded in the
	// metadata so that run can draw its NURand constants against the
	// load-time ones (TPC-C 2.1.6.1).
	Seed uint64
	// Drop rebuilds over an existing schema; without it Build refuses to
	// touch a target that already holds one (ErrSchemaExists).
	Drop bool
	// ToolVersion is recorded in the metadata.
	ToolVersion string
}

// MaxWarehouses bounds a build: 100,000 warehouses are about 10 TB and
// days of loading, far beyond what oltplab is for; more is a typing
// mistake (and far more would overflow the row counts).
const MaxWarehouses = 100_000

// Validate checks the options on their own, before a target is known.
func (o Options) Validate() error {
	var errs []error
	if o.Warehouses < 1 || o.Warehouses > MaxWarehouses {
		errs = append(errs, fmt.Errorf("warehouses must be from 1 to %d, got %d", MaxWarehouses, o.Warehouses))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("load workers must be at least 1, got %d", o.Workers))
	}
	return errors.Join(errs...)
}

// EffectiveWorkers is the number of load workers Build uses on a dialect
// with capabilities c: Workers, capped by Warehouses and by
// c.MaxLoadWorkers when that is set (SQLite has a single writer).
func (o Options) EffectiveWorkers(c dialect.Capabilities) int {
	n := max(o.Workers, 1)
	n = min(n, max(o.Warehouses, 1))
	if c.MaxLoadWorkers > 0 {
		n = min(n, c.MaxLoadWorkers)
	}
	return n
}
