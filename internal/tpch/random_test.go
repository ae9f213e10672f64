package tpch

import (
	"math/big"
	"testing"
)

func TestMulMod(t *testing.T) {
	m := big.NewInt(rngM)
	for _, c := range [][2]int64{{0, 0}, {1, rngM - 1}, {rngM - 1, rngM - 1}, {16807, 2147483646}, {123456789, 987654321}} {
		want := new(big.Int).Mul(big.NewInt(c[0]), big.NewInt(c[1]))
		want.Mod(want, m)
		if got := mulMod(c[0], c[1]); got != want.Int64() {
			t.Errorf("mulMod(%d, %d) = %d, want %d", c[0], c[1], got, want)
		}
	}
}

func TestPowMod(t *testing.T) {
	x := int64(1)
	for n := int64(0); n < 300; n++ {
		if got := powMod(n); got != x {
			t.Fatalf("powMod(%d) = %d, want %d", n, got, x)
		}
		x = x * rngA % rngM
	}
}

// TestSkipRows: skipping n rows lands where n rows of any usage end.
func TestSkipRows(t *testing.T) {
	for _, per := range []int64{1, 2, 7, 92} {
		walked := newStream(seedLQty, per)
		for row := 0; row < 50; row++ {
			for range row % int(per+1) { // a row uses from 0 to per draws
				walked.next()
			}
			walked.endRow()
		}
		skipped := newStream(seedLQty, per)
		skipped.skipRows(50)
		if walked.seed != skipped.seed {
			t.Errorf("boundary %d: 50 rows walked end at %d, skipped at %d", per, walked.seed, skipped.seed)
		}
	}
}

func TestUniformBounds(t *testing.T) {
	s := newStream(seedCAbal, 1)
	for range 100000 {
		if v := s.uniform(-99999, 999999); v < -99999 || v > 999999 {
			t.Fatalf("uniform(-99999, 999999) = %d", v)
		}
		if v := s.alnumBits(); v > 0 || v < -2147483648 {
			t.Fatalf("alnumBits() = %d, want in [-2^31, 0]", v)
		}
	}
}
