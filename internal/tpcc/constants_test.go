package tpcc

import (
	"fmt"
	"testing"
)

func TestValidRunConstants(t *testing.T) {
	base := Constants{CLast: 100, CID: 500, OLIID: 4000}
	with := func(c Constants, cLast int) Constants { c.CLast = cLast; return c }
	tests := []struct {
		name      string
		load, run Constants
		wantErr   bool
	}{
		{"delta 65", base, with(base, 165), false},
		{"delta 119", base, with(base, 219), false},
		{"delta -65", base, with(base, 35), false},
		{"delta 95", base, with(base, 195), false},
		{"delta 97", base, with(base, 197), false},
		{"delta 64", base, with(base, 164), true},
		{"delta 120", base, with(base, 220), true},
		{"delta 96", base, with(base, 196), true},
		{"delta -96", base, with(base, 4), true},
		{"delta 112", base, with(base, 212), true},
		{"delta 0", base, base, true},
		{"run C_LAST above 255", with(base, 200), with(base, 300), true},
		{"run C_ID above 1023", base, Constants{CLast: 165, CID: 1024, OLIID: 1}, true},
		{"run OL_I_ID negative", base, Constants{CLast: 165, CID: 1, OLIID: -1}, true},
		{"load OL_I_ID above 8191", Constants{CLast: 100, OLIID: 8192}, Constants{CLast: 165}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidRunConstants(tt.load, tt.run)
			if (err != nil) != tt.wantErr {
				t.Errorf("ValidRunConstants(%+v, %+v) = %v, want error %v", tt.load, tt.run, err, tt.wantErr)
			}
		})
	}
}

func TestNewRunConstantsAlwaysValid(t *testing.T) {
	r := NewRand(1, ConstantsStream)
	for cLast := 0; cLast <= ACLast; cLast++ {
		t.Run(fmt.Sprint("load C_LAST ", cLast), func(t *testing.T) {
			load := NewLoadConstants(r)
			load.CLast = cLast
			deltas := map[int]bool{}
			for range 50 {
				run := NewRunConstants(r, load)
				if err := ValidRunConstants(load, run); err != nil {
					t.Fatalf("NewRunConstants gave invalid constants: %v", err)
				}
				deltas[run.CLast-load.CLast] = true
			}
			if len(deltas) < 10 {
				t.Errorf("%d distinct C_LAST deltas in 50 draws, want a random choice", len(deltas))
			}
		})
	}
}

func TestNewLoadConstantsRange(t *testing.T) {
	r := NewRand(2, ConstantsStream)
	for range 10000 {
		c := NewLoadConstants(r)
		if c.CLast < 0 || c.CLast > ACLast || c.CID < 0 || c.CID > ACID || c.OLIID < 0 || c.OLIID > AOLIID {
			t.Fatalf("NewLoadConstants = %+v, outside [0..A]", c)
		}
	}
}
