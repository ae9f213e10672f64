package driver

import "time"

// clock is the driver's source of time. The real one is the time package;
// tests run the scheduling logic inside a testing/synctest bubble, whose
// fake time the time package follows, or inject their own.
type clock interface {
	Now() time.Time
	// NewTicker returns the ticks of a ticker of period d and its stop.
	NewTicker(d time.Duration) (<-chan time.Time, func())
	// NewTimer returns a channel that fires once after d and its stop.
	NewTimer(d time.Duration) (<-chan time.Time, func())
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

func (realClock) NewTimer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}
