// Package tpchload owns the parallel build of a TPC-H database: through a
// dialect's optional dialect.TPCH ability it creates the eight tables,
// generates the population with tpch.Generator in chunks (dbgen's -C/-S
// children) on a bounded set of workers, each chunk streaming into a
// dialect.TPCHLoader of its own, then adds the keys and refreshes the
// statistics. It returns the row counts and the time spent in each phase.
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
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpch"
)

// ErrNoTPCH is returned for a dialect without the TPC-H ability.
var ErrNoTPCH = errors.New("this dialect cannot hold the TPC-H schema")

// Options are the parameters of one build.
type Options struct {
	Scale tpch.Scale
	// Workers is the number of load workers (0: one per CPU), capped by
	// the dialect's Capabilities.MaxLoadWorkers.
	Workers int
}

// Result is what a build did.
type Result struct {
	Dialect string `json:"dialect"`
	Scale   string `json:"scale"`
	Workers int    `json:"workers"`
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

// Build creates and loads the TPC-H schema of scale o.Scale on db. The
// target must not hold the tables yet: creating them fails otherwise.
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
	g := tpch.NewGenerator(o.Scale)
	res.TextSeconds = time.Since(start).Seconds()
	if err := h.CreateTPCHTables(ctx); err != nil {
		return res, fmt.Errorf("create the TPC-H tables: %w", err)
	}

	t := time.Now()
	rows, err := Load(ctx, h, g, res.Workers)
	res.LoadSeconds = time.Since(t).Seconds()
	for _, tb := range tpch.Tables {
		res.Rows[tb.String()] = rows[tb]
		res.TotalRows += rows[tb]
	}
	if err != nil {
		return res, err
	}

	t = time.Now()
	if err := h.CreateTPCHIndexes(ctx); err != nil {
		return res, fmt.Errorf("create the TPC-H keys and indexes: %w", err)
	}
	res.IndexSeconds = time.Since(t).Seconds()

	t = time.Now()
	if err := h.AnalyzeTPCH(ctx); err != nil {
		return res, fmt.Errorf("analyze the TPC-H tables: %w", err)
	}
	res.AnalyzeSeconds = time.Since(t).Seconds()
	res.TotalSeconds = time.Since(start).Seconds()
	return res, nil
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
			rows, err := loadWorker(ctx, h, g, next)
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
func loadWorker(ctx context.Context, h dialect.TPCH, g *tpch.Generator, next <-chan tpch.Chunk) (rows [tpch.TableCount]int64, err error) {
	for c := range next {
		if err := loadChunk(ctx, h, g, c, &rows); err != nil {
			return rows, fmt.Errorf("%s: %w", c, err)
		}
	}
	return rows, nil
}

func loadChunk(ctx context.Context, h dialect.TPCH, g *tpch.Generator, c tpch.Chunk, rows *[tpch.TableCount]int64) (err error) {
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
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return l.Add(ctx, r)
	})
}
