package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// loadGroup loads warehouses 1..n (and the items) through NewLoaders(workers),
// closing every loader with closeCtx(i), and returns the rows emitted per
// table and the last Close's error.
func loadGroup(t *testing.T, d *Database, n, workers int, closeCtx func(i int) context.Context) (buildCounts, error) {
	t.Helper()
	ctx := context.Background()
	if err := d.DropSchema(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	ls, err := d.NewLoaders(ctx, workers)
	if err != nil {
		t.Fatalf("NewLoaders: %v", err)
	}
	if len(ls) != workers {
		t.Fatalf("NewLoaders(%d) gave %d loaders", workers, len(ls))
	}
	next := make(chan int, n+1)
	for w := 0; w <= n; w++ {
		next <- w
	}
	close(next)
	counts := make([]buildCounts, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Go(func() {
			gen := tpcc.NewGenerator(testSeed, testLoad, testLoadTime)
			emit := func(r tpcc.Row) error {
				counts[i][r.Table()]++
				return l.Add(ctx, r)
			}
			var err error
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
			if cerr := l.Close(closeCtx(i)); err == nil {
				err = cerr
			}
			errs[i] = err
		})
	}
	wg.Wait()
	var total buildCounts
	for _, c := range counts {
		for t, v := range c {
			total[t] += v
		}
	}
	var first error
	for _, err := range errs {
		if err != nil && first == nil {
			first = err
		}
	}
	return total, first
}

func countRows(t *testing.T, d *Database, table string) int64 {
	t.Helper()
	c, err := d.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var n int64
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLoaderGroupFreezes: rows loaded through NewLoaders are all there
// after the last Close, and every page of every table is all-visible and
// all-frozen (COPY FREEZE in the transaction that truncated the table), so
// no later scan rewrites the pages to set hint bits.
func TestLoaderGroupFreezes(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	counts, err := loadGroup(t, d, 2, 3, func(int) context.Context { return ctx })
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	c, err := d.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_visibility"); err != nil {
		t.Fatalf("pg_visibility: %v", err)
	}
	for _, tb := range tpcc.Tables {
		if got, want := countRows(t, d, tb.String()), counts[tb]; got != want {
			t.Errorf("%s: %d rows, want the %d loaded", tb, got, want)
		}
		var pages, visible, frozen int64
		err := c.QueryRow(ctx, "SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int, all_visible, all_frozen "+
			"FROM pg_visibility_map_summary($1::regclass)", tb.String()).Scan(&pages, &visible, &frozen)
		if err != nil {
			t.Fatalf("%s: visibility map: %v", tb, err)
		}
		if pages == 0 || visible != pages || frozen != pages {
			t.Errorf("%s: %d pages, %d all-visible, %d all-frozen; want every page both", tb, pages, visible, frozen)
		}
	}
}

// TestLoaderGroupRollsBackOnCancel: when one loader is closed with a done
// context (its build was canceled or another worker failed), the last
// Close reports the failure and no table keeps any row.
func TestLoaderGroupRollsBackOnCancel(t *testing.T) {
	d, _ := openTest(t)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := loadGroup(t, d, 1, 2, func(i int) context.Context {
		if i == 0 {
			return canceled
		}
		return context.Background()
	})
	if err == nil {
		t.Fatal("load with a canceled loader: got no error")
	}
	var de *dialect.Error
	if !errors.As(err, &de) {
		t.Errorf("error %v (%T) is not a *dialect.Error", err, err)
	}
	for _, tb := range tpcc.Tables {
		if n := countRows(t, d, tb.String()); n != 0 {
			t.Errorf("%s: %d rows after the rolled-back load, want 0", tb, n)
		}
	}
}
