package sqlite

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

const testSeed = 42

var testLoad = tpcc.Constants{CLast: 157, CID: 259, OLIID: 7911}

var testLoadTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// build builds warehouses warehouses into d the way `oltplab build` does
// (drop, tables, one loader, indexes, analyze) and returns the number of
// rows loaded per table.
func build(ctx context.Context, d dialect.Database, warehouses int) (map[tpcc.Table]int64, error) {
	if err := d.DropSchema(ctx); err != nil {
		return nil, err
	}
	if err := d.CreateTables(ctx); err != nil {
		return nil, err
	}
	l, err := d.NewLoader(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[tpcc.Table]int64{}
	emit := func(r tpcc.Row) error {
		counts[r.Table()]++
		return l.Add(ctx, r)
	}
	g := tpcc.NewGenerator(testSeed, testLoad, testLoadTime)
	err = g.Items(emit)
	for w := 1; w <= warehouses && err == nil; w++ {
		err = g.Warehouse(w, emit)
	}
	if cerr := l.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := d.CreateIndexes(ctx); err != nil {
		return nil, err
	}
	if err := d.Analyze(ctx); err != nil {
		return nil, err
	}
	return counts, nil
}

// The 1-warehouse database is built once per test binary (the build test
// checks it) and copied into each test that changes it.
var template struct {
	once   sync.Once
	dir    string
	path   string
	counts map[tpcc.Table]int64
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if template.dir != "" {
		_ = os.RemoveAll(template.dir)
	}
	os.Exit(code)
}

func builtTemplate(t testing.TB) (string, map[tpcc.Table]int64) {
	testenv.Require(t, testenv.Long)
	t.Helper()
	template.once.Do(func() {
		template.dir, template.err = os.MkdirTemp("", "oltplab-sqlite-test-")
		if template.err != nil {
			return
		}
		template.path = filepath.Join(template.dir, "tpcc.db")
		tg, err := dialect.ParseTarget("sqlite:"+template.path, "")
		if err != nil {
			template.err = err
			return
		}
		ctx := context.Background()
		d, err := Open(ctx, tg)
		if err != nil {
			template.err = err
			return
		}
		defer d.Close()
		template.counts, template.err = build(ctx, d, 1)
	})
	if template.err != nil {
		t.Fatalf("build the 1-warehouse template: %v", template.err)
	}
	return template.path, template.counts
}

// openBuilt returns a private copy of the built 1-warehouse database.
func openBuilt(t testing.TB) *Database {
	t.Helper()
	src, _ := builtTemplate(t)
	tg := dbtest.SQLite(t)
	dst, err := targetPath(tg)
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, src, dst)
	d, err := Open(context.Background(), tg)
	if err != nil {
		t.Fatalf("open copy: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d.(*Database)
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBuildOneWarehouse(t *testing.T) {
	testenv.Require(t, testenv.Long)
	path, emitted := builtTemplate(t)
	tg, err := dialect.ParseTarget("sqlite:"+path, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tb := range tpcc.Tables {
		want := int64(tpcc.RowsPerWarehouse(tb))
		switch tb {
		case tpcc.Item:
			want = tpcc.ItemCount
		case tpcc.OrderLine:
			want = emitted[tb] // random: 5..15 lines per order
			if want < 5*30000 || want > 15*30000 {
				t.Errorf("generator emitted %d order lines, want within [150000, 450000]", want)
			}
		}
		t.Run(tb.String(), func(t *testing.T) {
			var got int64
			if err := c.QueryRow(ctx, "SELECT count(*) FROM "+tb.String()).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("rows: got %d, want %d", got, want)
			}
		})
	}
	// The order lines the database holds are the ones the orders announce.
	var olCnt, lines int64
	if err := c.QueryRow(ctx, "SELECT (SELECT sum(o_ol_cnt) FROM orders), (SELECT count(*) FROM order_line)").Scan(&olCnt, &lines); err != nil {
		t.Fatal(err)
	}
	if olCnt != lines {
		t.Errorf("sum(o_ol_cnt) = %d, order_line rows = %d", olCnt, lines)
	}
}

func TestTimestampsStoredAsText(t *testing.T) {
	d := openBuilt(t)
	ctx := context.Background()
	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := testLoadTime.Format("2006-01-02 15:04:05")
	for _, q := range []string{
		"SELECT typeof(c_since) || ' ' || c_since FROM customer LIMIT 1",
		"SELECT typeof(h_date) || ' ' || h_date FROM history LIMIT 1",
		"SELECT typeof(o_entry_d) || ' ' || o_entry_d FROM orders LIMIT 1",
		"SELECT typeof(ol_delivery_d) || ' ' || ol_delivery_d FROM order_line WHERE ol_delivery_d IS NOT NULL LIMIT 1",
	} {
		var got string
		if err := c.QueryRow(ctx, q).Scan(&got); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got != "text "+want {
			t.Errorf("%s: got %q, want %q", q, got, "text "+want)
		}
	}
	// And it scans back into time.Time.
	var got time.Time
	if err := c.QueryRow(ctx, "SELECT o_entry_d FROM orders LIMIT 1").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if !got.Equal(testLoadTime) {
		t.Errorf("o_entry_d: got %v, want %v", got, testLoadTime)
	}
}

func TestCheckAllAfterBuild(t *testing.T) {
	path, _ := builtTemplate(t)
	tg, err := dialect.ParseTarget("sqlite:"+path, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	checkAll(t, d, true)
}

// checkAll runs every consistency condition of clause 3.3.2 in one snapshot.
func checkAll(t *testing.T, d dialect.Database, afterBuild bool) {
	t.Helper()
	ctx := context.Background()
	var res []tpcc.CheckResult
	err := d.Snapshot(ctx, func(q tpcc.Querier) error {
		var err error
		res, err = tpcc.CheckAll(ctx, q, d.Caps().MoneyTolerance, afterBuild)
		return err
	})
	if err != nil {
		t.Fatalf("CheckAll: %v", err)
	}
	if len(res) != len(tpcc.Conditions) {
		t.Errorf("got %d results, want %d", len(res), len(tpcc.Conditions))
	}
	for _, r := range res {
		if r.Skipped {
			if afterBuild {
				t.Errorf("%s skipped after build", r.Clause)
			}
			continue
		}
		if !r.Passed {
			t.Errorf("%s %s: %d violations, first: %s", r.Clause, r.Name, r.Violations, r.Detail)
		}
	}
}

// BenchmarkLoadOneWarehouse measures the build of one warehouse (with the
// 100,000 items): tables, load, indexes, analyze. It reports rows/s.
func BenchmarkLoadOneWarehouse(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		tg, err := dialect.ParseTarget("sqlite:"+filepath.Join(b.TempDir(), "tpcc.db"), "")
		if err != nil {
			b.Fatal(err)
		}
		d, err := Open(ctx, tg)
		if err != nil {
			b.Fatal(err)
		}
		var before, after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		start := time.Now()
		counts, err := build(ctx, d, 1)
		if err != nil {
			b.Fatal(err)
		}
		el := time.Since(start)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		var n int64
		for _, c := range counts {
			n += c
		}
		b.ReportMetric(float64(n)/el.Seconds(), "rows/s")
		b.ReportMetric(cpu.Seconds(), "cpu-s/warehouse")
		_ = d.Close()
	}
}
