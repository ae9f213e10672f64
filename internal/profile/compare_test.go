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
			// Hand computed: SE^2 100/3 and 25/3, Welch df exactly 4,
			// t = 2.776445; roots of 9935.76 r^2 - 40000 r + 39743.04.
			name: "2x, CI excludes 1",
			num:  []float64{200, 210, 190}, den: []float64{100, 105, 95},
			want: RatioCI{Defined: true, Ratio: 2, HasCI: true, Lo: 1.785136053, Hi: 2.240725571, Significant: true},
		},
		{
			// Welch df 3.92 -> 3, t = 3.182446.
			name: "1.04x, CI contains 1",
			num:  []float64{104, 110, 98}, den: []float64{100, 105, 95},
			want: RatioCI{Defined: true, Ratio: 1.04, HasCI: true, Lo: 0.902081227, Hi: 1.195623337},
		},
		{
			name: "identical repeats, point interval",
			num:  []float64{150, 150, 150}, den: []float64{100, 100, 100},
			want: RatioCI{Defined: true, Ratio: 1.5, HasCI: true, Lo: 1.5, Hi: 1.5, Significant: true},
		},
		{
			// Observed: two repeats a side; the interval excludes 1 but
			// rests on one degree of freedom: too few to conclude.
			name: "two repeats, too few to conclude",
			num:  []float64{150, 150}, den: []float64{100, 100},
			want: RatioCI{Defined: true, Ratio: 1.5, HasCI: true, TooFew: true, Lo: 1.5, Hi: 1.5},
		},
		{
			name: "single repeats, no interval",
			num:  []float64{300}, den: []float64{100},
			want: RatioCI{Defined: true, Ratio: 3, Lo: 3, Hi: 3},
		},
		{
			// Denominator mean 10, SE 10: b^2 - t^2 vb < 0.
			name: "noisy denominator, unbounded",
			num:  []float64{100, 110, 90}, den: []float64{0, 2, 28},
			want: RatioCI{Defined: true, Ratio: 10, HasCI: true, Unbounded: true, Lo: 10, Hi: 10},
		},
		{
			name: "zero denominator",
			num:  []float64{1, 2}, den: []float64{0, 0},
			want: RatioCI{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Ratio(Summarize(tt.num), Summarize(tt.den))
			if got.Defined != tt.want.Defined || got.HasCI != tt.want.HasCI || got.Unbounded != tt.want.Unbounded || got.TooFew != tt.want.TooFew ||
				got.Significant != tt.want.Significant || !near(got.Ratio, tt.want.Ratio, 1e-12) ||
				!near(got.Lo, tt.want.Lo, 1e-8) || !near(got.Hi, tt.want.Hi, 1e-8) {
				t.Errorf("Ratio(%v / %v)\n got %+v\nwant %+v", tt.num, tt.den, got, tt.want)
			}
		})
	}
}

// TestRatioAgreesWithDeltaMethod checks that for small spread Fieller's
// interval is close to the delta method's r -/+ t*r*sqrt(CVa^2/n + CVb^2/n).
func TestRatioAgreesWithDeltaMethod(t *testing.T) {
	num := Summarize([]float64{2000, 2010, 1990, 2005, 1995})
	den := Summarize([]float64{1000, 1004, 996, 1002, 998})
	got := Ratio(num, den)
	va, vb := sq(num.StdErr()/num.Mean), sq(den.StdErr()/den.Mean)
	tq := TQuantile975(7) // Welch df for this pair is 420.25/55.06 = 7.6
	half := got.Ratio * tq * math.Sqrt(va+vb)
	if !near(got.Lo, got.Ratio-half, 1e-4) || !near(got.Hi, got.Ratio+half, 1e-4) {
		t.Errorf("Fieller [%v, %v], want near delta [%v, %v]", got.Lo, got.Hi, got.Ratio-half, got.Ratio+half)
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
