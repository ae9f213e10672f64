package tpchload

import (
	"sync"
	"sync/atomic"
	"time"
)

// reporter calls a build's progress function at each phase and every
// progressEvery while loading, from one goroutine at a time.
type reporter struct {
	fn       func(Progress)
	start    time.Time
	expected int64
	rows     atomic.Int64

	mu    sync.Mutex
	cur   Phase
	stop  chan struct{}
	ended chan struct{}
}

const progressEvery = 500 * time.Millisecond

func newReporter(fn func(Progress), start time.Time, expected int64) *reporter {
	r := &reporter{fn: fn, start: start, expected: expected}
	if fn == nil {
		return r
	}
	r.stop, r.ended = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.ended)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				r.mu.Lock()
				if r.cur == PhaseLoad {
					r.report()
				}
				r.mu.Unlock()
			}
		}
	}()
	return r
}

// report calls fn with the current figures; r.mu is held.
func (r *reporter) report() {
	r.fn(Progress{Phase: r.cur, Rows: r.rows.Load(), ExpectedRows: r.expected, Elapsed: time.Since(r.start)})
}

func (r *reporter) phase(p Phase) {
	if r == nil || r.fn == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur = p
	r.report()
}

func (r *reporter) add(n int64) {
	if r != nil {
		r.rows.Add(n)
	}
}

// close stops the ticker; no call of fn follows.
func (r *reporter) close() {
	if r.fn == nil {
		return
	}
	close(r.stop)
	<-r.ended
}
