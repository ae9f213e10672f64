package driver

import (
	"fmt"
	"time"
)

// StallThreshold is the shortest stretch of the measured window without a
// single completed transaction that the run records as a stall. Every
// virtual user of an unpaced run always has a transaction in flight, so
// at the scales oltplab runs none of them completing anything for 2 s is
// no ordinary latency: the server (or the path to it) stopped answering
// without dropping a connection — a frozen process, a storage or network
// hang, a lock held by something else. An outage (connections lost) is
// recorded as one on its own; its stretch without completions is a stall
// too.
const StallThreshold = 2 * time.Second

// Stall is a stretch of the measured window during which no virtual user
// completed a transaction (committed, or rolled back as the workload
// asked), lasting at least StallThreshold.
type Stall struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
}

// span is a stretch of time, [from, to).
type span struct{ from, to time.Time }

// gapLog is one virtual user's record of its own completions inside the
// window: the first and the last, and every gap of at least StallThreshold
// between two consecutive ones. Only its virtual user writes it; the
// runner reads it once the virtual users are done.
type gapLog struct {
	first, last time.Time
	gaps        []span
}

// done records a transaction that completed at t, inside the window.
func (g *gapLog) done(t time.Time) {
	switch {
	case g.first.IsZero():
		g.first = t
	case t.Sub(g.last) >= StallThreshold:
		g.gaps = append(g.gaps, span{g.last, t})
	}
	g.last = t
}

// spans returns the user's stretches without a completion inside the
// window [start, end), including those before its first completion and
// after its last.
func (g *gapLog) spans(start, end time.Time) []span {
	if g.first.IsZero() {
		return []span{{start, end}}
	}
	out := []span{{start, g.first}}
	out = append(out, g.gaps...)
	return append(out, span{g.last, end})
}

// stalls returns the stretches, of at least StallThreshold, that lie
// inside every user's own stretches without a completion: no user
// completed anything in them. Each user's spans are in time order.
func stalls(users [][]span) []Stall {
	if len(users) == 0 {
		return nil
	}
	common := users[0]
	for _, u := range users[1:] {
		common = intersect(common, u)
	}
	var out []Stall
	for _, s := range common {
		if d := s.to.Sub(s.from); d >= StallThreshold {
			out = append(out, Stall{Start: s.from, End: s.to, Seconds: d.Seconds()})
		}
	}
	return out
}

// intersect returns the overlaps of two ordered lists of disjoint spans.
func intersect(a, b []span) []span {
	var out []span
	for i, j := 0, 0; i < len(a) && j < len(b); {
		from, to := later(a[i].from, b[j].from), earlier(a[i].to, b[j].to)
		if from.Before(to) {
			out = append(out, span{from, to})
		}
		if a[i].to.Before(b[j].to) {
			i++
		} else {
			j++
		}
	}
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// findStalls sets the run's stalls from its virtual users' completions
// over the measured window. Paced runs are left alone: their users wait
// for their schedule, so a stretch without completions may be an idle
// one; a stall of the server shows there in how late transactions started
// (Pacing).
func (r *Result) findStalls(stats []*vuStats) {
	w := r.Window
	if r.Options.Paced() || w.Start.IsZero() || !w.End.After(w.Start) {
		return
	}
	users := make([][]span, 0, len(stats))
	for _, s := range stats {
		users = append(users, s.gaps.spans(w.Start, w.End))
	}
	r.Stalls = stalls(users)
}

// stallSpans returns a result's stalls as spans, in time order.
func stallSpans(st []Stall) []span {
	out := make([]span, len(st))
	for i, s := range st {
		out[i] = span{s.Start, s.End}
	}
	return out
}

func (r *Result) describeStall(s Stall) string {
	return fmt.Sprintf("no transaction completed for %.1f s, from %.1f s into the measured window (at least %s without one is a stall)",
		s.Seconds, s.Start.Sub(r.Window.Start).Seconds(), StallThreshold)
}
