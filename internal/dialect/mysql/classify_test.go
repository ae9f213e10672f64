package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want dialect.ErrClass
	}{
		{nil, dialect.ClassNone},
		{&mysql.MySQLError{Number: 1213}, dialect.ClassDeadlock},
		{&mysql.MySQLError{Number: 1205}, dialect.ClassLockTimeout},
		{&mysql.MySQLError{Number: 1045}, dialect.ClassAuth},
		{&mysql.MySQLError{Number: 1044}, dialect.ClassAuth},
		{&mysql.MySQLError{Number: 1698}, dialect.ClassAuth},
		{&mysql.MySQLError{Number: 1146}, dialect.ClassUndefinedObject},
		{&mysql.MySQLError{Number: 1049}, dialect.ClassUndefinedObject},
		{&mysql.MySQLError{Number: 1305}, dialect.ClassUndefinedObject},
		{&mysql.MySQLError{Number: 2006}, dialect.ClassConnection},
		{&mysql.MySQLError{Number: 2013}, dialect.ClassConnection},
		{&mysql.MySQLError{Number: errnoRollback}, dialect.ClassRollback},
		{&mysql.MySQLError{Number: errnoNoCustomer}, dialect.ClassOther},
		{&mysql.MySQLError{Number: 1062}, dialect.ClassOther},
		{fmt.Errorf("payment w=1 d=2: %w", &mysql.MySQLError{Number: 1213}), dialect.ClassDeadlock},
		{mysql.ErrInvalidConn, dialect.ClassConnection},
		{driver.ErrBadConn, dialect.ClassConnection},
		{fmt.Errorf("read: %w", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), dialect.ClassConnection},
		{context.Canceled, dialect.ClassCanceled},
		{fmt.Errorf("new-order: %w", context.DeadlineExceeded), dialect.ClassCanceled},
		{tpcc.ErrRollback, dialect.ClassRollback},
		{&dialect.Error{Class: dialect.ClassAuth, Op: "connect", Err: errors.New("x")}, dialect.ClassAuth},
		{errors.New("something else"), dialect.ClassOther},
	}
	d := &DB{}
	for _, tc := range tests {
		name := "nil"
		if tc.err != nil {
			name = tc.err.Error()
		}
		t.Run(name, func(t *testing.T) {
			if got := d.Classify(tc.err); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// smallDB creates the tables and the few rows a Payment of customer
// (1, 1, 1) touches, without a whole build.
func smallDB(t *testing.T) *DB {
	t.Helper()
	d, _ := openTest(t)
	ctx := context.Background()
	if err := d.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	if err := d.InstallProcedures(ctx); err != nil {
		t.Fatalf("InstallProcedures: %v", err)
	}
	for _, q := range []string{
		"INSERT INTO warehouse VALUES (1, 'w1', 's1', 's2', 'city', 'ST', '123411111', 0.1000, 300000.00)",
		"INSERT INTO district VALUES (1, 1, 'd1', 's1', 's2', 'city', 'ST', '123411111', 0.0500, 30000.00, 3001)",
		"INSERT INTO district VALUES (2, 1, 'd2', 's1', 's2', 'city', 'ST', '123411111', 0.0500, 30000.00, 3001)",
		`INSERT INTO customer VALUES (1, 1, 1, 'first', 'OE', 'BARBARBAR', 's1', 's2', 'city', 'ST', '123411111',
			'0123456789012345', '2025-01-01 00:00:00', 'GC', 50000.00, 0.1000, -10.00, 10.00, 1, 0, 'data')`,
	} {
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return d
}

// TestLockWaitTimeout makes a Payment wait for a customer row another
// transaction holds, past innodb_lock_wait_timeout=1: the error classifies
// as a lock timeout and the whole transaction is rolled back (InnoDB itself
// rolls back only the statement), so a retry applies the payment once.
func TestLockWaitTimeout(t *testing.T) {
	d := smallDB(t)
	ctx := context.Background()
	for _, style := range styles {
		t.Run(style.String(), func(t *testing.T) {
			var s dialect.Session
			var sessionConn *sessConn
			if style == dialect.StyleProcedures {
				ps, err := d.newProcSession(ctx)
				if err != nil {
					t.Fatalf("session: %v", err)
				}
				s, sessionConn = ps, ps.c
			} else {
				cc, err := d.newClientConn(ctx)
				if err != nil {
					t.Fatalf("session: %v", err)
				}
				s, sessionConn = tpcc.NewClientSession(newClientTx(cc), clientStatements, cc.Close), cc.c
			}
			defer s.Close()
			if _, err := sessionConn.exec(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
				t.Fatalf("set innodb_lock_wait_timeout: %v", err)
			}

			wYTD := cents(t, d, "w_ytd", "warehouse WHERE w_id = 1")
			holder, err := d.db.Conn(ctx)
			if err != nil {
				t.Fatalf("holder connection: %v", err)
			}
			defer holder.Close()
			if _, err := holder.ExecContext(ctx, "START TRANSACTION"); err != nil {
				t.Fatalf("holder: %v", err)
			}
			if _, err := holder.ExecContext(ctx, "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1 FOR UPDATE"); err != nil {
				t.Fatalf("holder locks the customer: %v", err)
			}

			in := &tpcc.Payment{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 2500, HDate: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}
			err = s.Payment(ctx, in)
			if got := d.Classify(err); got != dialect.ClassLockTimeout {
				t.Fatalf("Payment behind a held lock: class %v, want %v (error: %v)", got, dialect.ClassLockTimeout, err)
			}

			// The session holds no lock any more: another connection takes
			// the warehouse row the payment had updated without waiting.
			probe, err := d.db.Conn(ctx)
			if err != nil {
				t.Fatalf("probe connection: %v", err)
			}
			defer probe.Close()
			if _, err := probe.ExecContext(ctx, "START TRANSACTION"); err != nil {
				t.Fatalf("probe: %v", err)
			}
			if _, err := probe.ExecContext(ctx, "SELECT w_id FROM warehouse WHERE w_id = 1 FOR UPDATE NOWAIT"); err != nil {
				t.Errorf("warehouse row still locked after the failed payment: %v", err)
			}
			probe.ExecContext(ctx, "ROLLBACK")
			if _, err := holder.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Fatalf("holder rollback: %v", err)
			}

			// The retry applies the payment exactly once.
			if err := s.Payment(ctx, in); err != nil {
				t.Fatalf("retried Payment: %v", err)
			}
			if got, want := cents(t, d, "w_ytd", "warehouse WHERE w_id = 1"), wYTD+int64(in.Amount); got != want {
				t.Errorf("w_ytd after the retry: got %d cents, want %d", got, want)
			}
		})
	}
}

// TestDeadlock makes two transactions wait for each other: InnoDB rolls one
// back with error 1213, which classifies as a deadlock.
func TestDeadlock(t *testing.T) {
	d := smallDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := d.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := d.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	mustExec := func(c *sql.Conn, q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(a, "START TRANSACTION")
	mustExec(b, "START TRANSACTION")
	mustExec(a, "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 1")
	mustExec(b, "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 2")
	aErr := make(chan error, 1)
	go func() {
		_, err := a.ExecContext(ctx, "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 2")
		aErr <- err
	}()
	// Wait until a is blocked on b's row lock. MariaDB refreshes its
	// INNODB_TRX cache only when nobody read it for 100 ms: poll slower
	// than that, or the cache stays stale while we poll.
	for {
		if n := queryInt(t, d, "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'"); n > 0 {
			break
		}
		select {
		case err := <-aErr:
			t.Fatalf("a's update did not wait: %v", err)
		case <-time.After(150 * time.Millisecond):
		}
	}
	_, bErr := b.ExecContext(ctx, "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 1")
	errA := <-aErr
	a.ExecContext(ctx, "ROLLBACK")
	b.ExecContext(ctx, "ROLLBACK")
	var victim error
	switch {
	case errA != nil && bErr == nil:
		victim = errA
	case bErr != nil && errA == nil:
		victim = bErr
	default:
		t.Fatalf("want exactly one deadlock victim; a: %v, b: %v", errA, bErr)
	}
	if got := d.Classify(fmt.Errorf("payment: %w", victim)); got != dialect.ClassDeadlock {
		t.Errorf("class: got %v, want %v (error: %v)", got, dialect.ClassDeadlock, victim)
	}
	if !d.Classify(victim).Retryable() {
		t.Errorf("a deadlock is not retryable")
	}
}

func TestTxCounter(t *testing.T) {
	d := smallDB(t)
	ctx := context.Background()
	if got, want := d.TxCountSource(), "Com_commit+Com_rollback (global)"; got != want {
		t.Errorf("TxCountSource: got %q, want %q", got, want)
	}
	for _, style := range styles {
		t.Run(style.String(), func(t *testing.T) {
			s := newSession(t, d, style)
			before, err := d.TxCount(ctx)
			if err != nil {
				t.Fatalf("TxCount: %v", err)
			}
			const n = 5
			for i := 0; i < n; i++ {
				in := &tpcc.Payment{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 100, HDate: time.Date(2025, 6, 1, 0, 0, i, 0, time.UTC)}
				if err := s.Payment(ctx, in); err != nil {
					t.Fatalf("Payment: %v", err)
				}
			}
			after, err := d.TxCount(ctx)
			if err != nil {
				t.Fatalf("TxCount: %v", err)
			}
			// The counter is server-wide: other tests may add to it, never take away.
			if after-before < n {
				t.Errorf("TxCount delta after %d payments: got %d, want at least %d", n, after-before, n)
			}
		})
	}
}

func TestSnapshot(t *testing.T) {
	d := smallDB(t)
	ctx := context.Background()
	next := func(q tpcc.Querier) int64 {
		var n int64
		if err := q.QueryRow(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", 1, 1).Scan(&n); err != nil {
			t.Fatalf("read d_next_o_id: %v", err)
		}
		return n
	}
	var first, second int64
	err := d.Snapshot(ctx, func(q tpcc.Querier) error {
		first = next(q)
		if _, err := d.db.ExecContext(ctx, "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 1"); err != nil {
			return err
		}
		second = next(q)
		// Writes are refused: the snapshot is read-only.
		if _, err := q.Exec(ctx, "UPDATE district SET d_ytd = 0 WHERE d_w_id = 1"); err == nil {
			t.Errorf("write inside the snapshot: got nil, want an error")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if first != second {
		t.Errorf("inside the snapshot: first read %d, second %d; want equal", first, second)
	}
	if got := queryInt(t, d, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1"); got != first+1 {
		t.Errorf("after the snapshot: got %d, want %d", got, first+1)
	}
	// A missing row reads as tpcc.ErrNoRows; fn's error comes back.
	err = d.Snapshot(ctx, func(q tpcc.Querier) error {
		var n int64
		return q.QueryRow(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = 9").Scan(&n)
	})
	if !errors.Is(err, tpcc.ErrNoRows) {
		t.Errorf("Snapshot with a missing row: got %v, want tpcc.ErrNoRows", err)
	}
}
