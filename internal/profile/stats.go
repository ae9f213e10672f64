package profile

import "math"

// DefaultHighVariationCV is the coefficient of variation above which the
// repeats of a step are flagged as varying too much to be trusted
// without a look: 10%. Well-behaved TPC-C steps on a quiet host repeat
// within a few percent; above 10% something moved between repeats
// (drift, a background job, a step too short to leave ramp-up effects
// behind) and the mean alone would mislead.
const DefaultHighVariationCV = 0.10

// Summary is the spread of repeated measurements of one figure (for
// example the NOPM of one step over its repeats).
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"` // sample standard deviation (n-1); 0 when N < 2
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CV is the coefficient of variation StdDev/|Mean| as a fraction
	// (0.05 is 5%); 0 when N < 2 or Mean is 0.
	CV float64 `json:"cv"`
	// CILo and CIHi bound the two-sided 95% Student-t confidence
	// interval of the mean, Mean -/+ t(0.975, N-1)*StdDev/sqrt(N). With
	// N < 2 there is no interval and both equal Mean (see HasCI).
	CILo float64 `json:"ci_lo"`
	CIHi float64 `json:"ci_hi"`
	// HighVariation is set when CV is above the threshold given to
	// SummarizeCV (DefaultHighVariationCV for Summarize).
	HighVariation bool `json:"high_variation"`
}

// MinRepeats is the fewest repeats from which oltplab draws a
// conclusion. Two repeats give an interval, but on one degree of freedom
// (t = 12.7): it is ten times the spread of the two values, often
// crosses zero, and says little; three give t = 4.3, and each further
// repeat narrows it. Renderers say "too few to conclude" below it, and
// help recommends --repeat 3 or more.
const MinRepeats = 3

// HasCI reports whether s has a confidence interval (at least two
// values).
func (s Summary) HasCI() bool { return s.N >= 2 }

// Conclusive reports whether s rests on enough repeats (MinRepeats) for
// its interval to support a conclusion.
func (s Summary) Conclusive() bool { return s.N >= MinRepeats }

// StdErr is the standard error of the mean, StdDev/sqrt(N); 0 when
// N < 2.
func (s Summary) StdErr() float64 {
	if s.N < 2 {
		return 0
	}
	return s.StdDev / math.Sqrt(float64(s.N))
}

// Summarize returns the spread of xs, flagging a coefficient of
// variation above DefaultHighVariationCV.
func Summarize(xs []float64) Summary {
	return SummarizeCV(xs, DefaultHighVariationCV)
}

// SummarizeCV returns the spread of xs, flagging a coefficient of
// variation above highCV (a fraction: 0.1 is 10%). Non-finite values
// must be filtered out by the caller.
func SummarizeCV(xs []float64, highCV float64) Summary {
	s := Summary{N: len(xs)}
	if s.N == 0 {
		return s
	}
	s.Min, s.Max = xs[0], xs[0]
	var sum float64
	for _, x := range xs {
		sum += x
		s.Min = min(s.Min, x)
		s.Max = max(s.Max, x)
	}
	s.Mean = sum / float64(s.N)
	s.CILo, s.CIHi = s.Mean, s.Mean
	if s.N < 2 {
		return s
	}
	// Two-pass variance: exact enough for figures in the millions,
	// unlike the sum-of-squares shortcut.
	var ss float64
	for _, x := range xs {
		d := x - s.Mean
		ss += d * d
	}
	s.StdDev = math.Sqrt(ss / float64(s.N-1))
	if s.Mean != 0 {
		s.CV = s.StdDev / math.Abs(s.Mean)
	}
	half := TQuantile975(s.N-1) * s.StdErr()
	s.CILo, s.CIHi = s.Mean-half, s.Mean+half
	s.HighVariation = s.CV > highCV
	return s
}

// t975 holds the 0.975 quantiles of Student's t distribution for 1 to
// 30 degrees of freedom (the two-sided 95% critical values).
var t975 = [...]float64{
	12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
	2.446911851, 2.364624252, 2.306004135, 2.262157163, 2.228138852,
	2.200985160, 2.178812830, 2.160368656, 2.144786688, 2.131449546,
	2.119905299, 2.109815578, 2.100922040, 2.093024054, 2.085963447,
	2.079613845, 2.073873068, 2.068657610, 2.063898562, 2.059538553,
	2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456,
}

// z975 is the 0.975 quantile of the standard normal distribution.
const z975 = 1.959963984540054

// TQuantile975 returns the 0.975 quantile of Student's t distribution
// with df degrees of freedom: the multiplier of the standard error in a
// two-sided 95% confidence interval. df 1..30 come from a table; above
// 30 the normal quantile is corrected by the Cornish-Fisher expansion in
// 1/df (Abramowitz & Stegun 26.7.5), which is within 1e-5 of the exact
// value there and tends to 1.96. df < 1 has no quantile and returns
// +Inf.
func TQuantile975(df int) float64 {
	if df < 1 {
		return math.Inf(1)
	}
	if df <= len(t975) {
		return t975[df-1]
	}
	z := z975
	z2 := z * z
	z3 := z2 * z
	z5 := z3 * z2
	z7 := z5 * z2
	z9 := z7 * z2
	g1 := (z3 + z) / 4
	g2 := (5*z5 + 16*z3 + 3*z) / 96
	g3 := (3*z7 + 19*z5 + 17*z3 - 15*z) / 384
	g4 := (79*z9 + 776*z7 + 1482*z5 - 1920*z3 - 945*z) / 92160
	v := float64(df)
	return z + g1/v + g2/(v*v) + g3/(v*v*v) + g4/(v*v*v*v)
}
