package experiment

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
)

// Findings: what each step kind's section states in the study report's
// summary (its headline in sentences, the comparison the step exists for
// first) and its clause of each target's answer.

// ratioWords is a ratio to the baseline with its interval in words:
// "0.52× (95% CI 0.45–0.60)"; too few repeats (what names them:
// "cycles") or no interval say so.
func ratioWords(r profile.RatioCI, what string) string {
	s := strconv.FormatFloat(r.Ratio, 'f', 2, 64) + "×"
	switch {
	case r.TooFew:
		return s + fmt.Sprintf(" (too few %s for an interval)", what)
	case !r.HasCI:
		return s
	case !r.Significant:
		return s + fmt.Sprintf(" (95%% CI %.2f–%.2f: no difference shown)", r.Lo, r.Hi)
	}
	return s + fmt.Sprintf(" (95%% CI %.2f–%.2f)", r.Lo, r.Hi)
}

// secondsWords is a mean time with its interval: "12.3 s (95% CI
// 11.0–13.6 s)".
func secondsWords(s profile.Summary) string {
	out := strconv.FormatFloat(s.Mean, 'f', 1, 64) + " s"
	if s.HasCI() {
		out += fmt.Sprintf(" (95%% CI %.1f–%.1f s)", s.CILo, s.CIHi)
	}
	return out
}

// stepFallback states the step's headline as each (target, step) of the
// schedule stored it, for a kind that says nothing more in the summary:
// "Step 1: build: disk: 2 warehouse(s) ...; capped: ...".
func stepFallback(rc *ReportContext, index int, title string) []string {
	var parts []string
	for _, u := range rc.inOrder(rc.Units(index)) {
		h := outcomeHeadline(u.Outcome)
		if h == "" {
			continue
		}
		if u.Target != "" {
			h = u.Target + ": " + h
		}
		parts = append(parts, h)
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{title + ": " + strings.Join(parts, "; ") + "."}
}

// answersOf turns per-target clauses into the section's answers, in
// report order.
func answersOf(rc *ReportContext, clauses map[string]string) []report.Answer {
	var out []report.Answer
	for _, name := range rc.Order {
		if c := clauses[name]; c != "" {
			out = append(out, report.Answer{Target: name, Text: c})
		}
	}
	return out
}

// outcomeHeadline is the headline a finished (target, step) stored; ""
// for none.
func outcomeHeadline(raw []byte) string {
	var oc Outcome
	if len(raw) == 0 || json.Unmarshal(raw, &oc) != nil {
		return ""
	}
	return oc.Headline
}
