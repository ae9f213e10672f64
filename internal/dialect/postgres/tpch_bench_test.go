package postgres

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchload"
)

// BenchmarkTPCHBuild builds a TPC-H database two ways on the same server,
// each into a fresh database with the same tables, keys and statistics:
//
//   - oltplab: tpchload.Build, the rows generated and streamed through COPY
//     FROM STDIN by W workers;
//   - copy-from-files: the same chunks written beforehand (not timed) as
//     dbgen's flat files, then read by the server itself, COPY FROM 'file',
//     on W connections: the database's own bulk path, the limit.
//
// It reports each phase in seconds (load, index, analyze, total; the text
// pool oltplab builds first is in total). OLTPLAB_BENCH_TPCH_SF (default 1)
// and OLTPLAB_BENCH_TPCH_WORKERS (default 2) set the scale and workers:
//
//	OLTPLAB_SERVER_PROFILE=bench scripts/testservers.sh run \
//	  go test -run '^$' -bench TPCHBuild -benchtime 1x -timeout 1h ./internal/dialect/postgres
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
	b.Run("copy-from-files", func(b *testing.B) {
		dir, files := writeTPCHFiles(b, sf, workers)
		defer os.RemoveAll(dir)
		for range b.N {
			d, _ := openTest(b)
			start := time.Now()
			if err := d.CreateTPCHTables(ctx); err != nil {
				b.Fatal(err)
			}
			t := time.Now()
			if err := copyFiles(ctx, d, files, workers); err != nil {
				b.Fatal(err)
			}
			load := time.Since(t)
			t = time.Now()
			if err := d.CreateTPCHIndexes(ctx); err != nil {
				b.Fatal(err)
			}
			index := time.Since(t)
			t = time.Now()
			if err := d.AnalyzeTPCH(ctx); err != nil {
				b.Fatal(err)
			}
			reportPhases(b, load, index, time.Since(t), time.Since(start))
		}
	})
	b.Run("oltplab", func(b *testing.B) {
		for range b.N {
			d, _ := openTest(b)
			res, err := tpchload.Build(ctx, d, tpchload.Options{Scale: sf, Workers: workers})
			if err != nil {
				b.Fatal(err)
			}
			sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
			reportPhases(b, sec(res.LoadSeconds), sec(res.IndexSeconds), sec(res.AnalyzeSeconds), sec(res.TotalSeconds))
			b.ReportMetric(res.TextSeconds, "text-s")
		}
	})
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func reportPhases(b *testing.B, load, index, analyze, total time.Duration) {
	b.ReportMetric(load.Seconds(), "load-s")
	b.ReportMetric(index.Seconds(), "index-s")
	b.ReportMetric(analyze.Seconds(), "analyze-s")
	b.ReportMetric(total.Seconds(), "total-s")
}

// tpchFile is one table's rows of one chunk, in dbgen's flat-file form.
type tpchFile struct {
	table tpch.Table
	path  string
}

// writeTPCHFiles writes the chunks tpchload loads, one file per table and
// chunk, into a directory the server can read.
func writeTPCHFiles(b *testing.B, sf tpch.Scale, workers int) (string, []tpchFile) {
	dir, err := os.MkdirTemp("", "oltplab-tpch-files-")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	jobs, err := tpchload.Jobs(sf, workers)
	if err != nil {
		b.Fatal(err)
	}
	g := tpch.NewGenerator(sf)
	var files []tpchFile
	for _, c := range jobs {
		outs := map[tpch.Table]*bufio.Writer{}
		var closers []*os.File
		var line []byte
		err := g.Generate(c, func(r tpch.Row) error {
			w := outs[r.Table()]
			if w == nil {
				path := filepath.Join(dir, fmt.Sprintf("%s.%d.tbl", r.Table(), c.Step))
				f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
				if err != nil {
					return err
				}
				closers = append(closers, f)
				w = bufio.NewWriterSize(f, 1<<20)
				outs[r.Table()] = w
				files = append(files, tpchFile{r.Table(), path})
			}
			line = r.AppendTBL(line[:0])
			_, err := w.Write(line)
			return err
		})
		for _, w := range outs {
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
		}
		for _, f := range closers {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return dir, files
}

// copyFiles has the server read the files, workers at a time, with the
// loader's session settings and one synchronous commit per connection at
// the end.
func copyFiles(ctx context.Context, d *Database, files []tpchFile, workers int) error {
	next := make(chan tpchFile, len(files))
	for _, f := range files {
		next <- f
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
			for f := range next {
				sql := tpchCopySQL[f.table]
				sql = sql[:len(sql)-len("STDIN WITH (FORMAT text, DELIMITER '|')")] + "'" + f.path + "' WITH (FORMAT text, DELIMITER '|')"
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
