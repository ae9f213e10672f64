package tpch_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchref"
)

// checksums generates chunks and returns each table's checksum of the
// columns cols (all when nil), rows in dbgen's flat-file form.
func checksums(t *testing.T, g *tpch.Generator, chunks []tpch.Chunk, cols map[tpch.Table][]string) map[tpch.Table]*tpchref.Checksum {
	t.Helper()
	sums := map[tpch.Table]*tpchref.Checksum{}
	for _, tb := range tpch.Tables {
		sums[tb] = &tpchref.Checksum{}
	}
	var line, proj []byte
	for _, c := range chunks {
		err := g.Generate(c, func(r tpch.Row) error {
			line = r.AppendTBL(line[:0])
			line = line[:len(line)-1]
			keep := cols[r.Table()]
			if keep == nil {
				sums[r.Table()].Add(line)
				return nil
			}
			proj = project(proj[:0], line, r.Table().ColumnNames(), keep)
			sums[r.Table()].Add(proj)
			return nil
		})
		if err != nil {
			t.Fatalf("generate %s: %v", c, err)
		}
	}
	return sums
}

// project appends the fields of line named keep, joined by '|'.
func project(dst, line []byte, names, keep []string) []byte {
	fields := bytes.Split(line, []byte{'|'})
	first := true
	for i, n := range names {
		if !slices.Contains(keep, n) {
			continue
		}
		if !first {
			dst = append(dst, '|')
		}
		first = false
		dst = append(dst, fields[i]...)
	}
	return dst
}

// TestReferenceRows compares the population, row by row, with dbgen's
// flat files as tpchgen-cli writes them (byte for byte dbgen's), at SF
// 0.01 and 0.1; then generates every table again in three chunks, last
// chunk first, and compares the chunks' per-table checksums with the
// reference's.
func TestReferenceRows(t *testing.T) {
	for _, sf := range []string{"0.01", "0.1"} {
		t.Run("SF"+sf, func(t *testing.T) {
			scale, err := tpch.ParseScale(sf)
			if err != nil {
				t.Fatal(err)
			}
			dir := tpchref.Tables(t, sf)
			g := tpch.NewGenerator(scale)
			want := compareFiles(t, g, dir)
			for tb, c := range want {
				n, exact := scale.Rows(tb)
				if exact && c.Rows != n {
					t.Errorf("%s: the reference has %d rows, Scale.Rows says %d", tb, c.Rows, n)
				}
			}

			var chunks []tpch.Chunk
			for _, tb := range tpch.GeneratedTables {
				cs, err := scale.Chunks(tb, 3)
				if err != nil {
					t.Fatal(err)
				}
				slices.Reverse(cs)
				chunks = append(chunks, cs...)
			}
			got := checksums(t, g, chunks, nil)
			for _, tb := range tpch.Tables {
				if *got[tb] != *want[tb] {
					t.Errorf("%s in 3 chunks: %d rows, checksum %s; the reference: %d rows, checksum %s",
						tb, got[tb].Rows, got[tb], want[tb].Rows, want[tb])
				}
			}
		})
	}
}

// compareFiles generates the whole population and compares each row
// with the next line of its table's file; it returns the files'
// checksums.
func compareFiles(t *testing.T, g *tpch.Generator, dir string) map[tpch.Table]*tpchref.Checksum {
	t.Helper()
	files := map[tpch.Table]*bufio.Scanner{}
	sums := map[tpch.Table]*tpchref.Checksum{}
	for _, tb := range tpch.Tables {
		f, err := os.Open(filepath.Join(dir, tb.String()+".tbl"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		files[tb], sums[tb] = s, &tpchref.Checksum{}
	}
	differ := map[tpch.Table]int{}
	var line []byte
	for _, tb := range tpch.GeneratedTables {
		cs, err := g.Scale().Chunks(tb, 1)
		if err != nil {
			t.Fatal(err)
		}
		err = g.Generate(cs[0], func(r tpch.Row) error {
			tb := r.Table()
			line = r.AppendTBL(line[:0])
			got := line[:len(line)-1]
			s := files[tb]
			if !s.Scan() {
				return fmt.Errorf("%s: the reference ends before row %d", tb, sums[tb].Rows+1)
			}
			want := bytes.TrimSuffix(s.Bytes(), []byte{'|'})
			sums[tb].Add(want)
			if !bytes.Equal(got, want) {
				if differ[tb]++; differ[tb] <= 3 {
					t.Errorf("%s row %d:\n got %s\nwant %s", tb, sums[tb].Rows, got, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tb := range tpch.Tables {
		if files[tb].Scan() {
			t.Errorf("%s: the reference has more rows than the %d generated", tb, sums[tb].Rows)
		}
		if err := files[tb].Err(); err != nil {
			t.Fatalf("read the reference %s: %v", tb, err)
		}
		if differ[tb] > 0 {
			t.Errorf("%s: %d of %d rows differ from the reference", tb, differ[tb], sums[tb].Rows)
		}
	}
	return sums
}

// TestReferenceDuckDB compares the population with DuckDB's dbgen, a
// second implementation, on the columns it generates as dbgen does
// (comments and addresses come from another text generator there): the
// whole population at SF 0.01, and at SF 0.1 the rows of DuckDB's second
// chunk of three, generated on their own from their first row number.
func TestReferenceDuckDB(t *testing.T) {
	for _, c := range []struct {
		sf             string
		children, step int
	}{{"0.01", 1, 0}, {"0.1", 3, 1}} {
		t.Run(fmt.Sprintf("SF%s/chunk%dof%d", c.sf, c.step+1, c.children), func(t *testing.T) {
			scale, err := tpch.ParseScale(c.sf)
			if err != nil {
				t.Fatal(err)
			}
			ref := tpchref.DuckDBSums(t, c.sf, c.children, c.step)
			g := tpch.NewGenerator(scale)
			cols := map[tpch.Table][]string{}
			for _, tb := range tpch.Tables {
				r, ok := ref[tb.String()]
				if !ok {
					t.Fatalf("DuckDB's answer lacks %s", tb)
				}
				cols[tb] = r.Columns
			}
			// Each generated table's rows, from DuckDB's row range of it;
			// PARTSUPP and LINEITEM come with their parents' ranges.
			for _, tb := range tpch.GeneratedTables {
				r := ref[tb.String()]
				chunk := tpch.Chunk{Table: tb, Step: 1, Children: 1, First: r.First, Count: r.Last - r.First + 1}
				got := checksums(t, g, []tpch.Chunk{chunk}, cols)
				check := []tpch.Table{tb}
				switch tb {
				case tpch.Part:
					check = append(check, tpch.PartSupp)
				case tpch.Orders:
					check = append(check, tpch.LineItem)
				}
				for _, ct := range check {
					want := ref[ct.String()]
					if got[ct].Rows != want.Rows || got[ct].String() != want.Sum {
						t.Errorf("%s rows of %d..%d: %d rows, checksum %s; DuckDB: %d rows, checksum %s",
							ct, r.First, r.Last, got[ct].Rows, got[ct], want.Rows, want.Sum)
					}
				}
			}
		})
	}
}
