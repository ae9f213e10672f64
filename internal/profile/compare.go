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
	// HasCI is set when both sides have at least two repeats; without it
	// Lo and Hi equal Ratio and nothing can be said about significance.
	HasCI bool `json:"has_ci"`
	// Unbounded is set when the denominator's own interval reaches 0, so
	// the ratio's interval is not a finite range (Fieller's theorem); Lo
	// and Hi are then not meaningful and equal Ratio.
	Unbounded bool    `json:"unbounded"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
	// TooFew is set when the interval exists but a side has fewer than
	// MinRepeats repeats: the interval is too wide to conclude anything,
	// and Significant is never set.
	TooFew bool `json:"too_few"`
	// Significant is set when the finite interval excludes 1 and both
	// sides have at least MinRepeats repeats: the two means differ at the
	// 95% level. The renderers mark the other cases "not significant" or
	// "too few repeats".
	Significant bool `json:"significant"`
}

// Ratio returns mean(num)/mean(den) with a 95% confidence interval by
// Fieller's theorem for two independent samples.
//
// Method. With a, b the means, va, vb their squared standard errors and
// t the Student-t 0.975 quantile, the interval is the set of rho with
// (a - rho*b)^2 <= t^2 (va + rho^2 vb), i.e. the roots of
//
//	(b^2 - t^2 vb) rho^2 - 2ab rho + (a^2 - t^2 va) = 0.
//
// It is finite only when b^2 > t^2 vb (the denominator is significantly
// non-zero); otherwise Unbounded is set. Degrees of freedom come from
// the Welch-Satterthwaite formula for the variance va + r^2 vb at the
// point estimate r = a/b, rounded down (conservative).
//
// Fieller is chosen over the delta method (r -/+ t*r*sqrt(va/a^2 +
// vb/b^2)) because it stays correct, and asymmetric as it should be,
// when the denominator is noisy; for small coefficients of variation
// the two agree.
func Ratio(num, den Summary) RatioCI {
	if num.N == 0 || den.N == 0 || den.Mean == 0 {
		return RatioCI{}
	}
	a, b := num.Mean, den.Mean
	r := RatioCI{Defined: true, Ratio: a / b}
	r.Lo, r.Hi = r.Ratio, r.Ratio
	if num.N < 2 || den.N < 2 {
		return r
	}
	r.HasCI = true
	r.TooFew = !num.Conclusive() || !den.Conclusive()
	va, vb := sq(num.StdErr()), sq(den.StdErr())
	comb := va + sq(r.Ratio)*vb
	if comb == 0 {
		// Identical repeats on both sides: the interval is the point.
		r.Significant = r.Ratio != 1 && !r.TooFew
		return r
	}
	df := sq(comb) / (sq(va)/float64(num.N-1) + sq(sq(r.Ratio)*vb)/float64(den.N-1))
	t2 := sq(TQuantile975(max(1, int(math.Floor(df)))))
	qa := b*b - t2*vb
	if qa <= 0 {
		r.Unbounded = true
		return r
	}
	// Discriminant/4 of the quadratic, simplified:
	// (ab)^2 - qa*(a^2 - t2*va) = t2*(a^2*vb + qa*va) >= 0.
	root := math.Sqrt(t2 * (a*a*vb + qa*va))
	r.Lo, r.Hi = (a*b-root)/qa, (a*b+root)/qa
	r.Significant = (r.Lo > 1 || r.Hi < 1) && !r.TooFew
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
