package postgres

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchload"
)

// BenchmarkTPCHBuild builds a TPC-H database two ways on the same server,
// each into a fresh database with the same tables, keys and statistics:
//
//   - oltplab: tpchload.Build, the rows generated and streamed through COPY
//     FROM STDIN by W workers;
//   - files: the same chunks written beforehand (not timed) as dbgen's flat
//     files, then read by the server itself, COPY FROM 'file', on W
//     connections: the database's own bulk path, the limit.
//
// Each operation builds both, in turns (files first in odd operations,
// oltplab first in even ones), so that a shared machine's changing load
// weighs on both alike. It reports the mean seconds of each way's load
// (load-s) and whole build (total-s: tables, load, keys, statistics; for
// oltplab also the text pool it builds first, text-s) and the ratios of
// oltplab's to the files' (load-x, total-x). OLTPLAB_BENCH_TPCH_SF
// (default 1) and OLTPLAB_BENCH_TPCH_WORKERS (default 2) set the scale and
// the workers:
//
//	OLTPLAB_SERVER_PROFILE=bench OLTPLAB_SERVERS=postgres scripts/testservers.sh run \
//	  go test -run '^$' -bench TPCHBuild -benchtime 3x -timeout 1h ./internal/dialect/postgres
func BenchmarkTPCHBuild(b *testing.B) {
	sf, err := tpch.ParseScale(envOr("OLTPLAB_BENCH_TPCH_SF", "1"))
	if err != nil {
		b.Fatal(err)
	}
	workers, err := strconv.Atoi(envOr("OLTPLAB_BENCH_TPCH_WORKERS", "2"))
	if err != nil || workers < 1 {
		b.Fatalf("OLTPLAB_BENCH_TPCH_WORKERS: want a positive number")
	}
	ctx := context.Background()
	b.StopTimer()
	dir, files := writeTPCHFiles(b, sf, workers)
	defer os.RemoveAll(dir)
	var fileLoad, fileTotal, ourLoad, ourTotal, ourText float64
	viaFiles := func() {
		d, _ := openTest(b)
		start := time.Now()
		if err := d.CreateTPCHTables(ctx); err != nil {
			b.Fatal(err)
		}
		t := time.Now()
		if err := copyFiles(ctx, d, files, workers); err != nil {
			b.Fatal(err)
		}
		fileLoad += time.Since(t).Seconds()
		if err := d.CreateTPCHIndexes(ctx); err != nil {
			b.Fatal(err)
		}
		if err := d.AnalyzeTPCH(ctx); err != nil {
			b.Fatal(err)
		}
		fileTotal += time.Since(start).Seconds()
	}
	viaOltplab := func() {
		d, _ := openTest(b)
		res, err := tpchload.Build(ctx, d, tpchload.Options{Scale: sf, Workers: workers})
		if err != nil {
			b.Fatal(err)
		}
		ourLoad += res.LoadSeconds
		ourTotal += res.TotalSeconds
		ourText += res.TextSeconds
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
	n := float64(b.N)
	b.ReportMetric(fileLoad/n, "files-load-s")
	b.ReportMetric(ourLoad/n, "oltplab-load-s")
	b.ReportMetric(ourLoad/fileLoad, "load-x")
	b.ReportMetric(fileTotal/n, "files-total-s")
	b.ReportMetric(ourTotal/n, "oltplab-total-s")
	b.ReportMetric(ourText/n, "text-s")
	b.ReportMetric(ourTotal/fileTotal, "total-x")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// tpchFile is one table's rows of one chunk, in dbgen's flat-file form.
type tpchFile struct {
	table tpch.Table
	path  string
}

// writeTPCHFiles writes the chunks tpchload loads, one file per table and
// chunk, into a directory the server can read.
func writeTPCHFiles(b *testing.B, sf tpch.Scale, workers int) (string, []tpchFile) {
	dir := dbtest.ServerDir(b, "oltplab-tpch-files-")
	jobs, err := tpchload.Jobs(sf, workers)
	if err != nil {
		b.Fatal(err)
	}
	g := tpch.NewGenerator(sf)
	var files []tpchFile
	for _, c := range jobs {
		out := dbtest.NewFiles[tpch.Table](dir)
		var line []byte
		err := g.Generate(c, func(r tpch.Row) error {
			line = r.AppendTBL(line[:0])
			path, err := out.Write(r.Table(), func() string { return fmt.Sprintf("%s.%d.tbl", r.Table(), c.Step) }, line)
			if path != "" {
				files = append(files, tpchFile{r.Table(), path})
			}
			return err
		})
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return dir, files
}

// copyFiles has the server read the files, workers at a time.
func copyFiles(ctx context.Context, d *Database, files []tpchFile, workers int) error {
	const from = "STDIN WITH (FORMAT text, DELIMITER '|')"
	stmts := make([]string, len(files))
	for i, f := range files {
		sql := tpchCopySQL[f.table]
		stmts[i] = sql[:len(sql)-len(from)] + "'" + f.path + "' WITH (FORMAT text, DELIMITER '|')"
	}
	return copyStatements(ctx, d, stmts, workers)
}

// copyStatements runs the COPY ... FROM 'file' statements, workers at a
// time, with the loader's session settings and one synchronous commit
// per connection at the end (as the loaders' Close): the limit the
// build benchmarks measure oltplab's loading against.
func copyStatements(ctx context.Context, d *Database, stmts []string, workers int) error {
	next := make(chan string, len(stmts))
	for _, s := range stmts {
		next <- s
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
			if _, err := c.Exec(ctx, loadSettings); err != nil {
				errs <- err
				return
			}
			for sql := range next {
				if _, err := c.Exec(ctx, sql); err != nil {
					errs <- fmt.Errorf("%s: %w", sql, err)
					return
				}
			}
			if _, err := c.Exec(ctx, "SET synchronous_commit = on"); err == nil {
				_, err = c.Exec(ctx, "SELECT pg_current_xact_id()")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
