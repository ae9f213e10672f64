package postgres

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// BenchmarkTPCCBuild measures where a TPC-C build's time goes, phase by
// phase, against the limit: the same rows loaded by the server's own
// COPY from files, then the same index builds. On one server, each
// operation:
//
//   - generate: the rows of OLTPLAB_BENCH_TPCC_WAREHOUSES warehouses
//     (default 10) generated and encoded as COPY text by W workers
//     (OLTPLAB_BENCH_TPCC_WORKERS, default 4), nothing sent: what
//     generation alone costs (generate-s, generate-rows/s);
//   - files: those rows, written beforehand (not timed) as one file per
//     table and warehouse, read by the server itself with COPY FROM 'file'
//     (copy-s, copy-rows/s): each table in one transaction that truncates
//     it and copies its files WITH (FREEZE), one connection per table, as
//     oltplab's build loads them
//     (OLTPLAB_BENCH_TPCC_FREEZE=0: the files on W connections, one COPY
//     each, no FREEZE); then the index builds (files-index-s) and the
//     primary keys' attach, the only constraint check, without a scan
//     (files-attach-s);
//   - oltplab: load.Build, generation streamed through COPY FROM STDIN by W
//     workers (load-s, load-rows/s), its index builds (index-s), stored
//     procedures and statistics (total-s).
//
// The files and oltplab builds alternate (files first in odd operations),
// so a shared machine's changing load weighs on both alike. The ratios
// load-x (oltplab's load over the files' COPY) and build-x (load and
// indexes over the files' COPY and indexes) are the share against the
// limit. TPC-C has no foreign keys in oltplab's schema (clause 1.3 asks
// none), so the constraint checks are the keys' attach (inside oltplab's
// index-s).
//
//	OLTPLAB_SERVER_PROFILE=bench OLTPLAB_SERVERS=postgres scripts/testservers.sh run \
//	  go test -run '^$' -bench TPCCBuild -benchtime 1x -timeout 1h ./internal/dialect/postgres
func BenchmarkTPCCBuild(b *testing.B) {
	warehouses, err := strconv.Atoi(envOr("OLTPLAB_BENCH_TPCC_WAREHOUSES", "10"))
	if err != nil || warehouses < 1 {
		b.Fatal("OLTPLAB_BENCH_TPCC_WAREHOUSES: want a positive number")
	}
	workers, err := strconv.Atoi(envOr("OLTPLAB_BENCH_TPCC_WORKERS", "4"))
	if err != nil || workers < 1 {
		b.Fatal("OLTPLAB_BENCH_TPCC_WORKERS: want a positive number")
	}
	ctx := context.Background()
	b.StopTimer()
	dir, files, rows := dbtest.WriteTPCCFiles(b, warehouses, testSeed, testLoadTime)
	defer os.RemoveAll(dir)
	var gen, fileCopy, fileIndex, fileAttach, ourLoad, ourIndex, ourTotal float64
	generate := func() {
		t := time.Now()
		if err := generateTPCC(warehouses, workers); err != nil {
			b.Fatal(err)
		}
		gen += time.Since(t).Seconds()
	}
	viaFiles := func() {
		d, _ := openTest(b)
		if err := d.CreateTables(ctx); err != nil {
			b.Fatal(err)
		}
		t := time.Now()
		if err := copyTPCCFiles(ctx, d, files, workers); err != nil {
			b.Fatal(err)
		}
		fileCopy += time.Since(t).Seconds()
		t = time.Now()
		if err := d.buildIndexes(ctx); err != nil {
			b.Fatal(err)
		}
		fileIndex += time.Since(t).Seconds()
		t = time.Now()
		if err := d.attachKeys(ctx); err != nil {
			b.Fatal(err)
		}
		fileAttach += time.Since(t).Seconds()
	}
	viaOltplab := func() {
		d, _ := openTest(b)
		res, err := load.Build(ctx, d, load.Options{Warehouses: warehouses, Workers: workers, Seed: testSeed}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if res.TotalRows != rows {
			b.Fatalf("oltplab loaded %d rows, the files hold %d", res.TotalRows, rows)
		}
		ourLoad += res.LoadSeconds
		ourIndex += res.IndexSeconds
		ourTotal += res.TotalSeconds
	}
	b.StartTimer()
	for i := range b.N {
		generate()
		if i%2 == 0 {
			viaFiles()
			viaOltplab()
		} else {
			viaOltplab()
			viaFiles()
		}
	}
	n, r := float64(b.N), float64(rows)
	b.ReportMetric(r, "rows")
	b.ReportMetric(gen/n, "generate-s")
	b.ReportMetric(r*n/gen, "generate-rows/s")
	b.ReportMetric(fileCopy/n, "copy-s")
	b.ReportMetric(r*n/fileCopy, "copy-rows/s")
	b.ReportMetric(fileIndex/n, "files-index-s")
	b.ReportMetric(fileAttach/n, "files-attach-s")
	b.ReportMetric(ourLoad/n, "load-s")
	b.ReportMetric(r*n/ourLoad, "load-rows/s")
	b.ReportMetric(ourIndex/n, "index-s")
	b.ReportMetric(ourTotal/n, "total-s")
	b.ReportMetric(ourLoad/fileCopy, "load-x")
	b.ReportMetric((ourLoad+ourIndex)/(fileCopy+fileIndex+fileAttach), "build-x")
}

// tpccRows generates the population of warehouses 1..n (the items with
// warehouse 0) for one worker: the warehouses next hands out, as load.Build
// does.
func tpccRows(n int, next *atomic.Int64, emit func(tpcc.Row) error) error {
	gen := tpcc.NewGenerator(testSeed, tpcc.NewLoadConstants(tpcc.NewRand(testSeed, tpcc.ConstantsStream)), testLoadTime)
	for {
		w := int(next.Add(1)) - 1
		switch {
		case w > n:
			return nil
		case w == 0:
			if err := gen.Items(emit); err != nil {
				return err
			}
		default:
			if err := gen.Warehouse(w, emit); err != nil {
				return err
			}
		}
	}
}

// generateTPCC generates and encodes the rows of n warehouses on workers
// goroutines and drops them.
func generateTPCC(n, workers int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			var line []byte
			errs <- tpccRows(n, &next, func(r tpcc.Row) error {
				line = r.AppendTSV(line[:0])
				return nil
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// copyTPCCFiles has the server read the files, workers at a time.
func copyTPCCFiles(ctx context.Context, d *Database, files []dbtest.TPCCFile, workers int) error {
	if envOr("OLTPLAB_BENCH_TPCC_FREEZE", "1") == "1" {
		return copyTPCCFilesFrozen(ctx, d, files)
	}
	stmts := make([]string, len(files))
	for i, f := range files {
		sql := copySQL[f.Table]
		stmts[i] = sql[:len(sql)-len("STDIN")] + "'" + f.Path + "'"
	}
	return copyStatements(ctx, d, stmts, workers)
}

// copyTPCCFilesFrozen loads each table in one transaction that truncates it
// first, with COPY ... (FREEZE), one connection per table, as NewLoaders
// does.
func copyTPCCFilesFrozen(ctx context.Context, d *Database, files []dbtest.TPCCFile) error {
	workers := numTables
	byTable := map[tpcc.Table][]string{}
	for _, f := range files {
		byTable[f.Table] = append(byTable[f.Table], f.Path)
	}
	next := make(chan tpcc.Table, numTables)
	for _, t := range []tpcc.Table{tpcc.OrderLine, tpcc.Stock, tpcc.Customer, tpcc.History, tpcc.Orders,
		tpcc.NewOrderTable, tpcc.Item, tpcc.District, tpcc.Warehouse} {
		next <- t
	}
	close(next)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			c, err := d.connect(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(ctx)
			for t := range next {
				sql := copySQL[t]
				sql = sql[:len(sql)-len("STDIN")]
				stmts := []string{"BEGIN", "TRUNCATE " + t.String()}
				for _, p := range byTable[t] {
					stmts = append(stmts, sql+"'"+p+"' WITH (FREEZE)")
				}
				stmts = append(stmts, "COMMIT")
				for _, s := range stmts {
					if _, err := c.Exec(ctx, s); err != nil {
						errs <- fmt.Errorf("%s: %w", s, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
