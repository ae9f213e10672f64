// Package tpchload owns the parallel build of a TPC-H database: through a
// dialect's optional dialect.TPCH ability it creates the eight tables,
// generates the population with tpch.Generator in chunks (dbgen's -C/-S
// children) on a bounded set of workers, each chunk streaming into a
// dialect.TPCHLoader of its own, then adds the keys and refreshes the
// statistics, and records what it built in tpch.MetaTable (meta.go),
// which marks the schema as oltplab's: only a schema so marked is ever
// dropped. It returns the row counts and the time spent in each phase.
// Check (check.go) verifies a loaded database's cardinalities and
// relationships.
//
// It must not import internal/cli, internal/store, internal/driver or any
// dialect package (internal/dialect/...): it sees a database only through
// the dialect interfaces.
package tpchload

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpch"
)

// ErrNoTPCH is returned for a dialect without the TPC-H ability.
var ErrNoTPCH = errors.New("this dialect cannot hold the TPC-H schema (TPC-H runs on PostgreSQL, MySQL/MariaDB and SQLite)")

// ErrSchemaExists is returned by Build when the target already holds a
// TPC-H schema oltplab built (its metadata table) and Options.Drop is
// false.
var ErrSchemaExists = errors.New("target already holds an oltplab TPC-H schema; use --drop to rebuild it")

// ForeignTablesError is returned by Build when the target holds tables
// with TPC-H names but no oltplab TPC-H metadata table: oltplab did not
// create them as a TPC-H schema (TPC-C's CUSTOMER and ORDERS share two
// names), so it neither builds beside them nor drops them, Drop or not.
type ForeignTablesError struct {
	Tables []string
	// TPCC: the tables are oltplab's TPC-C schema.
	TPCC bool
}

func (e *ForeignTablesError) Error() string {
	if e.TPCC {
		return fmt.Sprintf("the target holds oltplab's TPC-C schema, whose tables %s have TPC-H's names: "+
			"build TPC-H into a database of its own", strings.Join(e.Tables, ", "))
	}
	return fmt.Sprintf("the target holds tables oltplab did not create (%s; no %s table beside them): "+
		"oltplab drops only what it built, with --drop or not; build into another database, or remove them yourself",
		strings.Join(e.Tables, ", "), tpch.MetaTable)
}

// IncompleteError is returned when a build fails or is canceled after it
// started creating tables: the target then holds a half-built schema,
// marked as oltplab's, without the metadata that makes it usable. A later
// build with Drop replaces it.
type IncompleteError struct {
	Phase Phase
	Err   error
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("TPC-H build stopped during %s, leaving a half-built schema (tests and check refuse it; rebuild with --drop): %v", e.Phase, e.Err)
}

func (e *IncompleteError) Unwrap() error { return e.Err }

// Phase is a phase of a build.
type Phase string

const (
	PhaseCheck   Phase = "check"
	PhaseDrop    Phase = "drop"
	PhaseCreate  Phase = "create"
	PhaseLoad    Phase = "load"
	PhaseIndex   Phase = "index"
	PhaseAnalyze Phase = "analyze"
	PhaseMeta    Phase = "meta"
	PhaseDone    Phase = "done"
)

// Progress is what a running build reports: its phase and, while it
// loads, the rows loaded so far of about ExpectedRows.
type Progress struct {
	Phase        Phase
	Rows         int64
	ExpectedRows int64
	Elapsed      time.Duration
}

// Options are the parameters of one build.
type Options struct {
	Scale tpch.Scale
	// Workers is the number of load workers (0: one per CPU), capped by
	// the dialect's Capabilities.MaxLoadWorkers.
	Workers int
	// Drop replaces a TPC-H schema oltplab built (complete or not).
	Drop bool
	// ToolVersion is recorded in the metadata.
	ToolVersion string
	// Progress, when set, is called at each phase and about twice a
	// second while loading, never concurrently with itself.
	Progress func(Progress)
}

// Result is what a build did.
type Result struct {
	Dialect string `json:"dialect"`
	Scale   string `json:"scale"`
	Workers int    `json:"workers"`
	// Dropped: an earlier TPC-H schema of oltplab's was dropped first.
	Dropped bool      `json:"dropped,omitempty"`
	BuiltAt time.Time `json:"built_at"`
	// QGenSeed is the qgen seed the tests use by default (clause 2.1.3.3:
	// the load's end as mmddhhmmss).
	QGenSeed int64 `json:"qgen_seed"`
	// Rows is the number of rows loaded per table name.
	Rows      map[string]int64 `json:"rows"`
	TotalRows int64            `json:"total_rows"`

	// TextSeconds is the time to build dbgen's text pool (4.2.2.10),
	// once per process, before the load.
	TextSeconds    float64 `json:"text_seconds"`
	LoadSeconds    float64 `json:"load_seconds"`
	IndexSeconds   float64 `json:"index_seconds"`
	AnalyzeSeconds float64 `json:"analyze_seconds"`
	TotalSeconds   float64 `json:"total_seconds"`
}

// Build creates and loads the TPC-H schema of scale o.Scale on db, then
// records it in tpch.MetaTable, last. A target with a TPC-H schema of
// oltplab's is refused with ErrSchemaExists unless o.Drop is set; tables
// of TPC-H's names that are not oltplab's TPC-H schema are refused with a
// *ForeignTablesError whatever o.Drop says. A failure after the tables
// were created returns an *IncompleteError.
func Build(ctx context.Context, db dialect.Database, o Options) (Result, error) {
	res := Result{Dialect: db.Name(), Scale: o.Scale.String(), Rows: map[string]int64{}}
	h, ok := db.(dialect.TPCH)
	if !ok {
		return res, fmt.Errorf("%s: %w", db.Name(), ErrNoTPCH)
	}
	if o.Scale.IsZero() {
		return res, errors.New("tpch build: no scale factor")
	}
	res.Workers = o.Workers
	if res.Workers <= 0 {
		res.Workers = runtime.NumCPU()
	}
	if m := db.Caps().MaxLoadWorkers; m > 0 {
		res.Workers = min(res.Workers, m)
	}
	start := time.Now()
	rep := newReporter(o.Progress, start, ExpectedRows(o.Scale))
	defer rep.close()

	rep.phase(PhaseCheck)
	ours, present, err := existing(ctx, db)
	if err != nil {
		return res, err
	}
	switch {
	case !ours && len(present) > 0:
		tpcc, err := db.HasTable(ctx, tpccMetaTable)
		if err != nil {
			return res, fmt.Errorf("look for table %s: %w", tpccMetaTable, err)
		}
		return res, &ForeignTablesError{Tables: present, TPCC: tpcc}
	case ours && !o.Drop:
		return res, ErrSchemaExists
	case ours:
		rep.phase(PhaseDrop)
		if err := h.DropTPCHSchema(ctx); err != nil {
			return res, fmt.Errorf("drop the TPC-H schema: %w", err)
		}
		res.Dropped = true
	}
	fail := func(p Phase, err error) (Result, error) {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (build canceled: %w)", err, cerr)
		}
		return res, &IncompleteError{Phase: p, Err: err}
	}

	t := time.Now()
	g := tpch.NewGenerator(o.Scale)
	res.TextSeconds = time.Since(t).Seconds()
	rep.phase(PhaseCreate)
	if err := h.CreateTPCHTables(ctx); err != nil {
		// Nothing of oltplab's may have been created: a table of the
		// schema appeared since the check, or the server refused.
		return fail(PhaseCreate, fmt.Errorf("create the TPC-H tables: %w", err))
	}

	rep.phase(PhaseLoad)
	t = time.Now()
	rows, err := load(ctx, h, g, res.Workers, rep)
	res.LoadSeconds = time.Since(t).Seconds()
	for _, tb := range tpch.Tables {
		res.Rows[tb.String()] = rows[tb]
		res.TotalRows += rows[tb]
	}
	if err != nil {
		return fail(PhaseLoad, err)
	}

	rep.phase(PhaseIndex)
	t = time.Now()
	if err := h.CreateTPCHIndexes(ctx); err != nil {
		return fail(PhaseIndex, fmt.Errorf("create the TPC-H keys and indexes: %w", err))
	}
	res.IndexSeconds = time.Since(t).Seconds()

	rep.phase(PhaseAnalyze)
	t = time.Now()
	if err := h.AnalyzeTPCH(ctx); err != nil {
		return fail(PhaseAnalyze, fmt.Errorf("analyze the TPC-H tables: %w", err))
	}
	res.AnalyzeSeconds = time.Since(t).Seconds()

	rep.phase(PhaseMeta)
	res.BuiltAt = time.Now().UTC().Truncate(time.Second)
	res.QGenSeed = LoadSeed(res.BuiltAt)
	m := Meta{SchemaVersion: SchemaVersion, Scale: o.Scale, Dialect: db.Name(), ToolVersion: o.ToolVersion,
		BuiltAt: res.BuiltAt, QGenSeed: res.QGenSeed, Orders: rows[tpch.Orders], LineItems: rows[tpch.LineItem]}
	if err := writeMeta(ctx, db, m); err != nil {
		return fail(PhaseMeta, err)
	}
	res.TotalSeconds = time.Since(start).Seconds()
	rep.phase(PhaseDone)
	return res, nil
}

// tpccMetaTable is the table that marks oltplab's TPC-C schema (the
// value of tpcc.MetaTable, which this package does not import).
const tpccMetaTable = "oltplab_meta"

// existing reports whether the target holds a TPC-H schema oltplab built
// (its metadata table, created first and dropped last) and which of the
// eight tables exist.
func existing(ctx context.Context, db dialect.Database) (ours bool, present []string, err error) {
	ours, err = db.HasTable(ctx, tpch.MetaTable)
	if err != nil {
		return false, nil, fmt.Errorf("look for table %s: %w", tpch.MetaTable, err)
	}
	for _, t := range tpch.Tables {
		ok, err := db.HasTable(ctx, t.String())
		if err != nil {
			return false, nil, fmt.Errorf("look for table %s: %w", t, err)
		}
		if ok {
			present = append(present, t.String())
		}
	}
	return ours, present, nil
}

// ExpectedRows is about how many rows a build of scale s loads (LINEITEM
// at its mean of four per order).
func ExpectedRows(s tpch.Scale) int64 {
	var n int64
	for _, t := range tpch.Tables {
		r, _ := s.Rows(t)
		n += r
	}
	return n
}

// Jobs are the chunks a build loads, largest first: ORDERS (with
// LINEITEM, about 85% of the bytes) in four chunks per worker, PART (with
// PARTSUPP) in two, CUSTOMER in one, then SUPPLIER, NATION and REGION
// whole. Chunks never outnumber a table's rows.
func Jobs(s tpch.Scale, workers int) ([]tpch.Chunk, error) {
	per := map[tpch.Table]int{tpch.Orders: 4 * workers, tpch.Part: 2 * workers, tpch.Customer: workers,
		tpch.Supplier: 1, tpch.Nation: 1, tpch.Region: 1}
	var jobs []tpch.Chunk
	for _, t := range []tpch.Table{tpch.Orders, tpch.Part, tpch.Customer, tpch.Supplier, tpch.Nation, tpch.Region} {
		rows, _ := s.Rows(t)
		cs, err := s.Chunks(t, int(min(int64(per[t]), rows)))
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, cs...)
	}
	return jobs, nil
}

// Load generates the population of g's scale with workers workers, each
// with its own loader, and returns the rows loaded per table.
func Load(ctx context.Context, h dialect.TPCH, g *tpch.Generator, workers int) ([tpch.TableCount]int64, error) {
	return load(ctx, h, g, workers, nil)
}

func load(ctx context.Context, h dialect.TPCH, g *tpch.Generator, workers int, rep *reporter) ([tpch.TableCount]int64, error) {
	var total [tpch.TableCount]int64
	jobs, err := Jobs(g.Scale(), workers)
	if err != nil {
		return total, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan tpch.Chunk, len(jobs))
	for _, j := range jobs {
		next <- j
	}
	close(next)

	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows, err := loadWorker(ctx, h, g, next, rep)
			mu.Lock()
			defer mu.Unlock()
			for i, n := range rows {
				total[i] += n
			}
			if err != nil {
				errs = append(errs, err)
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return total, fmt.Errorf("load the TPC-H tables: %w", context.Cause(ctx))
	}
	return total, nil
}

// loadWorker loads chunks until there are none left, each through a
// loader of its own: a loader holds a connection per table it has seen,
// so a worker holds at most two at a time (ORDERS and LINEITEM, or PART
// and PARTSUPP), and each chunk is durable when its loader closes.
func loadWorker(ctx context.Context, h dialect.TPCH, g *tpch.Generator, next <-chan tpch.Chunk, rep *reporter) (rows [tpch.TableCount]int64, err error) {
	for c := range next {
		if err := loadChunk(ctx, h, g, c, &rows, rep); err != nil {
			return rows, fmt.Errorf("%s: %w", c, err)
		}
	}
	return rows, nil
}

func loadChunk(ctx context.Context, h dialect.TPCH, g *tpch.Generator, c tpch.Chunk, rows *[tpch.TableCount]int64, rep *reporter) (err error) {
	l, err := h.NewTPCHLoader(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := l.Close(ctx); err == nil {
			err = cerr
		}
	}()
	n := 0
	return g.Generate(c, func(r tpch.Row) error {
		rows[r.Table()]++
		if n++; n%4096 == 0 {
			rep.add(4096)
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return l.Add(ctx, r)
	})
}
