package profile

import (
	"fmt"
	"testing"
)

// TestTwoRunsDrawNoInterval reproduces what a user saw: two runs of a
// step gave a "95% interval" of ten times their spread, reaching below
// zero NOPM (t = 12.7 on one degree of freedom). Below MinRepeats runs no
// interval is drawn at all.
func TestTwoRunsDrawNoInterval(t *testing.T) {
	for _, xs := range [][]float64{{2848, 7120}, {18807, 21135}, {150, 150}} {
		t.Run(fmt.Sprint(xs), func(t *testing.T) {
			s := Summarize(xs)
			if s.HasCI() {
				t.Errorf("Summarize(%v).HasCI() = true (interval [%.0f, %.0f]), want no interval from two runs", xs, s.CILo, s.CIHi)
			}
			if s.CILo < 0 {
				t.Errorf("Summarize(%v).CILo = %.0f: below zero for a positive figure", xs, s.CILo)
			}
			r := Ratio(s, Summarize([]float64{1000, 1100, 1050}))
			if r.HasCI || !r.TooFew {
				t.Errorf("Ratio over two runs: HasCI %v TooFew %v, want no interval and too few", r.HasCI, r.TooFew)
			}
		})
	}
}

// TestPositiveIntervalsNeverBelowZero: NOPM, TPM and their ratios are
// positive, and so are their intervals however much the runs vary
// (examples/README.md once printed "0.73× (−0.25–2.31)").
func TestPositiveIntervalsNeverBelowZero(t *testing.T) {
	tests := []struct{ num, den []float64 }{
		{[]float64{600, 2000, 2900}, []float64{2400, 2500, 2700}},
		{[]float64{2848, 7120, 4360}, []float64{5000, 6100, 6700}},
		{[]float64{10, 1000, 30000}, []float64{1, 2000, 40}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.num, tt.den), func(t *testing.T) {
			n, d := Summarize(tt.num), Summarize(tt.den)
			for _, s := range []Summary{n, d} {
				if !s.HasCI() || s.CILo <= 0 || s.CILo > s.Mean || s.CIHi < s.Mean {
					t.Errorf("Summarize: interval [%g, %g] of mean %g: want a positive interval around the mean", s.CILo, s.CIHi, s.Mean)
				}
			}
			r := Ratio(n, d)
			if !r.HasCI || r.Lo <= 0 || r.Lo > r.Ratio || r.Hi < r.Ratio {
				t.Errorf("Ratio: %+v: want a positive interval around the ratio", r)
			}
		})
	}
}
