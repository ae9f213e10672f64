package summary

import "time"

// Span is a stretch of a result's samples' time axis (ms since its
// sampling started), as reports mark it: a phase, a profile, a cycle.
type Span struct {
	FromMillis int64 `json:"from_ms"`
	ToMillis   int64 `json:"to_ms"`
}

// SpanOf is the span from from to to on the axis that starts at t0.
func SpanOf(t0, from, to time.Time) Span {
	return Span{FromMillis: from.Sub(t0).Milliseconds(), ToMillis: to.Sub(t0).Milliseconds()}
}

// From and To are the span's ends as offsets from the axis' start.
func (s Span) From() time.Duration { return time.Duration(s.FromMillis) * time.Millisecond }
func (s Span) To() time.Duration   { return time.Duration(s.ToMillis) * time.Millisecond }
