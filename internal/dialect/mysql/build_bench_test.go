package mysql

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// benchWarehouses is OLTPLAB_BENCH_WAREHOUSES, default 2.
func benchWarehouses(b *testing.B) int {
	w := 2
	if s := os.Getenv("OLTPLAB_BENCH_WAREHOUSES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("OLTPLAB_BENCH_WAREHOUSES=%q: want a positive integer", s)
		}
		w = n
	}
	return w
}

// BenchmarkBuild builds OLTPLAB_BENCH_WAREHOUSES warehouses (default 2)
// with 2 loaders in parallel, the way build does, and reports rows/s and
// seconds per build (tables, load, indexes, statistics, procedures).
func BenchmarkBuild(b *testing.B) {
	benchBuild(b, nil, false)
}

// BenchmarkBuildVariants measures the alternatives the loader rejected:
// multi-row INSERT instead of LOAD DATA, and primary keys added after the load.
func BenchmarkBuildVariants(b *testing.B) {
	insert := loadInsert
	b.Run("insert", func(b *testing.B) { benchBuild(b, &insert, false) })
	b.Run("pk-after-load", func(b *testing.B) { benchBuild(b, nil, true) })
}

func benchBuild(b *testing.B, mode *loadMode, pkAfter bool) {
	warehouses := benchWarehouses(b)
	forceLoadMode, primaryKeysAfterLoad = mode, pkAfter
	defer func() { forceLoadMode, primaryKeysAfterLoad = nil, false }()
	var rows int64
	var elapsed, load, index time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		d, _ := openTest(b)
		b.StartTimer()
		start := time.Now()
		st, err := build(context.Background(), d, warehouses, 2)
		if err != nil {
			b.Fatalf("build: %v", err)
		}
		elapsed += time.Since(start)
		rows += st.rows
		load += st.load
		index += st.index
		b.Logf("%d warehouses: %d rows, load %v, indexes %v, analyze %v, total %v", warehouses, st.rows,
			st.load.Round(time.Millisecond), st.index.Round(time.Millisecond), st.analyze.Round(time.Millisecond),
			time.Since(start).Round(time.Millisecond))
	}
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/build")
	b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(load.Seconds()/float64(b.N), "s/load")
	b.ReportMetric(index.Seconds()/float64(b.N), "s/index")
}
