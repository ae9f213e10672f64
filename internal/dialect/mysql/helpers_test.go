package mysql

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// testSeed and testLoad are the population every test builds.
const testSeed = 42

var testLoad = tpcc.Constants{CLast: 157, CID: 500, OLIID: 4000}

func openTest(t testing.TB) (*DB, dialect.Target) {
	t.Helper()
	target := dbtest.MySQL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := Open(ctx, target)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db.(*DB), target
}

// build runs a whole build as internal/load does: tables, parallel loaders
// (items on the first, warehouses spread over all), indexes, statistics and
// procedures.
func build(ctx context.Context, d *DB, warehouses, loaders int) (buildStats, error) {
	var st buildStats
	if err := d.CreateTables(ctx); err != nil {
		return st, err
	}
	phase := time.Now()
	loadTime := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	counts := make([]int64, loaders)
	g, gctx := errgroup.WithContext(ctx)
	for i := 0; i < loaders; i++ {
		g.Go(func() error {
			l, err := d.NewLoader(gctx)
			if err != nil {
				return err
			}
			gen := tpcc.NewGenerator(testSeed, testLoad, loadTime)
			emit := func(r tpcc.Row) error {
				counts[i]++
				return l.Add(gctx, r)
			}
			if i == 0 {
				if err := gen.Items(emit); err != nil {
					l.Close(gctx)
					return err
				}
			}
			for w := i + 1; w <= warehouses; w += loaders {
				if err := gen.Warehouse(w, emit); err != nil {
					l.Close(gctx)
					return err
				}
			}
			return l.Close(gctx)
		})
	}
	if err := g.Wait(); err != nil {
		return st, err
	}
	st.load, phase = time.Since(phase), time.Now()
	if err := d.CreateIndexes(ctx); err != nil {
		return st, err
	}
	st.index, phase = time.Since(phase), time.Now()
	if err := d.Analyze(ctx); err != nil {
		return st, err
	}
	st.analyze = time.Since(phase)
	if err := d.InstallProcedures(ctx); err != nil {
		return st, err
	}
	for _, c := range counts {
		st.rows += c
	}
	return st, nil
}

// buildStats are the rows loaded and the time of each phase.
type buildStats struct {
	rows                 int64
	load, index, analyze time.Duration
}

func buildTest(t testing.TB, warehouses int) *DB {
	t.Helper()
	d, _ := openTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if _, err := build(ctx, d, warehouses, 2); err != nil {
		t.Fatalf("build %d warehouses: %v", warehouses, err)
	}
	t.Logf("built %d warehouse(s) in %v", warehouses, time.Since(start).Round(time.Millisecond))
	return d
}
