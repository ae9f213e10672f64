package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/placeholder"
	"github.com/oltplab/oltplab/internal/tpcc"
)

func TestClientStatementsHaveNoQuestionMarks(t *testing.T) {
	for _, s := range clientSQLStatements.All() {
		if placeholder.Dollar(s) != s {
			t.Errorf("statement still has '?' placeholders: %q", s)
		}
	}
}

func TestDDL(t *testing.T) {
	cases := []struct {
		table string
		want  string
	}{
		{"item", "CREATE TABLE item (i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price NUMERIC(5,2), " +
			"i_data VARCHAR(50)) WITH (autovacuum_enabled = off)"},
		{"new_order", "CREATE TABLE new_order (no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL) " +
			"WITH (autovacuum_enabled = off)"},
		{"orders", "CREATE TABLE orders (o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER, " +
			"o_entry_d TIMESTAMP, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER) WITH (autovacuum_enabled = off, fillfactor = 90)"},
	}
	for _, c := range cases {
		t.Run(c.table, func(t *testing.T) {
			for _, tb := range tpcc.Tables {
				if tb.String() == c.table {
					if got := createTableSQL(tb); got != c.want {
						t.Errorf("createTableSQL(%s) =\n%s\nwant\n%s", c.table, got, c.want)
					}
					return
				}
			}
			t.Fatalf("no table %s", c.table)
		})
	}
	for _, tb := range tpcc.Tables {
		if got, want := len(columnTypes[tb]), len(tb.Columns()); got != want {
			t.Errorf("%s: %d column types for %d columns", tb, got, want)
		}
	}
	if got := len(tpcc.Tables); got != numTables {
		t.Errorf("numTables = %d, tpcc.Tables has %d", numTables, got)
	}
}

// TestSessionPlanCacheMode: a client-SQL session's statements keep their
// generic plans (plan_cache_mode = force_generic_plan); a procedure
// session's connection keeps the server's default, the functions choosing
// for their own statements.
func TestSessionPlanCacheMode(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	for _, c := range []struct {
		style dialect.Style
		want  string
	}{{dialect.StyleClientSQL, "force_generic_plan"}, {dialect.StyleProcedures, "auto"}} {
		w, err := d.sessionConn(ctx, c.style)
		if err != nil {
			t.Fatal(err)
		}
		tx, _ := newClientTx(w).Begin(ctx)
		var got string
		if err := tx.QueryRow(ctx, "SELECT current_setting('plan_cache_mode')").Scan(&got); err != nil {
			t.Fatalf("%v: %v", c.style, err)
		}
		_ = tx.Rollback(ctx)
		w.close()
		if got != c.want {
			t.Errorf("%v session: plan_cache_mode = %q, want %q", c.style, got, c.want)
		}
	}
}

// TestClientTxDeferred holds the pipelined client-side transaction to
// tpcc.Deferrer's contract on a real server: deferred statements run in
// order before the next statement, their error fails that statement and
// leaves nothing committed after the rollback, and a transaction that
// sent nothing rolls back without a round trip.
func TestClientTxDeferred(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	c, err := d.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	w, err := d.sessionConn(ctx, dialect.StyleClientSQL)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if _, err := c.Exec(ctx, "CREATE TABLE deferred_t (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	count := func() int64 {
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM deferred_t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ct := newClientTx(w)

	// Deferred inserts are visible to the next statement, and committed.
	tx, _ := ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO deferred_t VALUES ($1, $2)", int64(1), int64(10))
	tx.(tpcc.Deferrer).Defer("UPDATE deferred_t SET v = v + 1 WHERE k = $1", int64(1))
	var v int64
	if err := tx.QueryRow(ctx, "SELECT v FROM deferred_t WHERE k = $1", int64(1)).Scan(&v); err != nil || v != 11 {
		t.Fatalf("read after deferred statements: got %d, %v; want 11, nil", v, err)
	}
	tx.(tpcc.Deferrer).Defer("INSERT INTO deferred_t VALUES ($1, $2)", int64(2), int64(20))
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if got := count(); got != 2 {
		t.Fatalf("rows after commit: got %d, want 2", got)
	}

	// A failing deferred statement fails the next statement; after the
	// rollback nothing of the transaction remains.
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO deferred_t VALUES ($1, $2)", int64(3), int64(30))
	tx.(tpcc.Deferrer).Defer("INSERT INTO deferred_t VALUES ($1, $2)", int64(1), int64(99)) // duplicate key
	err = tx.QueryRow(ctx, "SELECT v FROM deferred_t WHERE k = $1", int64(3)).Scan(&v)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		t.Fatalf("statement after a failing deferred one: got %v, want unique_violation", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got := count(); got != 2 {
		t.Fatalf("rows after rollback: got %d, want 2", got)
	}

	// The same failure at commit.
	tx, _ = ct.Begin(ctx)
	if _, err := tx.Exec(ctx, "INSERT INTO deferred_t VALUES ($1, $2)", int64(4), int64(40)); err != nil {
		t.Fatal(err)
	}
	tx.(tpcc.Deferrer).Defer("INSERT INTO deferred_t VALUES ($1, $2)", int64(2), int64(99))
	if err := tx.Commit(ctx); !errors.As(err, &pe) || pe.Code != "23505" {
		t.Fatalf("commit after a failing deferred statement: got %v, want unique_violation", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got := count(); got != 2 {
		t.Fatalf("rows after failed commit: got %d, want 2", got)
	}

	// Nothing sent: the rollback has nothing to do and the connection is
	// not inside a transaction.
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO deferred_t VALUES ($1, $2)", int64(5), int64(50))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got := w.txStatus; got != 'I' {
		t.Errorf("transaction status after rollback: got %q, want 'I'", got)
	}
	if got := count(); got != 2 {
		t.Fatalf("rows after rollback of queued statements: got %d, want 2", got)
	}

	// An argument with no encoding fails the statement that would send
	// its batch; nothing of that batch reaches the server, now or with the
	// next transaction on the connection.
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO deferred_t VALUES ($1, $2)", int64(6), int64(60))
	tx.(tpcc.Deferrer).Defer("UPDATE deferred_t SET v = $1 WHERE k = $2", struct{}{}, int64(1))
	if _, err := tx.Exec(ctx, "DELETE FROM deferred_t WHERE k = $1", int64(1)); err == nil || !strings.Contains(err.Error(), "no encoding") {
		t.Fatalf("a batch with an argument that has no encoding: got %v, want the argument's error", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got := w.txStatus; got != 'I' {
		t.Errorf("transaction status after rollback: got %q, want 'I'", got)
	}
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO deferred_t VALUES ($1, $2)", int64(7), int64(70))
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit after a batch that was not sent: %v", err)
	}
	var kept int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM deferred_t WHERE k IN (1, 2, 7)").Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 3 || kept != 3 {
		t.Fatalf("rows after a batch that was not sent and a commit: %d, of them 1, 2 and 7: %d; want 3 and 3", got, kept)
	}
}

// TestClientTxPrefetch holds the pipelined client-side transaction to
// tpcc.Prefetcher's contract on a real server: prefetched reads go with the
// deferred statements queued before them and are read in order, a read out
// of order is an error, and a rollback with results still unread leaves
// the connection idle and nothing committed.
func TestClientTxPrefetch(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	c, err := d.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	w, err := d.sessionConn(ctx, dialect.StyleClientSQL)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if _, err := c.Exec(ctx, "CREATE TABLE prefetch_t (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	ct := newClientTx(w)
	const read = "SELECT v FROM prefetch_t WHERE k = $1"
	const readAll = "SELECT k FROM prefetch_t ORDER BY k"

	tx, _ := ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO prefetch_t VALUES ($1, $2)", int64(1), int64(10))
	tx.(tpcc.Prefetcher).Prefetch(read, int64(1))
	tx.(tpcc.Deferrer).Defer("INSERT INTO prefetch_t VALUES ($1, $2)", int64(2), int64(20))
	tx.(tpcc.Prefetcher).Prefetch(readAll)
	var v int64
	if err := tx.QueryRow(ctx, read, int64(1)).Scan(&v); err != nil || v != 10 {
		t.Fatalf("first prefetched read: got %d, %v; want 10, nil", v, err)
	}
	// Deferred after the batch left: it goes with the next batch.
	tx.(tpcc.Deferrer).Defer("INSERT INTO prefetch_t VALUES ($1, $2)", int64(3), int64(30))
	rows, err := tx.Query(ctx, readAll)
	if err != nil {
		t.Fatal(err)
	}
	var ks []int64
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ks) != 2 || ks[0] != 1 || ks[1] != 2 {
		t.Fatalf("second prefetched read: got %v, %v; want [1 2], nil", ks, err)
	}
	if err := tx.QueryRow(ctx, read, int64(3)).Scan(&v); err != nil || v != 30 {
		t.Fatalf("read after a deferred statement: got %d, %v; want 30, nil", v, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}

	// Out of order: an error, and the rollback leaves nothing behind.
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO prefetch_t VALUES ($1, $2)", int64(4), int64(40))
	tx.(tpcc.Prefetcher).Prefetch(read, int64(1))
	tx.(tpcc.Prefetcher).Prefetch(readAll)
	if err := tx.QueryRow(ctx, readAll).Scan(&v); err == nil {
		t.Fatal("read out of prefetch order: no error")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}

	// Unread results at rollback.
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO prefetch_t VALUES ($1, $2)", int64(5), int64(50))
	tx.(tpcc.Prefetcher).Prefetch(read, int64(1))
	tx.(tpcc.Prefetcher).Prefetch(readAll)
	if err := tx.QueryRow(ctx, read, int64(1)).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback with an unread result: %v", err)
	}
	if got := w.txStatus; got != 'I' {
		t.Errorf("transaction status after rollback: got %q, want 'I'", got)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM prefetch_t").Scan(&n); err != nil || n != 3 {
		t.Fatalf("rows: got %d, %v; want 3 (1, 2, 3)", n, err)
	}
}
