package profile

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// DefaultKneeThreshold is the relative NOPM gain below which a step no
// longer pays for the users added: 5%.
const DefaultKneeThreshold = 0.05

// StepFigures are the figures of one step of a profile that the plateau
// analysis looks at.
type StepFigures struct {
	VUs  int
	NOPM Summary
	TPM  Summary
	// P99Millis is the 99th-percentile latency of the step (the caller
	// chooses which: New-Order, or all transactions); 0 when unknown,
	// which disables the latency rule for the pairs it is part of.
	P99Millis float64
}

// Verdict says where a profile peaks and where it stops scaling.
type Verdict struct {
	PeakVUs  int     `json:"peak_vus"`  // virtual users of the step with the highest mean NOPM; 0 without steps
	PeakNOPM float64 `json:"peak_nopm"` // that mean NOPM
	// KneeVUs is the last step that still scaled: the first step after
	// which adding users no longer pays (see Analyze); 0 when no knee
	// was found.
	KneeVUs int `json:"knee_vus"`
	// Reason explains the verdict in one line with the numbers behind it.
	Reason string `json:"reason"`
}

// Analyze finds the peak and the knee of a profile. Steps are taken in
// increasing order of VUs (the input is not modified) and compared
// pairwise on mean NOPM; the knee is the first step s, followed by step
// t, where
//
//   - going from s to t adds less than threshold (a fraction; <= 0 means
//     DefaultKneeThreshold) of s's NOPM, or
//   - p99 latency grows by a larger fraction than NOPM does from s to t
//     (both P99Millis known). In a closed system without think time
//     throughput is users/latency (Little's law), so from this point
//     on extra users mostly buy queueing: Kleinrock's "power",
//     throughput/latency, has passed its maximum.
//
// Without a knee the sweep has not reached its plateau and Reason says
// so.
func Analyze(steps []StepFigures, threshold float64) Verdict {
	if threshold <= 0 || math.IsNaN(threshold) {
		threshold = DefaultKneeThreshold
	}
	if len(steps) == 0 {
		return Verdict{Reason: "no steps to analyse"}
	}
	ss := slices.Clone(steps)
	slices.SortStableFunc(ss, func(a, b StepFigures) int { return a.VUs - b.VUs })

	var v Verdict
	for i, s := range ss {
		if i == 0 || s.NOPM.Mean > v.PeakNOPM {
			v.PeakVUs, v.PeakNOPM = s.VUs, s.NOPM.Mean
		}
	}
	peak := fmt.Sprintf("peak %s NOPM at %d VUs", formatThousands(v.PeakNOPM), v.PeakVUs)
	if len(ss) == 1 {
		v.Reason = peak + "; one step only, no knee can be found"
		return v
	}
	for i := 0; i+1 < len(ss); i++ {
		s, t := ss[i], ss[i+1]
		if s.NOPM.Mean <= 0 {
			continue
		}
		gain := t.NOPM.Mean/s.NOPM.Mean - 1
		if gain < threshold {
			v.KneeVUs = s.VUs
			v.Reason = fmt.Sprintf("%s; knee at %d VUs: going to %d VUs changed NOPM by %s (%s → %s), below the %s threshold",
				peak, s.VUs, t.VUs, formatSignedPercent(gain),
				formatThousands(s.NOPM.Mean), formatThousands(t.NOPM.Mean), formatPercent(threshold))
			return v
		}
		if s.P99Millis > 0 && t.P99Millis > 0 {
			lat := t.P99Millis/s.P99Millis - 1
			if lat > gain {
				v.KneeVUs = s.VUs
				v.Reason = fmt.Sprintf("%s; knee at %d VUs: going to %d VUs raised p99 latency by %s (%s → %s ms) but NOPM only by %s",
					peak, s.VUs, t.VUs, formatSignedPercent(lat),
					formatMillis(s.P99Millis), formatMillis(t.P99Millis), formatSignedPercent(gain))
				return v
			}
		}
	}
	last := ss[len(ss)-1]
	v.Reason = fmt.Sprintf("%s; no knee up to %d VUs: every step added at least %s NOPM and outgrew its p99 latency, so the plateau lies beyond this sweep",
		peak, last.VUs, formatPercent(threshold))
	return v
}

// formatThousands formats x rounded to an integer with comma thousands
// separators: 41200.4 -> "41,200".
func formatThousands(x float64) string {
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
