package driver

import (
	"context"
	"fmt"
	"time"
)

// Phase is where a run stands on its timeline.
type Phase int

const (
	PhaseRampup  Phase = iota // transactions run, nothing is measured
	PhaseMeasure              // the measured window
	PhaseGrace                // no new transactions; in-flight ones may finish
	PhaseDone
)

func (p Phase) String() string {
	switch p {
	case PhaseRampup:
		return "rampup"
	case PhaseMeasure:
		return "measure"
	case PhaseGrace:
		return "grace"
	}
	return "done"
}

// MarshalText writes the phase by name.
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a phase by name (a remote driver's live reports).
func (p *Phase) UnmarshalText(b []byte) error {
	for _, q := range []Phase{PhaseRampup, PhaseMeasure, PhaseGrace, PhaseDone} {
		if string(b) == q.String() {
			*p = q
			return nil
		}
	}
	return fmt.Errorf("driver phase %q: want rampup, measure, grace or done", b)
}

// events is what the schedule drives. Every method is called from the
// schedule's goroutine, in timeline order.
type events interface {
	// startWindow: ramp-up is over; read the start counters and begin
	// measuring.
	startWindow(now time.Time)
	// second: one more second of the measured window has passed.
	second(now time.Time)
	// live: time for a live report.
	live(now time.Time, p Phase)
	// endWindow: the measured window is over (complete) or cut short by
	// cancellation or failure; stop measuring and read the end counters.
	endWindow(now time.Time, complete bool)
	// stopStarting: virtual users start no new transaction.
	stopStarting()
	// abandon: cancel in-flight transactions.
	abandon()
}

// schedule is the timeline of a run: ramp-up, measured window, grace.
type schedule struct {
	clk       clock
	rampup    time.Duration
	duration  time.Duration
	grace     time.Duration
	liveEvery time.Duration
	// at, when not zero, is the instant the measured window starts (a
	// synchronised start, Options.Start): the ramp-up lasts until then and
	// the window ends at at+duration, however long its start took.
	at time.Time
}

// until is the time left from now to the instant at+d, never negative.
func (s schedule) until(d time.Duration) time.Duration {
	return max(0, s.at.Add(d).Sub(s.clk.Now()))
}

// outcome is how a schedule ended.
type outcome int

const (
	completed   outcome = iota // the window ran to its end
	interrupted                // ctx was canceled
	vusEnded                   // every virtual user ended before the grace period (a failure)
)

// run drives ev along the timeline until the grace period is over, every
// virtual user has ended (vusDone closed), or ctx is canceled. Whatever the
// ending, a started window is ended (endWindow), then stopStarting and
// abandon are called, in that order, exactly once each.
func (s schedule) run(ctx context.Context, vusDone <-chan struct{}, ev events) outcome {
	phase := PhaseRampup
	rampup := s.rampup
	if !s.at.IsZero() {
		rampup = s.until(0)
	}
	rampC, stopRamp := s.clk.NewTimer(rampup)
	defer stopRamp()
	liveC, stopLive := s.clk.NewTicker(s.liveEvery)
	defer stopLive()
	var secC, endC, graceC <-chan time.Time
	stopSec, stopEnd, stopGrace := func() {}, func() {}, func() {}
	defer func() { stopSec(); stopEnd(); stopGrace() }()

	finish := func(o outcome) outcome {
		if phase == PhaseMeasure {
			ev.endWindow(s.clk.Now(), false)
		}
		if phase != PhaseGrace {
			ev.stopStarting()
		}
		ev.abandon()
		return o
	}
	for {
		select {
		case <-ctx.Done():
			return finish(interrupted)
		case <-vusDone:
			if ctx.Err() != nil {
				return finish(interrupted)
			}
			if phase == PhaseGrace {
				return finish(completed)
			}
			return finish(vusEnded)
		case <-rampC:
			phase = PhaseMeasure
			ev.startWindow(s.clk.Now())
			secC, stopSec = s.clk.NewTicker(time.Second)
			window := s.duration
			if !s.at.IsZero() {
				window = s.until(s.duration)
			}
			endC, stopEnd = s.clk.NewTimer(window)
		case <-secC:
			if phase == PhaseMeasure {
				ev.second(s.clk.Now())
			}
		case <-endC:
			ev.endWindow(s.clk.Now(), true)
			stopSec()
			secC = nil
			ev.stopStarting()
			phase = PhaseGrace
			graceC, stopGrace = s.clk.NewTimer(s.grace)
		case <-graceC:
			return finish(completed)
		case <-liveC:
			ev.live(s.clk.Now(), phase)
		}
	}
}
