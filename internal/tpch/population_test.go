package tpch

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestTextPool(t *testing.T) {
	p := sharedTextPool()
	if len(p.b) != textPoolSize {
		t.Fatalf("text pool of %d bytes, want %d", len(p.b), textPoolSize)
	}
	var allowed [256]bool
	for _, c := range "abcdefghijklmnopqrstuvwxyzT ,.;:?!-" {
		allowed[c] = true
	}
	for i, c := range p.b {
		if !allowed[c] {
			t.Fatalf("text pool byte %d is %q", i, c)
		}
	}
	if sharedTextPool() != p {
		t.Error("a second generator built another text pool while the first is alive")
	}
}

// TestRows checks each table's rows against its columns: as many values
// in AppendTBL and AppendArgs as columns, and no value holding the
// separator or a backslash, which COPY and LOAD DATA would misread.
func TestRowShapes(t *testing.T) {
	s, _ := ParseScale("0.01")
	g := NewGenerator(s)
	seen := map[Table]bool{}
	var line []byte
	var args []any
	for _, tb := range GeneratedTables {
		cs, _ := s.Chunks(tb, 1)
		err := g.Generate(cs[0], func(r Row) error {
			tb := r.Table()
			line = r.AppendTBL(line[:0])
			args = r.AppendArgs(args[:0])
			n := len(tb.Columns())
			if f := bytes.Count(line, []byte{'|'}) + 1; f != n || line[len(line)-1] != '\n' {
				return errorf("%s: %q has %d fields, want %d and a newline", tb, line, f, n)
			}
			if bytes.ContainsAny(line[:len(line)-1], "\\\t\n") {
				return errorf("%s: %q holds a backslash, tab or newline", tb, line)
			}
			if len(args) != n {
				return errorf("%s: %d arguments, want %d", tb, len(args), n)
			}
			for i, f := range strings.Split(string(line[:len(line)-1]), "|") {
				if s, ok := args[i].(string); ok && s != f {
					return errorf("%s column %s: argument %q, text %q", tb, tb.Columns()[i].Name, s, f)
				}
			}
			seen[tb] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != TableCount {
		t.Errorf("rows of %d tables, want %d", len(seen), TableCount)
	}
}

func TestGenerateStops(t *testing.T) {
	s, _ := ParseScale("0.01")
	g := NewGenerator(s)
	stop := errors.New("stop")
	for _, tb := range GeneratedTables {
		n := 0
		cs, _ := s.Chunks(tb, 1)
		err := g.Generate(cs[0], func(Row) error {
			if n++; n == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || n != 3 {
			t.Errorf("%s: Generate went on after an error (%d rows, %v)", tb, n, err)
		}
	}
	for _, c := range []Chunk{{Table: Part, First: 0, Count: 1}, {Table: Supplier, First: 100, Count: 2}, {Table: PartSupp, First: 1, Count: 1}} {
		if err := g.Generate(c, func(Row) error { return nil }); err == nil {
			t.Errorf("Generate(%v) has no error", c)
		}
	}
}

// TestParallelChunks generates chunks concurrently and sequentially and
// compares their checksums.
func TestParallelChunks(t *testing.T) {
	s, _ := ParseScale("0.01")
	g := NewGenerator(s)
	var chunks []Chunk
	for _, tb := range GeneratedTables {
		cs, _ := s.Chunks(tb, 4)
		chunks = append(chunks, cs...)
	}
	sum := func(c Chunk) uint64 {
		var total uint64
		var line []byte
		_ = g.Generate(c, func(r Row) error {
			line = r.AppendTBL(line[:0])
			d := md5.Sum(line)
			total += binary.BigEndian.Uint64(d[:8])
			return nil
		})
		return total
	}
	var seq uint64
	for _, c := range chunks {
		seq += sum(c)
	}
	var par uint64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range chunks {
		wg.Go(func() {
			v := sum(c)
			mu.Lock()
			par += v
			mu.Unlock()
		})
	}
	wg.Wait()
	if par != seq {
		t.Errorf("chunks generated in parallel sum to %d, in sequence to %d", par, seq)
	}
}

func TestKeys(t *testing.T) {
	// O_ORDERKEY: eight keys used in each group of 32 (4.2.3).
	for i, want := range map[int64]int64{1: 1, 7: 7, 8: 32, 9: 33, 15: 39, 16: 64} {
		if got := sparseKey(i, 0); got != want {
			t.Errorf("sparseKey(%d, 0) = %d, want %d", i, got, want)
		}
	}
	if got := sparseKey(1, 1); got != 9 {
		t.Errorf("sparseKey(1, 1) = %d, want 9 (slot 1 of the first group)", got)
	}
	// PS_SUPPKEY: four distinct suppliers per part, in range (4.2.3), for
	// the 20 parts per supplier of every scale.
	for _, suppliers := range []int64{100, 10000} {
		for p := int64(1); p <= 20*suppliers; p += 37 {
			seen := map[int64]bool{}
			for i := int64(0); i < suppliersPerPart; i++ {
				s := partSupplier(p, i, suppliers)
				if s < 1 || s > suppliers || seen[s] {
					t.Fatalf("part %d of %d suppliers: supplier %d", p, suppliers, s)
				}
				seen[s] = true
			}
		}
	}
	if got := retailPrice(1); got != 90100 {
		t.Errorf("retailPrice(1) = %d, want 90100 (901.00)", got)
	}
}
