package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

func TestClassifyCodes(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Code: code, Message: "x"} }
	cases := []struct {
		err  error
		want dialect.ErrClass
	}{
		{nil, dialect.ClassNone},
		{pg("40001"), dialect.ClassSerialization},
		{pg("40P01"), dialect.ClassDeadlock},
		{pg("55P03"), dialect.ClassLockTimeout},
		{pg("08006"), dialect.ClassConnection},
		{pg("08P01"), dialect.ClassConnection},
		{pg("57P01"), dialect.ClassConnection},
		{pg("57P02"), dialect.ClassConnection},
		{pg("57P03"), dialect.ClassConnection},
		{pg("28P01"), dialect.ClassAuth},
		{pg("28000"), dialect.ClassAuth},
		{pg("42P01"), dialect.ClassUndefinedObject},
		{pg("42883"), dialect.ClassUndefinedObject},
		{pg("3D000"), dialect.ClassUndefinedObject},
		{pg("3F000"), dialect.ClassUndefinedObject},
		{pg(RollbackSQLState), dialect.ClassRollback},
		{pg("23505"), dialect.ClassOther},
		{pg("57014"), dialect.ClassOther}, // statement_timeout: not a lock timeout
		{fmt.Errorf("new-order: %w", pg("40P01")), dialect.ClassDeadlock},
		{tpcc.ErrRollback, dialect.ClassRollback},
		{fmt.Errorf("wrapped: %w", tpcc.ErrRollback), dialect.ClassRollback},
		{context.Canceled, dialect.ClassCanceled},
		{fmt.Errorf("query: %w", context.DeadlineExceeded), dialect.ClassCanceled},
		{io.EOF, dialect.ClassConnection},
		{io.ErrUnexpectedEOF, dialect.ClassConnection},
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, dialect.ClassConnection},
		{fmt.Errorf("x: %w", net.ErrClosed), dialect.ClassConnection},
		{fmt.Errorf("x: %w", pgconn.ErrConnClosed), dialect.ClassConnection},
		{&dialect.Error{Class: dialect.ClassAuth, Op: "connect", Err: errors.New("x")}, dialect.ClassAuth},
		{errors.New("something else"), dialect.ClassOther},
	}
	for _, c := range cases {
		name := "nil"
		if c.err != nil {
			name = c.err.Error()
		}
		t.Run(name, func(t *testing.T) {
			if got := classify(c.err); got != c.want {
				t.Errorf("classify(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

// TestClassifyServerErrors provokes real deadlocks, serialization failures
// and lock timeouts on the test server.
func TestClassifyServerErrors(t *testing.T) {
	d, _ := openTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	setup, err := d.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close(ctx)
	if _, err := setup.Exec(ctx, "CREATE TABLE pair (id INTEGER PRIMARY KEY, v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	reset := func(t *testing.T) {
		if _, err := setup.Exec(ctx, "TRUNCATE pair; INSERT INTO pair VALUES (1, 0), (2, 0)"); err != nil {
			t.Fatal(err)
		}
	}
	conns := func(t *testing.T) (a, b *pgx.Conn) {
		var cs [2]*pgx.Conn
		for i := range cs {
			c, err := d.connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close(context.Background()) })
			cs[i] = c
		}
		return cs[0], cs[1]
	}

	t.Run("deadlock", func(t *testing.T) {
		reset(t)
		a, b := conns(t)
		for _, c := range []*pgx.Conn{a, b} {
			// Detect the deadlock quickly (superuser setting; the default 1s works too).
			_, _ = c.Exec(ctx, "SET deadlock_timeout = '50ms'")
		}
		mustExec(t, a, "BEGIN")
		mustExec(t, b, "BEGIN")
		mustExec(t, a, "UPDATE pair SET v = v + 1 WHERE id = 1")
		mustExec(t, b, "UPDATE pair SET v = v + 1 WHERE id = 2")
		errA := make(chan error, 1)
		go func() {
			_, err := a.Exec(ctx, "UPDATE pair SET v = v + 1 WHERE id = 2") // waits for b
			errA <- err
		}()
		waitUntilWaiting(t, setup, ctx)
		_, errB := b.Exec(ctx, "UPDATE pair SET v = v + 1 WHERE id = 1") // closes the cycle
		// The victim's transaction aborts and releases its locks, so the
		// other statement completes.
		errs := []error{<-errA, errB}
		_, _ = a.Exec(ctx, "ROLLBACK")
		_, _ = b.Exec(ctx, "ROLLBACK")
		var victim error
		for _, e := range errs {
			if e != nil {
				if victim != nil {
					t.Fatalf("both transactions failed: %v and %v", victim, e)
				}
				victim = e
			}
		}
		errB = victim
		if got := d.Classify(errB); got != dialect.ClassDeadlock {
			t.Errorf("Classify(%v) = %v, want %v", errB, got, dialect.ClassDeadlock)
		}
		if !d.Classify(errB).Retryable() {
			t.Errorf("a deadlock is not retryable")
		}
	})

	t.Run("serialization", func(t *testing.T) {
		reset(t)
		a, b := conns(t)
		mustExec(t, a, "BEGIN ISOLATION LEVEL REPEATABLE READ")
		mustExec(t, a, "SELECT v FROM pair WHERE id = 1") // takes the snapshot
		mustExec(t, b, "UPDATE pair SET v = v + 1 WHERE id = 1")
		_, err := a.Exec(ctx, "UPDATE pair SET v = v + 1 WHERE id = 1")
		_, _ = a.Exec(ctx, "ROLLBACK")
		if got := d.Classify(err); got != dialect.ClassSerialization {
			t.Errorf("Classify(%v) = %v, want %v", err, got, dialect.ClassSerialization)
		}
	})

	t.Run("lock timeout", func(t *testing.T) {
		reset(t)
		a, b := conns(t)
		mustExec(t, a, "BEGIN")
		mustExec(t, a, "UPDATE pair SET v = v + 1 WHERE id = 1")
		mustExec(t, b, "SET lock_timeout = '50ms'")
		_, err := b.Exec(ctx, "UPDATE pair SET v = v + 1 WHERE id = 1")
		_, _ = a.Exec(ctx, "ROLLBACK")
		if got := d.Classify(err); got != dialect.ClassLockTimeout {
			t.Errorf("Classify(%v) = %v, want %v", err, got, dialect.ClassLockTimeout)
		}
	})

	t.Run("undefined function", func(t *testing.T) {
		s, err := d.NewSession(ctx, dialect.StyleProcedures)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = s.StockLevel(ctx, &tpcc.StockLevel{WID: 1, DID: 1, Threshold: 10})
		if got := d.Classify(err); got != dialect.ClassUndefinedObject {
			t.Errorf("Classify(%v) = %v, want %v", err, got, dialect.ClassUndefinedObject)
		}
	})

	t.Run("connection terminated", func(t *testing.T) {
		a, _ := conns(t)
		var pid int32
		if err := a.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		mustExec(t, setup, "SELECT pg_terminate_backend($1)", pid)
		var one int
		err := a.QueryRow(ctx, "SELECT 1").Scan(&one)
		if got := d.Classify(err); got != dialect.ClassConnection {
			t.Errorf("Classify(%v) = %v, want %v", err, got, dialect.ClassConnection)
		}
	})

	t.Run("canceled", func(t *testing.T) {
		a, _ := conns(t)
		cctx, ccancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer ccancel()
		_, err := a.Exec(cctx, "SELECT pg_sleep(5)")
		if got := d.Classify(err); got != dialect.ClassCanceled {
			t.Errorf("Classify(%v) = %v, want %v", err, got, dialect.ClassCanceled)
		}
	})
}

func mustExec(t *testing.T, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// waitUntilWaiting waits until some backend of this database waits for a lock.
func waitUntilWaiting(t *testing.T, c *pgx.Conn, ctx context.Context) {
	t.Helper()
	for range 200 {
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no backend waits for the lock")
}
