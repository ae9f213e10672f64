package tpch

import "testing"

func TestParseScale(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" for an error
	}{
		{"0.01", "0.01"}, {"0.1", "0.1"}, {"1", "1"}, {"10", "10"}, {".3", "0.3"}, {"0.015", "0.015"},
		{"1.0", "1"}, {" 3 ", "3"},
		{"0.001", ""}, {"0", ""}, {"1.5", ""}, {"-1", ""}, {"0.0001", ""}, {"abc", ""}, {"", ""},
		{"30000", ""}, {"1e3", ""},
	} {
		t.Run(c.in, func(t *testing.T) {
			s, err := ParseScale(c.in)
			switch {
			case c.want == "" && err == nil:
				t.Errorf("ParseScale(%q) = %s, want an error", c.in, s)
			case c.want != "" && err != nil:
				t.Errorf("ParseScale(%q): %v", c.in, err)
			case c.want != "" && s.String() != c.want:
				t.Errorf("ParseScale(%q) = %s, want %s", c.in, s, c.want)
			}
		})
	}
}

// TestRows: the cardinalities of clause 4.2.5, and dbgen's below SF 1.
func TestRows(t *testing.T) {
	for _, c := range []struct {
		sf   string
		want map[Table]int64
	}{
		{"1", map[Table]int64{Part: 200000, PartSupp: 800000, Supplier: 10000, Customer: 150000, Orders: 1500000, Nation: 25, Region: 5}},
		{"100", map[Table]int64{Part: 20000000, PartSupp: 80000000, Supplier: 1000000, Customer: 15000000, Orders: 150000000}},
		{"0.01", map[Table]int64{Part: 2000, PartSupp: 8000, Supplier: 100, Customer: 1500, Orders: 15000, Nation: 25}},
		{"0.015", map[Table]int64{Part: 3000, Supplier: 150, Customer: 2250, Orders: 22500}},
	} {
		s, err := ParseScale(c.sf)
		if err != nil {
			t.Fatal(err)
		}
		for tb, want := range c.want {
			if got, exact := s.Rows(tb); got != want || !exact {
				t.Errorf("SF %s: Rows(%s) = %d, %v; want %d, exact", c.sf, tb, got, exact, want)
			}
		}
		if _, exact := s.Rows(LineItem); exact {
			t.Errorf("SF %s: Rows(lineitem) says exact", c.sf)
		}
	}
}

func TestChunks(t *testing.T) {
	s, _ := ParseScale("0.01")
	for _, tb := range GeneratedTables {
		rows, _ := s.Rows(tb)
		for _, n := range []int{1, 3, 7} {
			cs, err := s.Chunks(tb, n)
			if err != nil {
				t.Fatalf("Chunks(%s, %d): %v", tb, n, err)
			}
			next := int64(1)
			for _, c := range cs {
				if c.First != next || c.Count < 1 {
					t.Fatalf("Chunks(%s, %d): %v after row %d", tb, n, c, next-1)
				}
				next += c.Count
			}
			if next-1 != rows {
				t.Errorf("Chunks(%s, %d) cover %d rows, want %d", tb, n, next-1, rows)
			}
		}
	}
	for _, tb := range []Table{PartSupp, LineItem} {
		if _, err := s.Chunks(tb, 2); err == nil {
			t.Errorf("Chunks(%s) splits a table generated with its parent", tb)
		}
	}
	if _, err := s.Chunks(Supplier, 101); err == nil {
		t.Error("Chunks splits 100 suppliers into 101 chunks")
	}
}
