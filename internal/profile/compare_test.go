package profile

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestRatio(t *testing.T) {
	tests := []struct {
		name     string
		num, den []float64
		want     RatioCI
	}{
		{
			// Hand computed: CV 5% a side, V = 2 * 0.05^2/3, Welch df
			// exactly 4, t = 2.776445; 2 * exp(-/+ t*sqrt(V)).
			name: "2x, CI excludes 1",
			num:  []float64{200, 210, 190}, den: []float64{100, 105, 95},
			want: RatioCI{Defined: true, Ratio: 2, HasCI: true, Lo: 1.785679980, Hi: 2.240043034, Significant: true},
		},
		{
			// Welch df 3.92 -> 3, t = 3.182446.
			name: "1.04x, CI contains 1",
			num:  []float64{104, 110, 98}, den: []float64{100, 105, 95},
			want: RatioCI{Defined: true, Ratio: 1.04, HasCI: true, Lo: 0.903885439, Hi: 1.196611820},
		},
		{
			name: "identical repeats, point interval",
			num:  []float64{150, 150, 150}, den: []float64{100, 100, 100},
			want: RatioCI{Defined: true, Ratio: 1.5, HasCI: true, Lo: 1.5, Hi: 1.5, Significant: true},
		},
		{
			// Observed: two repeats a side gave an interval on one degree
			// of freedom; now none is drawn.
			name: "two repeats, too few runs",
			num:  []float64{150, 150}, den: []float64{100, 100},
			want: RatioCI{Defined: true, Ratio: 1.5, TooFew: true, Lo: 1.5, Hi: 1.5},
		},
		{
			name: "single repeats, too few runs",
			num:  []float64{300}, den: []float64{100},
			want: RatioCI{Defined: true, Ratio: 3, TooFew: true, Lo: 3, Hi: 3},
		},
		{
			// Fieller's interval had no finite end here (the
			// denominator's own interval reached 0); on the log scale it
			// is wide, positive, and not significant.
			name: "noisy denominator, wide and positive",
			num:  []float64{100, 110, 90}, den: []float64{1, 2, 27},
			want: RatioCI{Defined: true, Ratio: 10, HasCI: true, Lo: 0.255329532, Hi: 391.650739},
		},
		{
			name: "zero denominator",
			num:  []float64{1, 2, 3}, den: []float64{0, 0, 0},
			want: RatioCI{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Ratio(Summarize(tt.num), Summarize(tt.den))
			if got.Defined != tt.want.Defined || got.HasCI != tt.want.HasCI || got.TooFew != tt.want.TooFew ||
				got.Significant != tt.want.Significant || !near(got.Ratio, tt.want.Ratio, 1e-12) ||
				!near(got.Lo, tt.want.Lo, 1e-6*tt.want.Lo) || !near(got.Hi, tt.want.Hi, 1e-6*tt.want.Hi) {
				t.Errorf("Ratio(%v / %v)\n got %+v\nwant %+v", tt.num, tt.den, got, tt.want)
			}
		})
	}
}

// TestRatioAgreesWithFieller checks that for small spread the interval
// on the log scale is close to Fieller's, the interval for a ratio of
// means under normality: the roots of (b^2 - t^2 vb) r^2 - 2ab r + (a^2
// - t^2 va) with the same t.
func TestRatioAgreesWithFieller(t *testing.T) {
	num := Summarize([]float64{2000, 2010, 1990, 2005, 1995})
	den := Summarize([]float64{1000, 1004, 996, 1002, 998})
	got := Ratio(num, den)
	a, b := num.Mean, den.Mean
	va, vb := sq(num.StdErr()), sq(den.StdErr())
	t2 := sq(TQuantile975(7)) // Welch df for this pair is 7.6
	qa := b*b - t2*vb
	root := math.Sqrt(t2 * (a*a*vb + qa*va))
	lo, hi := (a*b-root)/qa, (a*b+root)/qa
	if !near(got.Lo, lo, 1e-4) || !near(got.Hi, hi, 1e-4) {
		t.Errorf("log scale [%v, %v], want near Fieller's [%v, %v]", got.Lo, got.Hi, lo, hi)
	}
}

func TestDiffKeys(t *testing.T) {
	tests := []struct {
		name string
		in   []map[string]string
		want []string
	}{
		{"none", nil, nil},
		{"one profile", []map[string]string{{"a": "1"}}, nil},
		{"same", []map[string]string{{"a": "1", "b": "2"}, {"b": "2", "a": "1"}}, nil},
		{"value differs", []map[string]string{{"a": "1", "b": "2"}, {"a": "1", "b": "3"}}, []string{"b"}},
		{"missing differs from empty", []map[string]string{{"a": "", "z": "x"}, {"z": "x"}}, []string{"a"}},
		{"three profiles, sorted", []map[string]string{
			{"host.disk": "nvme0n1", "db.shared_buffers": "8GB", "vus": "fib:89"},
			{"host.disk": "sda", "db.shared_buffers": "8GB", "vus": "fib:89"},
			{"host.disk": "sda", "db.shared_buffers": "8GB", "vus": "fib:89", "db.wal_sync_method": "fdatasync"},
		}, []string{"db.wal_sync_method", "host.disk"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DiffKeys(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("DiffKeys(%v) = %v, want %v", fmt.Sprint(tt.in), got, tt.want)
			}
		})
	}
}
