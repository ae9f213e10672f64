package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// ErrSchemaExists is returned by Build when the target already holds a
// schema oltplab built (its metadata table) and Options.Drop is false.
var ErrSchemaExists = errors.New("target already holds an oltplab TPC-C schema; use --drop to rebuild it")

// ForeignTablesError is returned by Build when the target holds tables
// with TPC-C names but no oltplab metadata table: oltplab did not create
// them, so it neither builds beside them nor drops them, Drop or not.
type ForeignTablesError struct {
	Tables []string
}

func (e *ForeignTablesError) Error() string {
	return fmt.Sprintf("the target holds tables oltplab did not create (%s; no %s table beside them): "+
		"oltplab drops only what it built, with --drop or not; build into another database, or remove them yourself",
		strings.Join(e.Tables, ", "), tpcc.MetaTable)
}

// IncompleteError is returned when a build fails or is canceled after it
// started creating tables: the target then holds a half-built schema. The
// metadata row is written last, so run and check refuse such a target.
type IncompleteError struct {
	Phase Phase // the phase that failed
	Err   error
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("build stopped during %s, leaving a half-built schema without metadata (run and check refuse it; rebuild with --drop): %v", e.Phase, e.Err)
}

func (e *IncompleteError) Unwrap() error { return e.Err }

// Result is what a build did.
type Result struct {
	Dialect       string         `json:"dialect"`
	Warehouses    int            `json:"warehouses"`
	Workers       int            `json:"workers"` // load connections actually used
	Seed          uint64         `json:"seed"`
	LoadConstants tpcc.Constants `json:"load_constants"`
	Procedures    bool           `json:"procedures_installed"`
	BuiltAt       time.Time      `json:"built_at"`

	// Rows is the number of rows loaded per table name.
	Rows      map[string]int64 `json:"rows"`
	TotalRows int64            `json:"total_rows"`

	LoadSeconds       float64 `json:"load_seconds"`
	IndexSeconds      float64 `json:"index_seconds"`
	ProceduresSeconds float64 `json:"procedures_seconds"`
	AnalyzeSeconds    float64 `json:"analyze_seconds"`
	TotalSeconds      float64 `json:"total_seconds"`
	// RowsPerSec is TotalRows over LoadSeconds.
	RowsPerSec float64 `json:"rows_per_sec"`
}

// rowFlushEvery is how many rows a worker adds before it publishes its
// count to the progress counter and looks at its context.
const rowFlushEvery = 1024

// Build creates and loads the TPC-C schema of o.Warehouses warehouses on
// db. progress, when not nil, is called about every 500 ms and at each
// phase change, never concurrently with itself; Build returns only after
// its last call.
//
// A target that already holds a schema is refused with ErrSchemaExists
// unless o.Drop is set. A failure or cancellation after tables were
// created returns an *IncompleteError.
func Build(ctx context.Context, db dialect.Database, o Options, progress func(Progress)) (Result, error) {
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	start := time.Now()
	rep := newReporter(progress, start, ExpectedRows(o.Warehouses))
	defer rep.close()

	res := Result{
		Dialect:    db.Name(),
		Warehouses: o.Warehouses,
		Workers:    o.EffectiveWorkers(db.Caps()),
		Seed:       o.Seed,
		Rows:       map[string]int64{},
	}

	rep.setPhase(PhaseCheck)
	ours, present, err := existingSchema(ctx, db)
	if err != nil {
		return res, err
	}
	switch {
	case !ours && len(present) > 0:
		return res, &ForeignTablesError{Tables: present}
	case ours && !o.Drop:
		return res, ErrSchemaExists
	case ours:
		rep.setPhase(PhaseDrop)
		if err := db.DropSchema(ctx); err != nil {
			return res, fmt.Errorf("drop existing schema: %w", err)
		}
	}

	// From here on a failure leaves a half-built schema.
	fail := func(p Phase, err error) (Result, error) {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (build canceled: %w)", err, cerr)
		}
		return res, &IncompleteError{Phase: p, Err: err}
	}

	rep.setPhase(PhaseCreate)
	if err := db.CreateTables(ctx); err != nil {
		return fail(PhaseCreate, fmt.Errorf("create tables: %w", err))
	}

	// TPC-C 2.1.6: the load-time C constants are drawn once and recorded
	// so that run can satisfy the delta rule of 2.1.6.1.
	res.LoadConstants = tpcc.NewLoadConstants(tpcc.NewRand(o.Seed, tpcc.ConstantsStream))
	res.BuiltAt = time.Now().UTC().Truncate(time.Second)

	rep.setPhase(PhaseLoad)
	t := time.Now()
	rows, err := loadRows(ctx, db, o, res.Workers, res.LoadConstants, res.BuiltAt, rep)
	res.LoadSeconds = time.Since(t).Seconds()
	for i, n := range rows {
		res.Rows[tpcc.Tables[i].String()] = n
		res.TotalRows += n
	}
	if res.LoadSeconds > 0 {
		res.RowsPerSec = float64(res.TotalRows) / res.LoadSeconds
	}
	if err != nil {
		return fail(PhaseLoad, err)
	}

	rep.setPhase(PhaseIndex)
	t = time.Now()
	if err := db.CreateIndexes(ctx); err != nil {
		return fail(PhaseIndex, fmt.Errorf("create indexes: %w", err))
	}
	res.IndexSeconds = time.Since(t).Seconds()

	if pi, ok := db.(dialect.ProcedureInstaller); ok {
		rep.setPhase(PhaseProcedures)
		t = time.Now()
		if err := pi.InstallProcedures(ctx); err != nil {
			return fail(PhaseProcedures, fmt.Errorf("install stored procedures: %w", err))
		}
		res.ProceduresSeconds = time.Since(t).Seconds()
		res.Procedures = true
	}

	rep.setPhase(PhaseAnalyze)
	t = time.Now()
	if err := db.Analyze(ctx); err != nil {
		return fail(PhaseAnalyze, fmt.Errorf("analyze: %w", err))
	}
	res.AnalyzeSeconds = time.Since(t).Seconds()

	rep.setPhase(PhaseMeta)
	if err := writeMeta(ctx, db, o, res); err != nil {
		return fail(PhaseMeta, err)
	}
	// The metadata is the build's last commit: once it is durable, so is
	// everything before it.
	if s, ok := db.(dialect.Syncer); ok {
		if err := s.SyncCommitted(ctx); err != nil {
			return fail(PhaseMeta, fmt.Errorf("make the build durable: %w", err))
		}
	}
	res.TotalSeconds = time.Since(start).Seconds()
	rep.setPhase(PhaseDone)
	return res, nil
}

// existingSchema reports whether the target holds a schema oltplab built
// (its metadata table, which every dialect creates first and drops last,
// so a half-built or half-dropped schema still has it) and which of the
// nine TPC-C tables exist.
func existingSchema(ctx context.Context, db dialect.Database) (ours bool, present []string, err error) {
	ours, err = db.HasTable(ctx, tpcc.MetaTable)
	if err != nil {
		return false, nil, fmt.Errorf("look for existing table %s: %w", tpcc.MetaTable, err)
	}
	for _, t := range tpcc.Tables {
		ok, err := db.HasTable(ctx, t.String())
		if err != nil {
			return false, nil, fmt.Errorf("look for existing table %s: %w", t, err)
		}
		if ok {
			present = append(present, t.String())
		}
	}
	return ours, present, nil
}

// loadRows generates and loads ITEM and every warehouse on workers
// connections. Each worker owns one Loader and one Generator, reused
// across the warehouses it takes from a shared counter; the first worker
// loads ITEM before its first warehouse. It returns the rows added per
// table, in tpcc.Tables order.
func loadRows(ctx context.Context, db dialect.Database, o Options, workers int, lc tpcc.Constants, loadTime time.Time, rep *reporter) ([]int64, error) {
	counts := make([][]int64, workers)
	var next atomic.Int64 // last warehouse handed out
	var loaders []dialect.Loader
	if lg, ok := db.(dialect.LoaderGroup); ok {
		var err error
		if loaders, err = lg.NewLoaders(ctx, workers); err != nil {
			return make([]int64, len(tpcc.Tables)), fmt.Errorf("open load connections: %w", err)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := range workers {
		counts[i] = make([]int64, len(tpcc.Tables))
		var l dialect.Loader
		if loaders != nil {
			l = loaders[i]
		}
		g.Go(func() error {
			return loadWorker(gctx, db, l, o, i, lc, loadTime, &next, counts[i], rep)
		})
	}
	err := g.Wait()
	total := make([]int64, len(tpcc.Tables))
	for _, c := range counts {
		for t, n := range c {
			total[t] += n
		}
	}
	return total, err
}

// loadWorker generates the rows of the warehouses it takes from next into
// loader (one of a dialect.LoaderGroup's), or, when loader is nil, into a
// loader of its own.
func loadWorker(ctx context.Context, db dialect.Database, loader dialect.Loader, o Options, worker int, lc tpcc.Constants, loadTime time.Time, next *atomic.Int64, counts []int64, rep *reporter) (err error) {
	if loader == nil {
		if loader, err = db.NewLoader(ctx); err != nil {
			return fmt.Errorf("load worker %d: open load connection: %w", worker+1, err)
		}
	}
	defer func() {
		cerr := loader.Close(ctx)
		if err == nil && cerr != nil {
			err = fmt.Errorf("load worker %d: flush and close: %w", worker+1, cerr)
		}
	}()
	gen := tpcc.NewGenerator(o.Seed, lc, loadTime)
	pending := int64(0)
	emit := func(r tpcc.Row) error {
		if err := loader.Add(ctx, r); err != nil {
			return err
		}
		counts[r.Table()]++
		pending++
		if pending == rowFlushEvery {
			rep.addRows(pending)
			pending = 0
			return ctx.Err()
		}
		return nil
	}
	defer func() { rep.addRows(pending) }()

	if worker == 0 {
		if err := gen.Items(emit); err != nil {
			return fmt.Errorf("load items: %w", err)
		}
	}
	for {
		w := int(next.Add(1))
		if w > o.Warehouses {
			return nil
		}
		if err := gen.Warehouse(w, emit); err != nil {
			return fmt.Errorf("load warehouse %d: %w", w, err)
		}
	}
}
