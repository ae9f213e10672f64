package dbtest

import (
	"fmt"
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
	dir := ServerDir(b, "oltplab-tpcc-files-")
	var files []TPCCFile
	var rows int64
	lc := tpcc.NewLoadConstants(tpcc.NewRand(seed, tpcc.ConstantsStream))
	for w := 0; w <= n; w++ {
		out := NewFiles[tpcc.Table](dir)
		var line []byte
		gen := tpcc.NewGenerator(seed, lc, at)
		emit := func(r tpcc.Row) error {
			rows++
			line = r.AppendTSV(line[:0])
			path, err := out.Write(r.Table(), func() string { return fmt.Sprintf("%s.%d.tsv", r.Table(), w) }, line)
			if path != "" {
				files = append(files, TPCCFile{r.Table(), path})
			}
			return err
		}
		var err error
		if w == 0 {
			err = gen.Items(emit)
		} else {
			err = gen.Warehouse(w, emit)
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return dir, files, rows
}
