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
	// CILo and CIHi bound the two-sided 95% confidence interval of the
	// mean, drawn from MinRepeats values on (see HasCI; below that both
	// equal Mean). For positive values (every value above 0: NOPM, TPM,
	// seconds, MB/s) it is taken on the log scale, where such a figure
	// varies symmetrically: exp(log Mean -/+ t*CV/sqrt(N)), the delta
	// method's standard error of log Mean with Student's t at N-1 degrees
	// of freedom. It never reaches 0 and is wider above the mean than
	// below. Otherwise (LogScale false) it is Mean -/+ t*StdDev/sqrt(N),
	// its lower end raised to 0 when no value is negative.
	CILo float64 `json:"ci_lo"`
	CIHi float64 `json:"ci_hi"`
	// LogScale: the interval was taken on the log scale.
	LogScale bool `json:"log_scale,omitempty"`
	// HighVariation is set when CV is above the threshold given to
	// SummarizeCV (DefaultHighVariationCV for Summarize).
	HighVariation bool `json:"high_variation"`
}

// MinRepeats is the fewest repeats from which oltplab draws an interval
// or a conclusion. Two repeats would give an interval on one degree of
// freedom (t = 12.7): ten times the spread of the two values, often
// reaching below zero, and saying nothing; three give t = 4.3, and each
// further repeat narrows it. Renderers say "too few runs" below it, and
// help recommends --repeat 3 or more.
const MinRepeats = 3

// HasCI reports whether s has a confidence interval: at least
// MinRepeats values.
func (s Summary) HasCI() bool { return s.N >= MinRepeats }

// Conclusive reports whether s rests on enough repeats (MinRepeats) for
// its interval to support a conclusion; the same as HasCI.
func (s Summary) Conclusive() bool { return s.HasCI() }

// StdErr is the standard error of the mean, StdDev/sqrt(N); 0 when
// N < 2.
func (s Summary) StdErr() float64 {
	if s.N < 2 {
		return 0
	}
	return s.StdDev / math.Sqrt(float64(s.N))
}

// HalfWidth is the interval's precision relative to the mean: how far
// its farther end lies from the mean, as a fraction of the mean (0.05:
// the mean is known to within 5%). On the log scale it is CIHi/Mean - 1.
// +Inf without an interval or with a mean of 0.
func (s Summary) HalfWidth() float64 {
	if !s.HasCI() || s.Mean <= 0 {
		return math.Inf(1)
	}
	return max(s.CIHi-s.Mean, s.Mean-s.CILo) / s.Mean
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
	s.HighVariation = s.CV > highCV
	if s.N < MinRepeats {
		return s
	}
	t := TQuantile975(s.N - 1)
	if s.Min > 0 {
		h := t * s.CV / math.Sqrt(float64(s.N))
		s.CILo, s.CIHi, s.LogScale = s.Mean*math.Exp(-h), s.Mean*math.Exp(h), true
		return s
	}
	half := t * s.StdErr()
	s.CILo, s.CIHi = s.Mean-half, s.Mean+half
	if s.Min >= 0 {
		s.CILo = max(s.CILo, 0)
	}
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
