package driver

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrBarrierBroken: a run sharing the start (Options.Start) ended before
// reaching it, so the others do not start either.
var ErrBarrierBroken = errors.New("a run measured together with this one stopped before the start")

// Barrier is the start line of runs measured together (several targets
// driven at once): each run opens its sessions, then waits at the
// barrier until every party has arrived. The last arrival releases them
// all at one instant, Released; from it every run ramps up for its
// Rampup and measures from Released+Rampup to Released+Rampup+Duration,
// instants taken from the clock rather than counted from each run's own
// start, so that every run's measured window is the same wall-clock
// interval (up to the time each takes to read its counters).
type Barrier struct {
	parties int

	mu       sync.Mutex
	arrived  int
	released time.Time
	err      error
	done     chan struct{}
}

// NewBarrier returns the start line of parties runs.
func NewBarrier(parties int) *Barrier {
	return &Barrier{parties: parties, done: make(chan struct{})}
}

// Released is the instant the last party arrived (zero before that, or
// when the barrier broke).
func (b *Barrier) Released() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.released
}

// arrive counts one party in at now and waits for the others. It returns
// the release instant: the now of the last party to arrive. When a party
// gave up first (abort) it returns an error wrapping ErrBarrierBroken;
// when ctx ends first, ctx's error (and the others are released with
// ErrBarrierBroken).
func (b *Barrier) arrive(ctx context.Context, now time.Time) (time.Time, error) {
	b.mu.Lock()
	if b.err == nil && b.released.IsZero() {
		b.arrived++
		if b.arrived == b.parties {
			b.released = now
			close(b.done)
		}
	}
	b.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		b.Abort()
		return time.Time{}, ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return time.Time{}, b.err
	}
	return b.released, nil
}

// Abort breaks the barrier for the parties waiting and those to come,
// unless it has already released them: a party that will not arrive
// (its run could not even begin) calls it so that the others do not wait
// for it. Run calls it itself when it ends before the start.
func (b *Barrier) Abort() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil || !b.released.IsZero() {
		return
	}
	b.err = ErrBarrierBroken
	close(b.done)
}

// Wait waits, without being a party, until the barrier releases its
// parties (returning the release instant) or breaks (ErrBarrierBroken),
// or ctx ends: work meant to run beside runs measured together starts
// with them.
func (b *Barrier) Wait(ctx context.Context) (time.Time, error) {
	select {
	case <-b.done:
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return time.Time{}, b.err
	}
	return b.released, nil
}
