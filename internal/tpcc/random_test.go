package tpcc

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

func TestUniformRange(t *testing.T) {
	tests := []struct{ lo, hi int }{{1, 10}, {0, 255}, {5, 5}, {-3, 3}, {1, 100000}}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d..%d", tt.lo, tt.hi), func(t *testing.T) {
			r := NewRand(1, 2)
			seen := map[int]bool{}
			for range 200000 {
				v := r.Uniform(tt.lo, tt.hi)
				if v < tt.lo || v > tt.hi {
					t.Fatalf("Uniform(%d, %d) = %d, outside the range", tt.lo, tt.hi, v)
				}
				seen[v] = true
			}
			if want := tt.hi - tt.lo + 1; want <= 1000 && len(seen) != want {
				t.Errorf("Uniform(%d, %d) produced %d distinct values, want %d", tt.lo, tt.hi, len(seen), want)
			}
		})
	}
}

// nurandPMF is the exact distribution of NURand(a, x, y) with constant c,
// enumerated over all pairs (random(0,a), random(x,y)).
func nurandPMF(a, x, y, c int) []float64 {
	n := y - x + 1
	pmf := make([]float64, n)
	w := 1 / float64((a+1)*n)
	for i := 0; i <= a; i++ {
		for j := x; j <= y; j++ {
			pmf[((i|j)+c)%n] += w
		}
	}
	return pmf
}

func TestNURandDistribution(t *testing.T) {
	tests := []struct{ a, x, y, c int }{
		{ACLast, 0, 999, 0},
		{ACLast, 0, 999, 173},
		{ACID, 1, 3000, 259},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("NURand(%d,%d,%d)C=%d", tt.a, tt.x, tt.y, tt.c), func(t *testing.T) {
			const samples = 1000000
			r := NewRand(42, uint64(tt.c))
			counts := make([]int, tt.y-tt.x+1)
			for range samples {
				v := r.NURand(tt.a, tt.x, tt.y, tt.c)
				if v < tt.x || v > tt.y {
					t.Fatalf("NURand = %d, outside [%d, %d]", v, tt.x, tt.y)
				}
				counts[v-tt.x]++
			}
			pmf := nurandPMF(tt.a, tt.x, tt.y, tt.c)
			// Total variation distance between the sample and the exact law.
			var tv, uniformTV float64
			for i, p := range pmf {
				tv += math.Abs(float64(counts[i])/samples - p)
				uniformTV += math.Abs(1/float64(len(pmf)) - p)
			}
			tv /= 2
			uniformTV /= 2
			if tv > 0.03 {
				t.Errorf("total variation distance to the exact NURand law = %.4f, want <= 0.03", tv)
			}
			// The law is far from uniform: the test would notice a uniform generator.
			if uniformTV < 0.1 {
				t.Errorf("exact NURand law is within %.4f of uniform, want a skewed law", uniformTV)
			}
		})
	}
}

func TestNURandItemRange(t *testing.T) {
	r := NewRand(7, 7)
	for range 100000 {
		if v := r.NURand(AOLIID, 1, ItemCount, 8191); v < 1 || v > ItemCount {
			t.Fatalf("NURand(8191, 1, 100000) = %d, outside the range", v)
		}
	}
}

func TestRandStreams(t *testing.T) {
	draw := func(seed, stream uint64) []uint64 {
		r := NewRand(seed, stream)
		out := make([]uint64, 8)
		for i := range out {
			out[i] = r.Uint64()
		}
		return out
	}
	tests := []struct {
		name             string
		s1, st1, s2, st2 uint64
		wantSame         bool
	}{
		{"same seed and stream", 1, WarehouseStream(3), 1, WarehouseStream(3), true},
		{"other warehouse", 1, WarehouseStream(3), 1, WarehouseStream(4), false},
		{"other seed", 1, WarehouseStream(3), 2, WarehouseStream(3), false},
		{"items vs warehouse 0", 1, ItemsStream, 1, WarehouseStream(0), false},
		{"terminal vs warehouse", 1, TerminalStream(1), 1, WarehouseStream(1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := draw(tt.s1, tt.st1), draw(tt.s2, tt.st2)
			same := fmt.Sprint(a) == fmt.Sprint(b)
			if same != tt.wantSame {
				t.Errorf("sequences equal = %v, want %v", same, tt.wantSame)
			}
		})
	}
}

func TestAppendStrings(t *testing.T) {
	r := NewRand(3, 3)
	isAlnum := func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	isUpper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	tests := []struct {
		name     string
		gen      func(dst []byte) []byte
		min, max int
		valid    func(byte) bool
	}{
		{"a-string 8..16", func(d []byte) []byte { return r.AppendAString(d, 8, 16) }, 8, 16, isAlnum},
		{"a-string 300..500", func(d []byte) []byte { return r.AppendAString(d, 300, 500) }, 300, 500, isAlnum},
		{"a-string 24", func(d []byte) []byte { return r.AppendAString(d, 24, 24) }, 24, 24, isAlnum},
		{"n-string 16", func(d []byte) []byte { return r.AppendNString(d, 16, 16) }, 16, 16, isDigit},
		{"letters 2", func(d []byte) []byte { return r.AppendLetters(d, 2) }, 2, 2, isUpper},
		{"data 26..50", func(d []byte) []byte { return r.AppendData(d, 26, 50) }, 26, 50, isAlnum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("keep")
			lens := map[int]bool{}
			for range 20000 {
				b := tt.gen(append([]byte(nil), prefix...))
				if !bytes.HasPrefix(b, prefix) {
					t.Fatalf("appended over the existing bytes: %q", b)
				}
				s := b[len(prefix):]
				if len(s) < tt.min || len(s) > tt.max {
					t.Fatalf("length %d, want within [%d, %d]", len(s), tt.min, tt.max)
				}
				for _, c := range s {
					if !tt.valid(c) {
						t.Fatalf("character %q in %q not in the character set", c, s)
					}
				}
				lens[len(s)] = true
			}
			if got, want := len(lens), tt.max-tt.min+1; got != want {
				t.Errorf("%d distinct lengths, want %d", got, want)
			}
		})
	}
}

func TestAppendZip(t *testing.T) {
	r := NewRand(5, 5)
	for range 1000 {
		z := r.AppendZip(nil)
		if len(z) != 9 || string(z[4:]) != "11111" {
			t.Fatalf("zip %q, want 4 digits then 11111 (TPC-C 4.3.2.7)", z)
		}
		for _, c := range z[:4] {
			if c < '0' || c > '9' {
				t.Fatalf("zip %q has a non-digit", z)
			}
		}
	}
}

func TestAppendDataOriginal(t *testing.T) {
	r := NewRand(9, 9)
	const n = 100000
	original := 0
	positions := map[int]bool{}
	for range n {
		b := r.AppendData(nil, 26, 50)
		if i := bytes.Index(b, []byte(Original)); i >= 0 {
			original++
			positions[i] = true
		}
	}
	got := 100 * float64(original) / n
	if got < 9.5 || got > 10.5 {
		t.Errorf("ORIGINAL in %.2f%% of values, want about 10%% (TPC-C 4.3.3.1)", got)
	}
	if len(positions) < 40 {
		t.Errorf("ORIGINAL found at %d distinct positions, want it at random positions (0..42)", len(positions))
	}
}

func TestMoney(t *testing.T) {
	r := NewRand(11, 11)
	for range 100000 {
		if m := r.Money(100, 500000); m < 100 || m > 500000 {
			t.Fatalf("Money(1.00, 5000.00) = %d cents, outside the range", m)
		}
	}
}

func TestUniformNoAlloc(t *testing.T) {
	r := NewRand(1, 1)
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(1000, func() {
		_ = r.NURand(ACID, 1, 3000, 5)
		buf = r.AppendData(buf[:0], 26, 50)
	})
	if allocs != 0 {
		t.Errorf("allocations per call = %v, want 0", allocs)
	}
}
