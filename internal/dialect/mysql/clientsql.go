package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// clientStatements is the client-side statement text: MySQL's own '?'
// placeholders, FOR UPDATE on the reads that precede an update, and
// MySQL's multi-table UPDATE form.
var clientStatements = tpcc.NewStatements(tpcc.SQLOptions{ForUpdate: "FOR UPDATE", UpdateJoin: true})

// clientConn is the tpcc.Beginner, tpcc.Tx, tpcc.Deferrer and
// tpcc.Prefetcher of a client-side session: one dedicated connection
// (sessConn) with autocommit off, so that a transaction begins with its
// first statement and ends with COMMIT or ROLLBACK (the same transaction
// as START TRANSACTION without a consistent snapshot opens, one statement
// shorter; Com_commit and Com_rollback count both).
//
// Statements go as text with their arguments interpolated (interpolate),
// several in one query: the deferred statements and the prefetched reads
// wait in the batch being built and go to the server with the next
// statement whose result is needed, or with COMMIT, in one round trip. A
// New-Order takes 2 round trips (the reads, then the writes with COMMIT),
// a Payment 2 (3 by last name), where one statement per round trip took
// 11 and 8. The server runs a query's statements in order and stops at
// the first that fails, whose error ends the batch: the transaction then
// rolls back, as after any failed statement. The results of the batch in
// flight are read in order; the next batch is sent only once they are.
type clientConn struct {
	c                  *sessConn
	noBackslashEscapes bool // the session's sql_mode has NO_BACKSLASH_ESCAPES
	// batch holds the queued statements' text, ';'-separated; queued
	// says what they are, flight what those of the batch in flight are,
	// pos the next one not yet handed to the transaction.
	batch          []byte
	queued, flight []clientStmt
	pos            int
	// rows are the results of the batch in flight, sent as a query (it
	// has reads): positioned at the result of its taken-th read. nil once
	// read, or when the batch had no read (exec), whose last statement's
	// row count is affected.
	rows     driver.Rows
	taken    int
	affected int64
	// begun: a statement of the transaction has been sent, so ending it
	// needs a round trip.
	begun bool
	row   clientRow
	rs    clientRows
}

// clientStmt is a statement of a batch: its text (with placeholders), and
// whether the transaction reads its result (a read) or only needs it to
// succeed (deferred).
type clientStmt struct {
	sql  string
	read bool
}

var (
	_ tpcc.Beginner   = (*clientConn)(nil)
	_ tpcc.Tx         = (*clientConn)(nil)
	_ tpcc.Deferrer   = (*clientConn)(nil)
	_ tpcc.Prefetcher = (*clientConn)(nil)
)

func (d *DB) newClientSession(ctx context.Context) (*clientSQLSession, error) {
	cc, err := d.newClientConn(ctx)
	if err != nil {
		return nil, err
	}
	return &clientSQLSession{ClientSession: tpcc.NewClientSession(cc, clientStatements, cc.Close), c: cc.c}, nil
}

// clientSQLSession is a client-side session that, like procSession, is a
// dialect.Interrupter: the run driver then passes its calls a context that
// is never canceled, which spares the driver handing every statement's
// context to its watcher goroutine.
type clientSQLSession struct {
	*tpcc.ClientSession
	c *sessConn
}

var (
	_ dialect.Session     = (*clientSQLSession)(nil)
	_ dialect.Interrupter = (*clientSQLSession)(nil)
)

// Interrupt expires the connection's deadline, as procSession.Interrupt
// does: the statement in flight fails at once, and so does any later one.
func (s *clientSQLSession) Interrupt() { s.c.interrupt() }

func (d *DB) newClientConn(ctx context.Context) (*clientConn, error) {
	c, err := d.openSessConn(ctx)
	if err != nil {
		return nil, err
	}
	cc := &clientConn{c: c, batch: make([]byte, 0, 4096)}
	cc.row.cc, cc.rs.cc = cc, cc
	if _, err := c.exec(ctx, "SET SESSION autocommit = 0"); err != nil {
		c.close()
		return nil, d.wrap("set session autocommit", err)
	}
	if cc.noBackslashEscapes, err = c.noBackslashEscapes(ctx); err != nil {
		c.close()
		return nil, d.wrap("read sql_mode", err)
	}
	return cc, nil
}

// Close closes the connection; an open transaction is rolled back by the
// server.
func (cc *clientConn) Close() error { return cc.c.close() }

// Begin starts a transaction: with autocommit off there is nothing to send.
func (cc *clientConn) Begin(ctx context.Context) (tpcc.Tx, error) {
	cc.reset()
	return cc, nil
}

// reset reads what is left of the batch in flight and drops what is
// queued.
func (cc *clientConn) reset() {
	_ = cc.finish()
	cc.batch, cc.queued = cc.batch[:0], cc.queued[:0]
	cc.begun = false
}

// queue appends a statement to the batch being built. A read that returns
// no rows (an INSERT, UPDATE or DELETE whose row count the transaction
// reads) is followed by SELECT ROW_COUNT(), whose one row is its result:
// the driver does not give a statement's row count in the middle of a
// query's results. An argument with no SQL literal leaves the statement
// out and is reported when the batch is sent.
func (cc *clientConn) queue(query string, args []any, read, rowCount bool) {
	n := len(cc.batch)
	if n > 0 {
		cc.batch = append(cc.batch, ';')
	}
	b, err := interpolate(cc.batch, query, args, cc.noBackslashEscapes)
	if err != nil {
		cc.batch = cc.batch[:n]
		read = true
		query = badStatement + err.Error()
	} else {
		cc.batch = b
		if rowCount {
			cc.batch = append(cc.batch, ";SELECT ROW_COUNT()"...)
		}
	}
	cc.queued = append(cc.queued, clientStmt{sql: query, read: read})
}

// returnsRows reports whether query, one of the client-side statements,
// is a SELECT.
func returnsRows(query string) bool {
	return len(query) >= 6 && strings.EqualFold(query[:6], "SELECT")
}

// badStatement marks a queued statement whose arguments could not be
// written as SQL: the batch is not sent.
const badStatement = "\x00"

// Defer implements tpcc.Deferrer.
func (cc *clientConn) Defer(query string, args ...any) { cc.queue(query, args, false, false) }

// Prefetch implements tpcc.Prefetcher.
func (cc *clientConn) Prefetch(query string, args ...any) {
	cc.queue(query, args, true, !returnsRows(query))
}

func hasRead(stmts []clientStmt) bool {
	return slices.ContainsFunc(stmts, func(s clientStmt) bool { return s.read })
}

// finish reads the rest of the batch in flight, if any: the first error
// among the results not read yet is returned.
func (cc *clientConn) finish() error {
	cc.flight, cc.pos, cc.taken = cc.flight[:0], 0, 0
	if cc.rows == nil {
		return nil
	}
	err := cc.rows.Close()
	cc.rows = nil
	return err
}

// result moves to query's result: a prefetched read's, or, when no
// prefetched read is waiting, query's own, queued after what waits and
// sent with it: executed when it is the batch's only read and exec asks
// for its row count, else as a query. The error of a deferred statement
// before it is returned.
func (cc *clientConn) result(ctx context.Context, query string, args []any, exec bool) error {
	if !hasRead(cc.flight[cc.pos:]) {
		exec = exec && !hasRead(cc.queued)
		if !hasRead(cc.queued) {
			cc.queue(query, args, true, !exec && !returnsRows(query))
		}
		if err := cc.finish(); err != nil {
			return err
		}
		if err := cc.send(ctx, exec); err != nil {
			return err
		}
	}
	for !cc.flight[cc.pos].read {
		cc.pos++
	}
	if got := cc.flight[cc.pos].sql; got != query {
		cc.finish()
		return fmt.Errorf("prefetched %q read as %q: reads must follow the order of their Prefetch", got, query)
	}
	cc.pos++
	if cc.rows == nil {
		return nil // executed: cc.affected
	}
	if cc.taken > 0 {
		err := cc.rows.(driver.RowsNextResultSet).NextResultSet()
		if err == io.EOF {
			err = errors.New("a read's result is missing from the batch")
		}
		if err != nil {
			cc.finish()
			return err
		}
	}
	cc.taken++
	return nil
}

// send sends the batch being built, as a query or executed.
func (cc *clientConn) send(ctx context.Context, exec bool) error {
	cc.flight, cc.queued = cc.queued, cc.flight[:0]
	text := string(cc.batch)
	cc.batch = cc.batch[:0]
	for _, s := range cc.flight {
		if strings.HasPrefix(s.sql, badStatement) {
			cc.flight = cc.flight[:0]
			return errors.New(strings.TrimPrefix(s.sql, badStatement))
		}
	}
	cc.begun = true
	if !exec {
		rows, err := cc.c.query(ctx, text)
		if err != nil {
			cc.flight = cc.flight[:0]
			return err
		}
		cc.rows = rows
		return nil
	}
	res, err := cc.c.exec(ctx, text)
	if err != nil {
		cc.flight = cc.flight[:0]
		return err
	}
	cc.affected = 0
	if all, ok := res.(interface{ AllRowsAffected() []int64 }); ok {
		if n := all.AllRowsAffected(); len(n) > 0 {
			cc.affected = n[len(n)-1]
		}
	} else if n, err := res.RowsAffected(); err == nil {
		cc.affected = n
	}
	return nil
}

func (cc *clientConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := cc.result(ctx, query, args, true); err != nil {
		return 0, err
	}
	if cc.rows == nil {
		return cc.affected, nil // executed
	}
	var n int64
	if err := cc.scanRow(&n); err != nil { // SELECT ROW_COUNT() (queue)
		return 0, err
	}
	return n, nil
}

func (cc *clientConn) QueryRow(ctx context.Context, query string, args ...any) tpcc.RowScanner {
	cc.row.err = cc.result(ctx, query, args, false)
	return &cc.row
}

func (cc *clientConn) Query(ctx context.Context, query string, args ...any) (tpcc.Rows, error) {
	if err := cc.result(ctx, query, args, false); err != nil {
		return nil, err
	}
	cc.rs.err = nil
	return &cc.rs, nil
}

// Commit sends what is still queued and COMMIT in one round trip.
func (cc *clientConn) Commit(ctx context.Context) error {
	if !cc.begun && len(cc.queued) == 0 {
		cc.reset() // nothing ran
		return nil
	}
	if _, err := cc.Exec(ctx, "COMMIT"); err != nil {
		return err // still begun: the rollback that follows ends it
	}
	err := cc.finish()
	cc.reset()
	return err
}

// Rollback drops what is still queued or unread and rolls the whole
// transaction back, when the server has seen any of it. It also follows a
// lock wait timeout (error 1205), after which InnoDB has by default rolled
// back only the failed statement: the transaction's retry then starts
// clean.
func (cc *clientConn) Rollback(ctx context.Context) error {
	begun := cc.begun
	cc.reset()
	if !begun {
		return nil
	}
	_, err := cc.c.exec(ctx, "ROLLBACK")
	return err
}

// clientRow is the single-row result of a read; Scan reads its first row
// (tpcc.ErrNoRows when there is none).
type clientRow struct {
	cc  *clientConn
	err error
}

func (r *clientRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.cc.scanRow(dest...)
}

// scanRow reads the current result's next row into dest: tpcc.ErrNoRows
// when there is none.
func (cc *clientConn) scanRow(dest ...any) error {
	if cc.rows == nil {
		return errors.New("the statement returned no result set")
	}
	more, err := cc.c.next(cc.rows)
	switch {
	case err != nil:
		return err
	case !more:
		return tpcc.ErrNoRows
	}
	return scanValues(cc.c.vals, dest)
}

// clientRows is the multi-row result of a read.
type clientRows struct {
	cc  *clientConn
	err error
}

func (r *clientRows) Next() bool {
	if r.err != nil {
		return false
	}
	if r.cc.rows == nil {
		r.err = errors.New("the statement returned no result set")
		return false
	}
	more, err := r.cc.c.next(r.cc.rows)
	r.err = err
	return more
}

func (r *clientRows) Scan(dest ...any) error {
	if err := scanValues(r.cc.c.vals, dest); err != nil {
		r.err = err
		return err
	}
	return nil
}

func (r *clientRows) Err() error { return r.err }

// Close leaves the rows not read to the next result or to finish, which
// skip them.
func (r *clientRows) Close() {}
