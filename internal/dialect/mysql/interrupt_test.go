package mysql

import (
	"context"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestSessionInterrupt checks that Interrupt ends a procedure call blocked
// on a row lock, with a connection error, although the call's context
// cannot be canceled; and that a session interrupted between calls fails
// its next call instead of running it.
func TestSessionInterrupt(t *testing.T) {
	d := buildTest(t, 1)
	ctx := context.Background()
	pay := func() *tpcc.Payment {
		return &tpcc.Payment{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 100,
			HDate: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}
	}
	for _, c := range []struct {
		name    string
		blocked bool // interrupt a call waiting on a lock, else an idle session
	}{{"call blocked on a lock", true}, {"idle session", false}} {
		t.Run(c.name, func(t *testing.T) {
			s := newSession(t, d, dialect.StyleProcedures)
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

			locker, err := d.db.Conn(ctx)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer discard(locker)
			for _, q := range []string{"BEGIN", "SELECT w_id FROM warehouse WHERE w_id = 1 FOR UPDATE"} {
				if _, err := locker.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			defer locker.ExecContext(ctx, "ROLLBACK")

			done := make(chan error, 1)
			go func() { done <- s.Payment(calls, pay()) }()
			// Wait until the session's call runs the warehouse update, which
			// waits on the locker's row lock (innodb_trx would need the
			// PROCESS privilege; the user's own threads are in processlist).
			for i := 0; ; i++ {
				if queryInt(t, d, "SELECT COUNT(*) FROM information_schema.processlist "+
					"WHERE info LIKE 'UPDATE warehouse%'") == 1 {
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
