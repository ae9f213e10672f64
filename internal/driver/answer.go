package driver

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// A connection can die silently: a firewall or NAT that dropped its state,
// a middlebox or a proxy that stopped forwarding without closing, a server
// host that is gone without a reset. Nothing then tells the client; the
// kernel's keepalives and retransmissions give up after many minutes, and
// not at all when something on the path still acknowledges the bytes. So
// the run watches its calls itself: a call without the server's answer for
// Options.AnswerTimeout is taken as a lost connection (the watchdog below
// interrupts it), the session is reopened and the outage recorded.

// watchAnswers checks, until stop is closed, that no virtual user's call
// has waited longer than Options.AnswerTimeout, and expires those that
// have. It checks a quarter of the timeout apart, at most a second: a dead
// connection is noticed between 1 and 1.25 timeouts after its call began.
func (r *runner) watchAnswers(stop <-chan struct{}) {
	limit := r.o.AnswerTimeout
	every := min(limit/4, time.Second)
	for {
		c, cancel := r.clk.NewTimer(every)
		select {
		case <-stop:
			cancel()
			return
		case <-c:
		}
		now := r.clk.Now().UnixNano()
		for _, v := range r.vus {
			if since := v.callSince.Load(); since != 0 && now-since >= int64(limit) {
				v.expireCall(since)
			}
		}
	}
}

// call executes one attempt of kind on the session. With an answer
// timeout it is watched (watchAnswers): the moment it began is published,
// and a session that does not stop on Interrupt gets a context the
// watchdog can cancel.
func (v *vu) call(calls context.Context, kind tpcc.TxKind) error {
	if v.answerTimeout <= 0 {
		return v.exec(calls, kind)
	}
	var cancel context.CancelFunc
	if _, ok := v.sess.(dialect.Interrupter); !ok {
		calls, cancel = context.WithCancel(calls)
		v.mu.Lock()
		v.cancelCall = cancel
		v.mu.Unlock()
	}
	v.callSince.Store(v.clk.Now().UnixNano())
	err := v.exec(calls, kind)
	v.callSince.Store(0)
	if cancel != nil {
		v.mu.Lock()
		v.cancelCall = nil
		v.mu.Unlock()
		cancel()
	}
	return err
}

// expireCall ends the call that began at since, if it is still the one in
// flight: the session is interrupted (or its call's context canceled) and
// the failure that follows is taken as a lost connection (expired).
func (v *vu) expireCall(since int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.callSince.Load() != since {
		return
	}
	v.expired.Store(true)
	if v.cancelCall != nil {
		v.cancelCall()
		return
	}
	interruptSession(v.sess)
}
