package profile

import (
	"maps"
	"math"
	"slices"
)

// RatioCI is the ratio of the means of two independent sets of repeats
// (for example NOPM on NVMe over NOPM on SATA at 89 users) with its 95%
// confidence interval.
type RatioCI struct {
	// Defined is false when the denominator's mean is 0 (or either side
	// has no values): there is no ratio, and every other field is 0.
	Defined bool    `json:"defined"`
	Ratio   float64 `json:"ratio"` // mean(num) / mean(den)
	// HasCI is set when both sides have at least MinRepeats repeats and
	// positive means; without it Lo and Hi equal Ratio and nothing can be
	// said about significance.
	HasCI bool    `json:"has_ci"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// TooFew is set when a side has fewer than MinRepeats repeats: no
	// interval is drawn ("too few runs"), and Significant is never set.
	TooFew bool `json:"too_few"`
	// Significant is set when the interval excludes 1: the two means
	// differ at the 95% level. The renderers mark the other cases "not
	// significant" or "too few runs".
	Significant bool `json:"significant"`
}

// HalfWidth is the interval's precision relative to the ratio, Hi/Ratio
// - 1 (the interval is symmetric on the log scale); +Inf without one.
func (r RatioCI) HalfWidth() float64 {
	if !r.HasCI || r.Ratio <= 0 {
		return math.Inf(1)
	}
	return r.Hi/r.Ratio - 1
}

// Ratio returns mean(num)/mean(den) with a 95% confidence interval taken
// on the log scale, for two independent samples of a positive figure.
//
// Method. With a, b the means, CVa, CVb the coefficients of variation
// and na, nb the numbers of repeats, the delta method gives the variance
// of log(a/b) = log a - log b as V = CVa^2/na + CVb^2/nb; the interval is
//
//	a/b * exp(-/+ t*sqrt(V))
//
// with Student's t at the Welch-Satterthwaite degrees of freedom of V,
// rounded down (conservative). A ratio of positive figures is positive,
// and so is this interval, however much the runs vary; Fieller's
// interval, used before, reached below zero (or had no finite end) once
// one side's runs varied by more than about 40% at three runs. For small
// coefficients of variation the two agree.
func Ratio(num, den Summary) RatioCI {
	if num.N == 0 || den.N == 0 || den.Mean == 0 {
		return RatioCI{}
	}
	a, b := num.Mean, den.Mean
	r := RatioCI{Defined: true, Ratio: a / b}
	r.Lo, r.Hi = r.Ratio, r.Ratio
	if num.N < MinRepeats || den.N < MinRepeats {
		r.TooFew = true
		return r
	}
	if a <= 0 || b <= 0 {
		return r // no log scale: a side measured nothing
	}
	va, vb := sq(num.CV)/float64(num.N), sq(den.CV)/float64(den.N)
	r.HasCI = true
	if va+vb == 0 {
		// Identical repeats on both sides: the interval is the point.
		r.Significant = r.Ratio != 1
		return r
	}
	df := sq(va+vb) / (sq(va)/float64(num.N-1) + sq(vb)/float64(den.N-1))
	h := TQuantile975(max(1, int(math.Floor(df)))) * math.Sqrt(va+vb)
	r.Lo, r.Hi = r.Ratio*math.Exp(-h), r.Ratio*math.Exp(h)
	r.Significant = r.Lo > 1 || r.Hi < 1
	return r
}

func sq(x float64) float64 { return x * x }

// DiffKeys returns, sorted, the keys of the context maps (one per
// profile: host, database settings, parameters, flattened to key/value)
// whose value is not the same in all of them. A key missing from some
// maps differs, even from an empty value. With fewer than two maps
// nothing differs.
func DiffKeys(contexts []map[string]string) []string {
	if len(contexts) < 2 {
		return nil
	}
	var diff []string
	for _, k := range Keys(contexts) {
		first, ok0 := contexts[0][k]
		for _, c := range contexts[1:] {
			v, ok := c[k]
			if ok != ok0 || v != first {
				diff = append(diff, k)
				break
			}
		}
	}
	return diff
}

// Keys returns the sorted union of the keys of contexts.
func Keys(contexts []map[string]string) []string {
	set := make(map[string]struct{})
	for _, c := range contexts {
		for k := range c {
			set[k] = struct{}{}
		}
	}
	return slices.Sorted(maps.Keys(set))
}
