package mysql

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestClientConnBatches holds the client-side transaction, which sends its
// statements several in one query, to tpcc.Deferrer's and
// tpcc.Prefetcher's contracts on a real server: deferred statements run in
// order before the next read, prefetched reads are read in order (a
// prefetched DELETE's row count included), a failing deferred statement
// fails the next read and leaves nothing after the rollback, and a read
// out of order is an error.
func TestClientConnBatches(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	if _, err := d.db.ExecContext(ctx, "CREATE TABLE batch_t (k INTEGER PRIMARY KEY, v INTEGER NOT NULL, s VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	cc, err := d.newClientConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ct := newClientTx(cc)
	count := func() int64 { return queryInt(t, d, "SELECT count(*) FROM batch_t") }
	const read = "SELECT v FROM batch_t WHERE k = ?"
	const del = "DELETE FROM batch_t WHERE k = ?"

	tx, _ := ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO batch_t VALUES (?, ?, ?)", int64(1), int64(10), "a")
	tx.(tpcc.Deferrer).Defer("UPDATE batch_t SET v = v + 1 WHERE k = ?", int64(1))
	tx.(tpcc.Deferrer).Defer("INSERT INTO batch_t VALUES (?, ?, ?)", int64(2), int64(20), "b")
	tx.(tpcc.Prefetcher).Prefetch(read, int64(1))
	tx.(tpcc.Prefetcher).Prefetch(del, int64(2))
	tx.(tpcc.Prefetcher).Prefetch(del, int64(99))
	tx.(tpcc.Prefetcher).Prefetch("SELECT k FROM batch_t ORDER BY k")
	var v int64
	if err := tx.QueryRow(ctx, read, int64(1)).Scan(&v); err != nil || v != 11 {
		t.Fatalf("read after deferred statements: got %d, %v; want 11, nil", v, err)
	}
	for _, want := range []int64{1, 0} {
		if n, err := tx.Exec(ctx, del, int64(0)); err != nil || n != want {
			t.Fatalf("prefetched DELETE: %d rows, %v; want %d, nil", n, err, want)
		}
	}
	rows, err := tx.Query(ctx, "SELECT k FROM batch_t ORDER BY k")
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
	if err := rows.Err(); err != nil || len(ks) != 1 || ks[0] != 1 {
		t.Fatalf("rows after the DELETE: %v, %v; want [1]", ks, err)
	}
	// An UPDATE read on its own goes executed: its row count.
	if n, err := tx.Exec(ctx, "UPDATE batch_t SET v = v + 1 WHERE k >= ?", int64(0)); err != nil || n != 1 {
		t.Fatalf("UPDATE: %d rows, %v; want 1, nil", n, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if got := count(); got != 1 {
		t.Fatalf("rows after commit: got %d, want 1", got)
	}

	// A failing deferred statement fails the next read; after the
	// rollback nothing of the transaction remains.
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO batch_t VALUES (?, ?, ?)", int64(3), int64(30), "c")
	tx.(tpcc.Deferrer).Defer("INSERT INTO batch_t VALUES (?, ?, ?)", int64(1), int64(99), "dup") // duplicate key
	err = tx.QueryRow(ctx, read, int64(3)).Scan(&v)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1062 {
		t.Fatalf("read after a failing deferred statement: got %v, want ER_DUP_ENTRY", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got := count(); got != 1 {
		t.Fatalf("rows after rollback: got %d, want 1", got)
	}

	// The same failure at commit.
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO batch_t VALUES (?, ?, ?)", int64(4), int64(40), "d")
	tx.(tpcc.Deferrer).Defer("INSERT INTO batch_t VALUES (?, ?, ?)", int64(1), int64(99), "dup")
	if err := tx.Commit(ctx); !errors.As(err, &me) || me.Number != 1062 {
		t.Fatalf("commit after a failing deferred statement: got %v, want ER_DUP_ENTRY", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got := count(); got != 1 {
		t.Fatalf("rows after a failed commit: got %d, want 1", got)
	}

	// Out of order: an error, and nothing is left behind.
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO batch_t VALUES (?, ?, ?)", int64(5), int64(50), "e")
	tx.(tpcc.Prefetcher).Prefetch(read, int64(1))
	tx.(tpcc.Prefetcher).Prefetch("SELECT k FROM batch_t ORDER BY k")
	if err := tx.QueryRow(ctx, "SELECT k FROM batch_t ORDER BY k").Scan(&v); err == nil {
		t.Fatal("read out of prefetch order: no error")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got := count(); got != 1 {
		t.Fatalf("rows after rollback: got %d, want 1", got)
	}

	// Strings go as escaped literals, with or without NO_BACKSLASH_ESCAPES.
	for _, mode := range []string{"", "NO_BACKSLASH_ESCAPES"} {
		if _, err := cc.c.exec(ctx, "SET SESSION sql_mode = '"+mode+"'"); err != nil {
			t.Fatal(err)
		}
		if cc.noBackslashEscapes, err = cc.c.noBackslashEscapes(ctx); err != nil {
			t.Fatal(err)
		}
		const tricky = `O'Brien \ "x" ?`
		tx, _ = ct.Begin(ctx)
		tx.(tpcc.Deferrer).Defer("UPDATE batch_t SET s = ? WHERE k = ?", tricky, int64(1))
		var s string
		if err := tx.QueryRow(ctx, "SELECT s FROM batch_t WHERE k = ?", int64(1)).Scan(&s); err != nil || s != tricky {
			t.Errorf("sql_mode %q: read back %q, %v; want %q", mode, s, err, tricky)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// An argument with no SQL literal fails the statement that would send
	// its batch; nothing of that batch reaches the server, now or with the
	// next transaction on the connection.
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO batch_t VALUES (?, ?, ?)", int64(6), int64(60), "f")
	tx.(tpcc.Deferrer).Defer("UPDATE batch_t SET v = ? WHERE k = ?", struct{}{}, int64(1))
	if _, err := tx.Exec(ctx, del, int64(1)); err == nil || !strings.Contains(err.Error(), "argument 1") {
		t.Fatalf("a batch with an argument that has no literal: got %v, want the argument's error", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	tx, _ = ct.Begin(ctx)
	tx.(tpcc.Deferrer).Defer("INSERT INTO batch_t VALUES (?, ?, ?)", int64(7), int64(70), "g")
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit after a batch that was not sent: %v", err)
	}
	if got, kept := count(), queryInt(t, d, "SELECT count(*) FROM batch_t WHERE k IN (1, 7)"); got != 2 || kept != 2 {
		t.Fatalf("rows after a batch that was not sent and a commit: %d, of them 1 and 7: %d; want 2 and 2", got, kept)
	}
}
