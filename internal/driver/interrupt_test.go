package driver

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestPooledSessionsInterrupted: a session of the tpc-c pool and a
// deferred-Delivery session, each in a call the server never answers,
// are abandoned the way the runner abandons in-flight transactions: their
// calls get a context that is never canceled (a dialect.Interrupter is
// spared watching one), so only Interrupt ends them, and it must.
func TestPooledSessionsInterrupted(t *testing.T) {
	for _, role := range []string{"session", "delivery session"} {
		t.Run(role, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				g.measuring.Store(true)
				o := Defaults()
				o.Mode = ModeTPCC
				v := newVU(0, nil, o, 1, realClock{}, g, &outageLog{})
				v.role = role
				sess := newBlockingSession()
				v.sess = sess
				q := newDeliveryQueue()
				terms := []*terminal{newTerminal(0, 1, 1, testConstants(), 1, false)}
				p := newPacer(realClock{}, g, terms, time.Now())

				ctx, cancel := context.WithCancel(context.Background())
				r := &runner{vus: []*vu{v}, abandonFn: cancel}
				var wg sync.WaitGroup
				done := make(chan error, 1)
				if role == "session" {
					wg.Go(func() { p.run(ctx) })
					wg.Go(func() { done <- v.serve(ctx, p) })
				} else {
					q.push(deliveryRequest{wID: 1, carrierID: 1, queued: time.Now()})
					v.stats.deferred = newDeferredStats()
					wg.Go(func() { done <- v.deliver(ctx, q) })
				}
				var call context.Context
				select {
				case call = <-sess.calls:
				case <-time.After(time.Hour):
					t.Fatalf("no call reached the session")
				}
				g.stop()
				r.stopVUs()
				if call.Err() != nil {
					t.Errorf("the interruptible session's call context was canceled (%v): it should never be", call.Err())
				}
				synctest.Wait()
				select {
				case err := <-done:
					if err != nil {
						t.Errorf("%s ended with %v, want nil after an abandon", role, err)
					}
				default:
					t.Fatalf("the %s still waits on the server after Interrupt", role)
				}
				wg.Wait()
			})
		})
	}
}
