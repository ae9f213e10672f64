package profile

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// DefaultKneeThreshold is the marginal gain below which a sweep has
// reached its plateau: a step whose added users each bring less than 10%
// of the NOPM that each user brought at the first step no longer pays
// for them.
const DefaultKneeThreshold = 0.10

// DropThreshold is the fall in mean NOPM from one step to the next above
// which the curve is falling rather than flat: 5%. A smaller dip is
// within the noise of a plateau.
const DropThreshold = 0.05

// Shape is what a profile's NOPM curve does over its sweep.
type Shape string

const (
	ShapeScaling Shape = "scaling" // every step still paid for its users: the plateau lies beyond the sweep
	ShapePlateau Shape = "plateau" // from the knee on, added users added (almost) nothing
	ShapeFalling Shape = "falling" // from the knee on, NOPM fell
)

// Rule explains, in one sentence for a reader, how Analyze judges a
// curve; reports print it next to the verdicts.
const Rule = "A step scales while each virtual user it adds brings at least 10% of the NOPM per user of the first step; " +
	"the knee is the last step before that stops (the plateau), or before NOPM falls by more than 5% and stays down (falling); " +
	"a fall that a later step undoes, coming back within 5%, is a dip and not a knee. " +
	"Without a knee the plateau lies beyond the sweep."

// StepFigures are the figures of one step of a profile that the plateau
// analysis looks at.
type StepFigures struct {
	VUs  int
	NOPM Summary
	TPM  Summary
	// P99Millis is the 99th-percentile latency of the step (the caller
	// chooses which: New-Order, or all transactions); 0 when unknown. It
	// is quoted in the verdict at the knee, but takes no part in finding
	// it: in a closed system latency grows with every user added, also
	// while throughput still scales well.
	P99Millis float64
}

// Verdict says where a profile peaks and where it stops scaling.
type Verdict struct {
	PeakVUs  int     `json:"peak_vus"`  // virtual users of the step with the highest mean NOPM; 0 without steps
	PeakNOPM float64 `json:"peak_nopm"` // that mean NOPM
	// KneeVUs is the last step that still scaled: the step after which
	// added users no longer pay (plateau) or NOPM falls (falling); 0 when
	// the sweep still scales at its end.
	KneeVUs int   `json:"knee_vus"`
	Shape   Shape `json:"shape,omitempty"`
	// PerUserPeakVUs is the step where throughput per virtual user (TPM
	// per VU, NOPM per VU without TPM) is highest: past it every user
	// waits more for the others.
	PerUserPeakVUs int `json:"per_user_peak_vus,omitempty"`
	// Reason explains the verdict in one line with the numbers behind it.
	Reason string `json:"reason"`
	// SingleRuns lists the steps (their VUs) that rest on one run: a
	// verdict drawn from them rests on single runs and says so in Reason.
	SingleRuns []int `json:"single_runs,omitempty"`
	// Dips lists the steps (their VUs) whose NOPM fell by more than
	// DropThreshold below the step before them while a later step came
	// back within DropThreshold of it: a drop the next steps undo is a
	// dip, not a fall, and the knee is judged without them.
	Dips []int `json:"dips,omitempty"`
}

// Analyze finds the peak and the knee of a profile. Steps without a
// summarised repeat (NOPM.N == 0) are left out; the others are taken in
// increasing order of VUs (the input is not modified).
//
// The reference is the first step's NOPM per virtual user: what one user
// brings when users barely compete. Going from step s to the next step t,
//
//   - NOPM falling by more than DropThreshold is a fall when it persists:
//     the knee is s and the shape falling. When a later step comes back
//     within DropThreshold of s, t was a dip (one noisy step, not a
//     fall): it is named in Dips and Reason and left out of the rest of
//     the analysis;
//   - otherwise, when the NOPM each added user brings, (NOPM(t) -
//     NOPM(s)) / (VUs(t) - VUs(s)), is below threshold (a fraction; <= 0
//     means DefaultKneeThreshold) of the reference, the plateau is
//     reached: the knee is s and the shape plateau.
//
// Without either the sweep is still scaling and Reason says so. This is
// what a reader sees on the curve: a healthy curve that bends keeps
// scaling as long as users still add a useful share, and a fall is
// called a fall.
func Analyze(steps []StepFigures, threshold float64) Verdict {
	v := analyze(steps, threshold)
	for _, s := range steps {
		if s.NOPM.N == 1 && s.VUs >= 1 {
			v.SingleRuns = append(v.SingleRuns, s.VUs)
		}
	}
	slices.Sort(v.SingleRuns)
	switch n := len(v.SingleRuns); {
	case n == 0:
	case n == len(slices.DeleteFunc(slices.Clone(steps), func(s StepFigures) bool { return s.NOPM.N == 0 || s.VUs < 1 })):
		v.Reason += "; it rests on single runs (one run per step: no spread is known, so no difference between steps is established)"
	default:
		vus := make([]string, n)
		for i, u := range v.SingleRuns {
			vus[i] = strconv.Itoa(u)
		}
		v.Reason += fmt.Sprintf("; at %s VUs it rests on a single run", strings.Join(vus, ", "))
	}
	return v
}

func analyze(steps []StepFigures, threshold float64) Verdict {
	if threshold <= 0 || math.IsNaN(threshold) {
		threshold = DefaultKneeThreshold
	}
	ss := slices.DeleteFunc(slices.Clone(steps), func(s StepFigures) bool { return s.NOPM.N == 0 || s.VUs < 1 })
	if len(ss) == 0 {
		return Verdict{Reason: "no measured steps to analyse"}
	}
	slices.SortStableFunc(ss, func(a, b StepFigures) int { return a.VUs - b.VUs })

	var v Verdict
	bestPerUser := math.Inf(-1)
	for i, s := range ss {
		if i == 0 || s.NOPM.Mean > v.PeakNOPM {
			v.PeakVUs, v.PeakNOPM = s.VUs, s.NOPM.Mean
		}
		if pu := perUser(s); pu > bestPerUser {
			bestPerUser, v.PerUserPeakVUs = pu, s.VUs
		}
	}
	peak := fmt.Sprintf("peak %s NOPM at %d VUs", FormatThousands(v.PeakNOPM), v.PeakVUs)
	if len(ss) == 1 {
		v.Reason = peak + "; one step only, no knee can be found"
		return v
	}
	perUserNote := fmt.Sprintf("; throughput per user peaks at %d VUs", v.PerUserPeakVUs)
	first := ss[0]
	ref := first.NOPM.Mean / float64(first.VUs)
	if ref <= 0 {
		v.Reason = fmt.Sprintf("%s; the first step (%d VUs) measured no NOPM, so no knee can be judged", peak, first.VUs)
		return v
	}
	dips := ""
	for i := 0; i+1 < len(ss); i++ {
		s, t := ss[i], ss[i+1]
		change := t.NOPM.Mean/s.NOPM.Mean - 1
		if s.NOPM.Mean > 0 && change < -DropThreshold {
			if u, ok := recovery(ss[i+2:], s.NOPM.Mean); ok {
				v.Dips = append(v.Dips, t.VUs)
				dips += fmt.Sprintf("; a dip at %d VUs (%s, %s from %d VUs) is not a fall: %d VUs came back to %s",
					t.VUs, FormatThousands(t.NOPM.Mean), formatSignedPercent(change), s.VUs, u.VUs, FormatThousands(u.NOPM.Mean))
				ss = slices.Delete(ss, i+1, i+2)
				i--
				continue
			}
			v.KneeVUs, v.Shape = s.VUs, ShapeFalling
			v.Reason = fmt.Sprintf("%s; NOPM falls after %d VUs: %s at %d VUs, %s at %d VUs (%s)%s%s%s",
				peak, s.VUs, FormatThousands(s.NOPM.Mean), s.VUs, FormatThousands(t.NOPM.Mean), t.VUs,
				formatSignedPercent(change), latencyNote(s, t), dips, perUserNote)
			return v
		}
		gain := (t.NOPM.Mean - s.NOPM.Mean) / float64(t.VUs-s.VUs)
		if gain < threshold*ref {
			v.KneeVUs, v.Shape = s.VUs, ShapePlateau
			v.Reason = fmt.Sprintf("%s; plateau from %d VUs: each user added from %d to %d VUs brought %s NOPM, under %s of the %s NOPM per user at %d VUs%s%s%s%s",
				peak, s.VUs, s.VUs, t.VUs, FormatThousands(gain), formatPercent(threshold), FormatThousands(ref), first.VUs,
				latencyNote(s, t), laterFall(ss[i+1:], v.PeakNOPM), dips, perUserNote)
			return v
		}
	}
	s, t := ss[len(ss)-2], ss[len(ss)-1]
	gain := (t.NOPM.Mean - s.NOPM.Mean) / float64(t.VUs-s.VUs)
	v.Shape = ShapeScaling
	v.Reason = fmt.Sprintf("%s; still scaling, no plateau up to %d VUs: each user added from %d to %d VUs brought %s NOPM, %s of the %s NOPM per user at %d VUs%s%s",
		peak, t.VUs, s.VUs, t.VUs, FormatThousands(gain), formatPercent(gain/ref), FormatThousands(ref), first.VUs, dips, perUserNote)
	return v
}

// recovery is the first of the later steps whose NOPM is back within
// DropThreshold of level: the drop before it was a dip.
func recovery(later []StepFigures, level float64) (StepFigures, bool) {
	for _, u := range later {
		if u.NOPM.Mean >= level*(1-DropThreshold) {
			return u, true
		}
	}
	return StepFigures{}, false
}

// perUser is a step's throughput per virtual user: TPM when measured,
// NOPM otherwise.
func perUser(s StepFigures) float64 {
	if s.TPM.N > 0 && s.TPM.Mean > 0 {
		return s.TPM.Mean / float64(s.VUs)
	}
	return s.NOPM.Mean / float64(s.VUs)
}

// latencyNote quotes the p99 latency at both sides of the knee, when
// known.
func latencyNote(s, t StepFigures) string {
	if s.P99Millis <= 0 || t.P99Millis <= 0 {
		return ""
	}
	return fmt.Sprintf(", while p99 latency went from %s to %s ms", formatMillis(s.P99Millis), formatMillis(t.P99Millis))
}

// laterFall notes a fall of NOPM, after a plateau, by more than
// DropThreshold below the peak.
func laterFall(rest []StepFigures, peak float64) string {
	for _, s := range rest {
		if peak > 0 && s.NOPM.Mean < peak*(1-DropThreshold) {
			return fmt.Sprintf(", then falls to %s at %d VUs (%s from the peak)",
				FormatThousands(s.NOPM.Mean), s.VUs, formatSignedPercent(s.NOPM.Mean/peak-1))
		}
	}
	return ""
}

// FormatThousands formats x rounded to an integer with comma thousands
// separators: 41200.4 -> "41,200".
func FormatThousands(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	neg := x < 0
	s := strconv.FormatFloat(math.Abs(math.Round(x)), 'f', 0, 64)
	var b strings.Builder
	if neg && s != "0" {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatPercent formats a fraction as a percentage with up to one
// decimal: 0.05 -> "5%", 0.125 -> "12.5%".
func formatPercent(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%"
}

// formatSignedPercent formats a fraction as a signed percentage with one
// decimal: 0.021 -> "+2.1%".
func formatSignedPercent(f float64) string {
	return fmt.Sprintf("%+.1f%%", f*100)
}

// formatMillis formats milliseconds with one decimal below 100 and none
// above.
func formatMillis(ms float64) string {
	if ms < 100 {
		return strconv.FormatFloat(ms, 'f', 1, 64)
	}
	return strconv.FormatFloat(ms, 'f', 0, 64)
}
