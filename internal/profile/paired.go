package profile

import "math"

// PairedCI is the ratio of two targets measured in pairs: runs that
// alternate between the targets, each run of one next to a run of the
// other (ABBA order), analysed pair by pair.
type PairedCI struct {
	// Pairs is the number of pairs with both figures positive: the only
	// ones analysed.
	Pairs int `json:"pairs"`
	// Defined is false without a pair.
	Defined bool `json:"defined"`
	// Ratio is the geometric mean of the pairs' ratios, exp(mean of
	// log(num_i/den_i)).
	Ratio float64 `json:"ratio"`
	// HasCI is set from MinRepeats pairs on; Lo and Hi equal Ratio
	// otherwise and TooFew is set.
	HasCI  bool    `json:"has_ci"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	TooFew bool    `json:"too_few"`
	// Significant: the interval excludes 1.
	Significant bool `json:"significant"`
}

// HalfWidth is the interval's precision relative to the ratio, Hi/Ratio
// - 1; +Inf without one.
func (p PairedCI) HalfWidth() float64 {
	if !p.HasCI {
		return math.Inf(1)
	}
	return p.Hi/p.Ratio - 1
}

// Paired returns the ratio of num to den measured in pairs (num[i] and
// den[i] one next to the other) with its 95% confidence interval.
//
// Method. Each pair gives d_i = log(num_i/den_i); the interval is
// exp(mean(d) -/+ t*sd(d)/sqrt(n)) with Student's t at n-1 degrees of
// freedom, a paired t-interval on the log scale. Whatever slowly moves
// the host's speed (another tenant's load, a thermal limit, a cache
// warming over the experiment) moves both runs of a pair alike and
// cancels in d_i, so the interval holds only the variation between
// runs close in time: narrower than the unpaired interval (Ratio) when
// the host drifts, about as wide when it does not. Pairs with a figure
// that is not positive are left out (a failed or empty run).
func Paired(num, den []float64) PairedCI {
	var ds []float64
	for i := range min(len(num), len(den)) {
		if num[i] > 0 && den[i] > 0 {
			ds = append(ds, math.Log(num[i]/den[i]))
		}
	}
	out := PairedCI{Pairs: len(ds)}
	if len(ds) == 0 {
		return out
	}
	s := SummarizeCV(ds, math.Inf(1))
	out.Defined = true
	out.Ratio = math.Exp(s.Mean)
	out.Lo, out.Hi = out.Ratio, out.Ratio
	if s.N < MinRepeats {
		out.TooFew = true
		return out
	}
	out.HasCI = true
	h := TQuantile975(s.N-1) * s.StdErr()
	out.Lo, out.Hi = math.Exp(s.Mean-h), math.Exp(s.Mean+h)
	out.Significant = out.Lo > 1 || out.Hi < 1
	return out
}

// Drift is the A/A check of a paired comparison: the baseline measured
// once more after every other run, against what its earlier runs
// predict.
type Drift struct {
	// Defined: there were MinRepeats earlier runs and a positive figure
	// again; nothing is judged otherwise.
	Defined bool    `json:"defined"`
	N       int     `json:"n"` // the earlier runs
	Again   float64 `json:"again"`
	// Lo and Hi bound the 95% prediction interval of one more run.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Drifted: the run again lies outside the prediction interval: the
	// host (or the baseline) changed over the experiment.
	Drifted bool `json:"drifted"`
	// Change is Again against the earlier runs' geometric mean, as a
	// fraction (-0.12: 12% lower).
	Change float64 `json:"change"`
}

// AACheck judges the baseline measured again (again) against its earlier
// runs (before): the 95% prediction interval of one more run on the log
// scale, exp(m -/+ t*s*sqrt(1 + 1/n)) with m and s the mean and standard
// deviation of the logs of the earlier runs and Student's t at n-1
// degrees of freedom. A run outside it is host drift at the 95% level; a
// run inside says the host held still as far as n runs can tell. The
// prediction interval, not the interval of the mean, is the right
// yardstick: one run varies as much as any earlier run did.
func AACheck(before []float64, again float64) Drift {
	var ls []float64
	for _, x := range before {
		if x > 0 {
			ls = append(ls, math.Log(x))
		}
	}
	d := Drift{N: len(ls), Again: again}
	if len(ls) < MinRepeats || again <= 0 {
		return d
	}
	s := SummarizeCV(ls, math.Inf(1))
	h := TQuantile975(s.N-1) * s.StdDev * math.Sqrt(1+1/float64(s.N))
	d.Defined = true
	d.Lo, d.Hi = math.Exp(s.Mean-h), math.Exp(s.Mean+h)
	d.Drifted = again < d.Lo || again > d.Hi
	d.Change = again/math.Exp(s.Mean) - 1
	return d
}
