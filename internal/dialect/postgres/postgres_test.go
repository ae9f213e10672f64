package postgres

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

var (
	testLoad     = tpcc.Constants{CLast: 157, CID: 259, OLIID: 7911}
	testLoadTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	testSeed     = uint64(7)
)

// openTest opens a fresh private database on the test server.
func openTest(t testing.TB) (*Database, dialect.Target) {
	t.Helper()
	tg := dbtest.Postgres(t)
	ctx := context.Background()
	d, err := Open(ctx, tg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d.(*Database), tg
}

// buildCounts is the number of rows emitted per table by a build.
type buildCounts [numTables]int64

// build builds warehouses 1..n the way `oltplab build` does, with workers
// loaders in parallel, and returns the rows emitted per table.
func build(ctx context.Context, d *Database, n, workers int) (buildCounts, error) {
	c, err := buildLoad(ctx, d, n, workers)
	if err != nil {
		return c, err
	}
	return c, buildFinish(ctx, d)
}

// buildLoad creates the tables and loads them.
func buildLoad(ctx context.Context, d *Database, n, workers int) (buildCounts, error) {
	counts := make([][numTables]int64, workers)
	if err := d.DropSchema(ctx); err != nil {
		return buildCounts{}, err
	}
	if err := d.CreateTables(ctx); err != nil {
		return buildCounts{}, err
	}
	next := make(chan int, n+1)
	next <- 0 // the items
	for w := 1; w <= n; w++ {
		next <- w
	}
	close(next)
	g, gctx := errgroup.WithContext(ctx)
	for i := range workers {
		g.Go(func() error {
			l, err := d.NewLoader(gctx)
			if err != nil {
				return err
			}
			gen := tpcc.NewGenerator(testSeed, testLoad, testLoadTime)
			emit := func(r tpcc.Row) error {
				counts[i][r.Table()]++
				return l.Add(gctx, r)
			}
			for w := range next {
				if w == 0 {
					err = gen.Items(emit)
				} else {
					err = gen.Warehouse(w, emit)
				}
				if err != nil {
					break
				}
			}
			if cerr := l.Close(gctx); err == nil {
				err = cerr
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return buildCounts{}, err
	}
	var total buildCounts
	for _, c := range counts {
		for t, v := range c {
			total[t] += v
		}
	}
	return total, nil
}

// buildFinish adds the keys, the procedures and the statistics.
func buildFinish(ctx context.Context, d *Database) error {
	if err := d.CreateIndexes(ctx); err != nil {
		return err
	}
	if err := d.InstallProcedures(ctx); err != nil {
		return err
	}
	return d.Analyze(ctx)
}
