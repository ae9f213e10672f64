package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestSessionInterrupt checks that Interrupt ends a procedure call blocked
// on a lock, with a connection error, although the call's context cannot
// be canceled; and that a session interrupted between calls fails its next
// call instead of running it.
func TestSessionInterrupt(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	if _, err := build(ctx, d, 1, 1); err != nil {
		t.Fatalf("build: %v", err)
	}
	pay := func() *tpcc.Payment {
		return &tpcc.Payment{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 100, HDate: txTime}
	}
	for _, c := range []struct {
		name    string
		blocked bool // interrupt a call waiting on a lock, else an idle session
	}{{"call blocked on a lock", true}, {"idle session", false}} {
		t.Run(c.name, func(t *testing.T) {
			s, err := d.NewSession(ctx, dialect.StyleProcedures)
			if err != nil {
				t.Fatalf("NewSession: %v", err)
			}
			defer s.Close()
			in, ok := s.(dialect.Interrupter)
			if !ok {
				t.Fatalf("procedure session %T is not a dialect.Interrupter", s)
			}
			if err := s.Payment(ctx, pay()); err != nil {
				t.Fatalf("Payment before the interrupt: %v", err)
			}
			calls := context.WithoutCancel(ctx)
			if !c.blocked {
				in.Interrupt()
				err := s.Payment(calls, pay())
				if got := d.Classify(err); got != dialect.ClassConnection {
					t.Errorf("Payment after Interrupt: got %v (%v), want %v", err, got, dialect.ClassConnection)
				}
				return
			}

			locker, err := d.Connect(ctx)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer locker.Close()
			exec(t, locker, "BEGIN")
			exec(t, locker, "LOCK TABLE warehouse IN ACCESS EXCLUSIVE MODE")
			defer exec(t, locker, "ROLLBACK")

			done := make(chan error, 1)
			go func() { done <- s.Payment(calls, pay()) }()
			// Wait until the session's backend waits on the lock.
			for i := 0; ; i++ {
				if qInt(t, locker.(tpcc.Querier), "SELECT COUNT(*) FROM pg_stat_activity "+
					"WHERE datname = current_database() AND wait_event_type = 'Lock'") == 1 {
					break
				}
				if i == 1000 {
					t.Fatalf("the session's call never waited on the lock")
				}
				time.Sleep(10 * time.Millisecond)
			}
			in.Interrupt()
			err = <-done
			if got := d.Classify(err); got != dialect.ClassConnection {
				t.Errorf("blocked Payment after Interrupt: got %v (%v), want %v", err, got, dialect.ClassConnection)
			}
		})
	}
}
