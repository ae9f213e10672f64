package mysql

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/load"
)

// BenchmarkTPCCBuild measures a MariaDB build against its limit, as the
// PostgreSQL benchmark of the same name does: the same rows written
// beforehand (not timed) as one file per table and warehouse, read by the
// server itself with LOAD DATA INFILE on W connections with the loader's
// session settings (no unique or foreign key checks, no binary log)
// (copy-s, copy-rows/s), then CreateIndexes (files-index-s); against
// load.Build with W workers, generation streamed through LOAD DATA LOCAL
// INFILE (load-s, load-rows/s, index-s, total-s). The two alternate (files
// first in odd operations); load-x and build-x are the ratios.
// OLTPLAB_BENCH_TPCC_WAREHOUSES (10) and OLTPLAB_BENCH_TPCC_WORKERS (4).
// The server must be allowed to read the files (secure_file_priv empty, as
// scripts/testservers.sh starts it).
//
//	OLTPLAB_SERVER_PROFILE=bench OLTPLAB_SERVERS=mysql scripts/testservers.sh run \
//	  go test -run '^$' -bench TPCCBuild -benchtime 1x -timeout 1h ./internal/dialect/mysql
func BenchmarkTPCCBuild(b *testing.B) {
	env := func(k, def string) int {
		v := os.Getenv(k)
		if v == "" {
			v = def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s: want a positive number", k)
		}
		return n
	}
	warehouses := env("OLTPLAB_BENCH_TPCC_WAREHOUSES", "10")
	workers := env("OLTPLAB_BENCH_TPCC_WORKERS", "4")
	ctx := context.Background()
	b.StopTimer()
	dir, files, rows := dbtest.WriteTPCCFiles(b, warehouses, testSeed, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	defer os.RemoveAll(dir)
	var fileCopy, fileIndex, ourLoad, ourIndex, ourTotal float64
	viaFiles := func() {
		d, _ := openTest(b)
		if err := d.CreateTables(ctx); err != nil {
			b.Fatal(err)
		}
		t := time.Now()
		if err := loadTPCCFiles(ctx, d, files, workers); err != nil {
			b.Fatal(err)
		}
		fileCopy += time.Since(t).Seconds()
		t = time.Now()
		if err := d.CreateIndexes(ctx); err != nil {
			b.Fatal(err)
		}
		fileIndex += time.Since(t).Seconds()
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
	b.ReportMetric(fileCopy/n, "copy-s")
	b.ReportMetric(r*n/fileCopy, "copy-rows/s")
	b.ReportMetric(fileIndex/n, "files-index-s")
	b.ReportMetric(ourLoad/n, "load-s")
	b.ReportMetric(r*n/ourLoad, "load-rows/s")
	b.ReportMetric(ourIndex/n, "index-s")
	b.ReportMetric(ourTotal/n, "total-s")
	b.ReportMetric(ourLoad/fileCopy, "load-x")
	b.ReportMetric((ourLoad+ourIndex)/(fileCopy+fileIndex), "build-x")
}

// loadTPCCFiles has the server read the files with LOAD DATA INFILE,
// workers at a time, each connection with the loader's session settings.
func loadTPCCFiles(ctx context.Context, d *DB, files []dbtest.TPCCFile, workers int) error {
	next := make(chan dbtest.TPCCFile, len(files))
	for _, f := range files {
		next <- f
	}
	close(next)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			c, err := d.db.Conn(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for _, s := range []string{"SET SESSION unique_checks = 0, foreign_key_checks = 0", "SET SESSION sql_log_bin = 0"} {
				if _, err := c.ExecContext(ctx, s); err != nil {
					errs <- fmt.Errorf("%s: %w", s, err)
					return
				}
			}
			for f := range next {
				// loadDataSQL's statement, with the server's own file.
				sql := strings.Replace(loadDataSQL(f.Table, "x"), "LOCAL INFILE 'Reader::x'", "INFILE '"+f.Path+"'", 1)
				if _, err := c.ExecContext(ctx, sql); err != nil {
					errs <- fmt.Errorf("%s: %w", sql, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
