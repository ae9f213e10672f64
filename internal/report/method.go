package report

import (
	"fmt"

	"github.com/oltplab/oltplab/internal/profile"
)

// statisticsMethod is the Method part's sentence on the statistics every
// profile gets.
const statisticsMethod = "Statistics: mean and sample standard deviation over the complete runs of a step, and the 95% confidence " +
	"interval of the mean from 3 runs on (none from fewer: on two runs Student's t is 12.7 and the interval ten times their spread). " +
	"NOPM, TPM and the other rates are positive, so their interval is taken on the log scale, mean × exp(∓t·CV/√n) with Student's t " +
	"at n−1 degrees of freedom: it never reaches below zero and is wider above the mean than below. A ratio of two targets' means " +
	"is taken on the log scale too (the delta method, Welch's degrees of freedom), and is \"not significant\" when its interval contains 1. " +
	"A verdict (peak, plateau, knee, a fall) drawn from steps of one run each says that it rests on single runs."

// stoppingNote says how a profile measured with `repeat: auto` decided
// its runs; "" for a fixed number of repeats.
func stoppingNote(p Profile) string {
	st := p.Stopping
	if st == nil {
		return ""
	}
	of := "mean NOPM"
	if st.Baseline != "" {
		of = "NOPM ratio to " + st.Baseline + " (its mean NOPM at a step " + st.Baseline + " had not measured)"
	}
	return fmt.Sprintf(" Repeat auto: each step was measured until the 95%% interval of its %s was within %s, "+
		"at least %d and at most %d runs; the flags say which ended it (see the method).",
		of, profile.FormatPrecision(st.Rule.Precision), st.Rule.Min, st.Rule.Max)
}

// anyStopping reports whether a profile of the study was measured with
// `repeat: auto`.
func (s *study) anyStopping() bool {
	for _, sec := range s.e.Sections {
		for _, p := range sec.Profiles {
			if p.Stopping != nil {
				return true
			}
		}
	}
	return false
}
