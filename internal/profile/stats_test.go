package profile

import (
	"fmt"
	"math"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestSummarize(t *testing.T) {
	tests := []struct {
		xs   []float64
		want Summary
	}{
		{nil, Summary{}},
		{[]float64{42}, Summary{N: 1, Mean: 42, Min: 42, Max: 42, CILo: 42, CIHi: 42}},
		// Two runs: spread, but no interval (MinRepeats).
		{[]float64{190, 210}, Summary{N: 2, Mean: 200, StdDev: 14.14213562, Min: 190, Max: 210, CV: 0.07071068,
			CILo: 200, CIHi: 200}},
		// mean 200, sd 10, CV 5%, on the log scale: 200 * exp(-/+
		// t(2)=4.302652730 * 0.05/sqrt(3)).
		{[]float64{200, 210, 190}, Summary{N: 3, Mean: 200, StdDev: 10, Min: 190, Max: 210, CV: 0.05,
			CILo: 176.63942024, CIHi: 226.45001860, LogScale: true}},
		// mean 13, sd sqrt(20/3) = 2.5819889, CV 19.9% > 10%, t(3) = 3.182446305
		{[]float64{10, 12, 14, 16}, Summary{N: 4, Mean: 13, StdDev: 2.58198890, Min: 10, Max: 16, CV: 0.19861453,
			CILo: 9.47739337, CIHi: 17.83190729, LogScale: true, HighVariation: true}},
		{[]float64{5, 5, 5}, Summary{N: 3, Mean: 5, Min: 5, Max: 5, CILo: 5, CIHi: 5, LogScale: true}},
		{[]float64{0, 0}, Summary{N: 2, CILo: 0, CIHi: 0}},
		// A zero: no log scale; Student's t on the values, never below
		// the values' own floor of 0.
		{[]float64{0, 10, 20}, Summary{N: 3, Mean: 10, StdDev: 10, Min: 0, Max: 20, CV: 1, HighVariation: true,
			CILo: 0, CIHi: 34.84137712}},
		// A negative value (a change, not a rate): the plain interval.
		{[]float64{-5, 5, 15}, Summary{N: 3, Mean: 5, StdDev: 10, Min: -5, Max: 15, CV: 2, HighVariation: true,
			CILo: -19.84137712, CIHi: 29.84137712}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.xs), func(t *testing.T) {
			got := Summarize(tt.xs)
			if got.N != tt.want.N || got.HighVariation != tt.want.HighVariation ||
				!near(got.Mean, tt.want.Mean, 1e-9) || !near(got.StdDev, tt.want.StdDev, 1e-7) ||
				got.Min != tt.want.Min || got.Max != tt.want.Max || !near(got.CV, tt.want.CV, 1e-7) ||
				!near(got.CILo, tt.want.CILo, 1e-6) || !near(got.CIHi, tt.want.CIHi, 1e-6) || got.LogScale != tt.want.LogScale {
				t.Errorf("Summarize(%v)\n got %+v\nwant %+v", tt.xs, got, tt.want)
			}
			if gotCI, wantCI := got.HasCI(), tt.want.N >= MinRepeats; gotCI != wantCI {
				t.Errorf("HasCI() = %v, want %v", gotCI, wantCI)
			}
		})
	}
}

func TestSummarizeCVThreshold(t *testing.T) {
	xs := []float64{200, 210, 190} // CV exactly 5%
	tests := []struct {
		threshold float64
		want      bool
	}{
		{0.04, true},
		{0.05, false}, // flagged only when strictly above
		{0.10, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("threshold %g", tt.threshold), func(t *testing.T) {
			if got := SummarizeCV(xs, tt.threshold).HighVariation; got != tt.want {
				t.Errorf("SummarizeCV(%v, %g).HighVariation = %v, want %v", xs, tt.threshold, got, tt.want)
			}
		})
	}
}

func TestTQuantile975(t *testing.T) {
	// Exact values of the 0.975 quantile of Student's t.
	tests := []struct {
		df   int
		want float64
	}{
		{1, 12.706205},
		{2, 4.302653},
		{4, 2.776445},
		{10, 2.228139},
		{30, 2.042272},
		{31, 2.039513}, // first value from the expansion
		{40, 2.021075},
		{60, 2.000298},
		{120, 1.979930},
		{1000, 1.962339},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("df %d", tt.df), func(t *testing.T) {
			if got := TQuantile975(tt.df); !near(got, tt.want, 2e-5) {
				t.Errorf("TQuantile975(%d) = %.6f, want %.6f", tt.df, got, tt.want)
			}
		})
	}
	if got := TQuantile975(0); !math.IsInf(got, 1) {
		t.Errorf("TQuantile975(0) = %v, want +Inf", got)
	}
	for df := 2; df <= 200; df++ {
		if TQuantile975(df) >= TQuantile975(df-1) {
			t.Fatalf("TQuantile975 not decreasing at df %d: %v >= %v", df, TQuantile975(df), TQuantile975(df-1))
		}
	}
}
