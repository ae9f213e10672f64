package profile

import (
	"math"
	"testing"
)

func TestPaired(t *testing.T) {
	e := math.Exp
	tests := []struct {
		name     string
		num, den []float64
		want     PairedCI
	}{
		{
			// d = 0.1, 0, -0.1: mean 0, sd 0.1, t(2) = 4.302653;
			// exp(-/+ 4.302653 * 0.1/sqrt(3)).
			name: "hand computed",
			num:  []float64{1000 * e(0.1), 1000, 1000 * e(-0.1)}, den: []float64{1000, 1000, 1000},
			want: PairedCI{Pairs: 3, Defined: true, Ratio: 1, HasCI: true, Lo: 0.780037, Hi: 1.281990},
		},
		{
			name: "the same ratio in every pair",
			num:  []float64{500, 600, 700}, den: []float64{1000, 1200, 1400},
			want: PairedCI{Pairs: 3, Defined: true, Ratio: 0.5, HasCI: true, Lo: 0.5, Hi: 0.5, Significant: true},
		},
		{
			name: "two pairs: too few runs",
			num:  []float64{500, 600}, den: []float64{1000, 1000},
			want: PairedCI{Pairs: 2, Defined: true, Ratio: math.Sqrt(0.3), Lo: math.Sqrt(0.3), Hi: math.Sqrt(0.3), TooFew: true},
		},
		{
			name: "a pair with an empty run is left out",
			num:  []float64{500, 0, 600}, den: []float64{1000, 1000, 1000},
			want: PairedCI{Pairs: 2, Defined: true, Ratio: math.Sqrt(0.3), Lo: math.Sqrt(0.3), Hi: math.Sqrt(0.3), TooFew: true},
		},
		{name: "no pairs", want: PairedCI{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Paired(tt.num, tt.den)
			w := tt.want
			if got.Pairs != w.Pairs || got.Defined != w.Defined || got.HasCI != w.HasCI || got.TooFew != w.TooFew ||
				got.Significant != w.Significant || !near(got.Ratio, w.Ratio, 1e-9) || !near(got.Lo, w.Lo, 1e-6) || !near(got.Hi, w.Hi, 1e-6) {
				t.Errorf("Paired(%v, %v)\n got %+v\nwant %+v", tt.num, tt.den, got, w)
			}
		})
	}
}

// TestPairedCancelsDrift: the host slows down by 40% over the
// experiment, alike for both targets; one target does half the other's
// work, give or take 1%. Unpaired, the drift is spread and the interval
// is wide; paired, it cancels.
func TestPairedCancelsDrift(t *testing.T) {
	den := []float64{1400, 1300, 1200, 1100, 1000}
	num := []float64{707, 646, 603, 548, 502}
	p := Paired(num, den)
	u := Ratio(Summarize(num), Summarize(den))
	if !p.HasCI || !u.HasCI {
		t.Fatalf("paired %+v, unpaired %+v: want both intervals", p, u)
	}
	if p.Lo > 0.5 || p.Hi < 0.5 || p.HalfWidth() > 0.02 {
		t.Errorf("paired %.3f [%.3f, %.3f]: want 0.5 within 2%%", p.Ratio, p.Lo, p.Hi)
	}
	if u.HalfWidth() < 5*p.HalfWidth() {
		t.Errorf("unpaired ±%.1f%%, paired ±%.1f%%: want the drift to widen the unpaired interval", 100*u.HalfWidth(), 100*p.HalfWidth())
	}
}

func TestAACheck(t *testing.T) {
	before := []float64{1000, 1010, 990}
	tests := []struct {
		name    string
		before  []float64
		again   float64
		defined bool
		drifted bool
	}{
		{"the same again", before, 1005, true, false},
		{"within the spread of one run", before, 1040, true, false},
		{"host slowed down", before, 900, true, true},
		{"host sped up", before, 1100, true, true},
		{"too few runs before", before[:2], 900, false, false},
		{"nothing measured again", before, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := AACheck(tt.before, tt.again)
			if d.Defined != tt.defined || d.Drifted != tt.drifted {
				t.Errorf("AACheck(%v, %v) = %+v, want defined %v drifted %v", tt.before, tt.again, d, tt.defined, tt.drifted)
			}
			if d.Defined && (d.Lo <= 0 || d.Lo > 1000 || d.Hi < 1000) {
				t.Errorf("prediction interval [%v, %v]: want a positive interval around the runs", d.Lo, d.Hi)
			}
		})
	}
	// Hand computed: logs' sd 0.0100003, t(2) sqrt(4/3) = 4.968275.
	d := AACheck(before, 1000)
	if !near(d.Lo, 951.5, 0.5) || !near(d.Hi, 1050.9, 0.5) {
		t.Errorf("prediction interval [%.1f, %.1f], want about [951.5, 1050.9]", d.Lo, d.Hi)
	}
}
