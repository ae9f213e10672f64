package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// testInterrupt checks, for every style whose sessions are a
// dialect.Interrupter, that Interrupt ends a call blocked on a lock with a
// connection error although the call's context cannot be canceled, and
// that a session interrupted between calls fails its next call instead of
// running it.
func testInterrupt(t *testing.T, db dialect.Database) {
	ctx := subtestContext(t)
	pay := func() *tpcc.Payment {
		return &tpcc.Payment{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 100, HDate: txTime}
	}
	tested := false
	for _, style := range styles(db.Caps()) {
		for _, c := range []struct {
			name    string
			blocked bool // interrupt a call waiting on a lock, else an idle session
		}{{"call blocked on a lock", true}, {"idle session", false}} {
			t.Run(style.String()+"/"+c.name, func(t *testing.T) {
				s, err := db.NewSession(ctx, style)
				if err != nil {
					t.Fatalf("NewSession: %v", err)
				}
				defer s.Close()
				in, ok := s.(dialect.Interrupter)
				if !ok {
					t.Skipf("a %s session (%T) is not a dialect.Interrupter", style, s)
				}
				tested = true
				if err := s.Payment(ctx, pay()); err != nil {
					t.Fatalf("Payment before the interrupt: %v", err)
				}
				calls := context.WithoutCancel(ctx)
				if !c.blocked {
					in.Interrupt()
					err := s.Payment(calls, pay())
					if got := db.Classify(err); got != dialect.ClassConnection {
						t.Errorf("Payment after Interrupt: got %v (%v), want %v", err, got, dialect.ClassConnection)
					}
					return
				}
				ws, ok := db.(dialect.WaitSampler)
				if !ok {
					t.Skipf("%s is not a dialect.WaitSampler: cannot tell when the call waits on the lock", db.Name())
				}
				probe, err := ws.OpenWaitProbe(ctx)
				if err != nil {
					t.Fatalf("open probe: %v", err)
				}
				defer probe.Close()

				locker, err := db.Connect(ctx)
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer locker.Close()
				exec(ctx, t, locker, "BEGIN")
				exec(ctx, t, locker, lockFirst)
				defer exec(ctx, t, locker, "ROLLBACK")

				done := make(chan error, 1)
				go func() { done <- s.Payment(calls, pay()) }()
				waitForLockWait(ctx, t, probe)
				start := time.Now()
				in.Interrupt()
				err = <-done
				t.Logf("the blocked call returned %v after Interrupt", time.Since(start).Round(time.Millisecond))
				if got := db.Classify(err); got != dialect.ClassConnection {
					t.Errorf("blocked Payment after Interrupt: got %v (%v), want %v", err, got, dialect.ClassConnection)
				}
			})
		}
	}
	if !tested {
		t.Skipf("no %s session is a dialect.Interrupter", db.Name())
	}
}
