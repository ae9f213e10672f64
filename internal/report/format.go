package report

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/profile"
)

// dash stands for a figure that does not exist (no repeats, no
// interval, a step the other profile did not run).
const dash = "—"

// formatNumber formats a throughput figure for people: thousands
// separators, and decimals only where the number is small enough to need
// them (41,200; 412; 41.2; 4.12).
func formatNumber(x float64) string {
	switch a := math.Abs(x); {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return dash
	case a >= 100:
		return thousands(x)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
}

// thousands formats x rounded to an integer with comma separators.
func thousands(x float64) string {
	s := strconv.FormatFloat(math.Abs(math.Round(x)), 'f', 0, 64)
	var b strings.Builder
	if x < 0 && s != "0" {
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

// formatPercent formats a fraction as a percentage with one decimal.
func formatPercent(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

// formatMillis formats a latency in milliseconds.
func formatMillis(ms float64) string {
	switch {
	case ms <= 0 || math.IsNaN(ms) || math.IsInf(ms, 0):
		return dash
	case ms >= 100:
		return strconv.FormatFloat(ms, 'f', 0, 64)
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	default:
		return strconv.FormatFloat(ms, 'f', 2, 64)
	}
}

// summaryCells are the printable parts of a profile.Summary.
type summaryCells struct {
	Mean, SD, Range, CV, CI string
}

func formatSummary(s profile.Summary) summaryCells {
	if s.N == 0 {
		return summaryCells{dash, dash, dash, dash, dash}
	}
	c := summaryCells{Mean: formatNumber(s.Mean), SD: dash, Range: formatNumber(s.Min) + "–" + formatNumber(s.Max), CV: dash, CI: dash}
	if s.N >= 2 {
		c.SD = formatNumber(s.StdDev)
		c.CV = formatPercent(s.CV)
		c.CI = tooFewRuns
	}
	if s.HasCI() {
		c.CI = interval(formatNumber(s.CILo), formatNumber(s.CIHi))
	}
	return c
}

// interval writes a confidence interval so that no sign and no separator
// can be mistaken for the other: "[−1.20, 26.15]", with the minus sign
// U+2212 rather than a hyphen.
func interval(lo, hi string) string {
	return "[" + minusSign(lo) + ", " + minusSign(hi) + "]"
}

func minusSign(s string) string {
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		return "−" + rest
	}
	return s
}

// tooFewRuns is what a renderer writes in place of an interval from
// fewer than profile.MinRepeats runs; tooFewNote says it in a sentence.
const (
	tooFewRuns = "too few runs"
	tooFewNote = "too few runs for an interval (use --repeat 3 or more)"
)

// formatRatio formats a ratio with its interval and significance:
// "2.31× [2.10, 2.55]", "1.04× [0.90, 1.20] not significant",
// "1.20× too few runs for an interval (...)".
func formatRatio(r profile.RatioCI) string {
	ci := func() string {
		return interval(strconv.FormatFloat(r.Lo, 'f', 2, 64), strconv.FormatFloat(r.Hi, 'f', 2, 64))
	}
	switch {
	case !r.Defined:
		return dash
	case r.TooFew:
		return fmt.Sprintf("%.2f× %s", r.Ratio, tooFewNote)
	case !r.HasCI:
		return fmt.Sprintf("%.2f× (no interval: a side measured nothing)", r.Ratio)
	case !r.Significant:
		return fmt.Sprintf("%.2f× %s not significant", r.Ratio, ci())
	default:
		return fmt.Sprintf("%.2f× %s", r.Ratio, ci())
	}
}

var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|\S+)`)

// redactTarget blanks a password left in a target's display form, as a
// last line of defence: callers pass an already redacted form.
func redactTarget(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
			s = u.String()
		}
	}
	return kvPassword.ReplaceAllString(s, "${1}REDACTED")
}
