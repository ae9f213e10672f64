package dbtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// TPCCFile is one table's rows of one warehouse (0: the items), as the
// tab-separated text both PostgreSQL's COPY and MariaDB's LOAD DATA read.
type TPCCFile struct {
	Table tpcc.Table
	Path  string
}

// WriteTPCCFiles writes the rows of n warehouses, generated from seed as
// of at, into a new directory a server can read, one file per table and
// warehouse (what the build benchmarks have the server load from files:
// their limit). It returns the directory, the files and their rows.
func WriteTPCCFiles(b testing.TB, n int, seed uint64, at time.Time) (string, []TPCCFile, int64) {
	dir, err := os.MkdirTemp("", "oltplab-tpcc-files-")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	var files []TPCCFile
	var rows int64
	lc := tpcc.NewLoadConstants(tpcc.NewRand(seed, tpcc.ConstantsStream))
	for w := 0; w <= n; w++ {
		outs := map[tpcc.Table]*bufio.Writer{}
		var closers []*os.File
		var line []byte
		gen := tpcc.NewGenerator(seed, lc, at)
		emit := func(r tpcc.Row) error {
			out := outs[r.Table()]
			if out == nil {
				path := filepath.Join(dir, fmt.Sprintf("%s.%d.tsv", r.Table(), w))
				f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
				if err != nil {
					return err
				}
				closers = append(closers, f)
				out = bufio.NewWriterSize(f, 1<<20)
				outs[r.Table()] = out
				files = append(files, TPCCFile{r.Table(), path})
			}
			rows++
			line = r.AppendTSV(line[:0])
			_, err := out.Write(line)
			return err
		}
		if w == 0 {
			err = gen.Items(emit)
		} else {
			err = gen.Warehouse(w, emit)
		}
		for _, out := range outs {
			if ferr := out.Flush(); err == nil {
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
	return dir, files, rows
}
