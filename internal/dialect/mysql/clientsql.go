package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// clientStatements is the client-side statement text: MySQL's own '?'
// placeholders, FOR UPDATE on the reads that precede an update, and
// MySQL's multi-table UPDATE form.
var clientStatements = tpcc.NewStatements(tpcc.SQLOptions{ForUpdate: "FOR UPDATE", UpdateJoin: true})

// clientConn is the tpcc.PipelineConn of a client-side session: one
// dedicated connection (sessConn) with autocommit off, so that a
// transaction begins with its first statement and ends with COMMIT or
// ROLLBACK (the same transaction as START TRANSACTION without a
// consistent snapshot opens, one statement shorter; Com_commit and
// Com_rollback count both).
//
// A batch goes as one text query of several statements, their arguments
// interpolated (interpolate): a New-Order takes 2 round trips (the reads,
// then the writes with COMMIT), a Payment 2 (3 by last name), where one
// statement per round trip took 11 and 8 (tpcc.Pipeline). The server
// runs a query's statements in order and stops at the first that fails,
// whose error ends the batch: the transaction then rolls back, as after
// any failed statement.
type clientConn struct {
	c                  *sessConn
	noBackslashEscapes bool // the session's sql_mode has NO_BACKSLASH_ESCAPES
	// batch holds the queued statements' text, ';'-separated; exec: its
	// only read is its last statement's row count (tpcc.ResultCount), so
	// it is executed rather than sent as a query.
	batch []byte
	exec  bool
	// rows are the results of the batch in flight, sent as a query:
	// positioned at the result of its taken-th read. nil once read, or
	// when the batch was executed, whose last statement's row count is
	// affected.
	rows     driver.Rows
	taken    int
	affected int64
}

var _ tpcc.PipelineConn = (*clientConn)(nil)

func (d *DB) newClientSession(ctx context.Context) (*clientSQLSession, error) {
	cc, err := d.newClientConn(ctx)
	if err != nil {
		return nil, err
	}
	return &clientSQLSession{ClientSession: tpcc.NewClientSession(newClientTx(cc), clientStatements, cc.Close), c: cc.c}, nil
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

// newClientTx returns the pipelined transactions of a client-side session
// over cc. With autocommit off there is nothing to send to begin one.
func newClientTx(cc *clientConn) *tpcc.Pipeline { return tpcc.NewPipeline(cc, "") }

func (d *DB) newClientConn(ctx context.Context) (*clientConn, error) {
	c, err := d.openSessConn(ctx)
	if err != nil {
		return nil, err
	}
	cc := &clientConn{c: c, batch: make([]byte, 0, 4096)}
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

// Queue appends a statement to the batch being built. A read that returns
// no rows (an INSERT, UPDATE or DELETE whose row count the transaction
// reads) is followed by SELECT ROW_COUNT(), whose one row is its result:
// the driver does not give a statement's row count in the middle of a
// query's results.
func (cc *clientConn) Queue(query string, args []any, use tpcc.ResultUse) error {
	n := len(cc.batch)
	if n > 0 {
		cc.batch = append(cc.batch, ';')
	}
	b, err := interpolate(cc.batch, query, args, cc.noBackslashEscapes)
	if err != nil {
		cc.batch = cc.batch[:n]
		return err
	}
	cc.batch = b
	if use == tpcc.ResultRead && !returnsRows(query) {
		cc.batch = append(cc.batch, ";SELECT ROW_COUNT()"...)
	}
	cc.exec = use == tpcc.ResultCount
	return nil
}

// returnsRows reports whether query, one of the client-side statements,
// is a SELECT.
func returnsRows(query string) bool {
	return len(query) >= 6 && strings.EqualFold(query[:6], "SELECT")
}

func (cc *clientConn) Discard() { cc.batch, cc.exec = cc.batch[:0], false }

// Send sends the batch being built, as a query or executed. The error of
// the first statement that fails before the first read comes here.
func (cc *clientConn) Send(ctx context.Context) error {
	text := string(cc.batch)
	exec := cc.exec
	cc.Discard()
	if !exec {
		rows, err := cc.c.query(ctx, text)
		if err != nil {
			return err
		}
		cc.rows = rows
		return nil
	}
	res, err := cc.c.exec(ctx, text)
	if err != nil {
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

// Result moves to the next read's result set. The driver skips the
// results of the deferred statements (they have no columns), and returns
// the error of one that failed as the next result set's.
func (cc *clientConn) Result(read bool) error {
	if !read || cc.rows == nil {
		return nil // executed: cc.affected
	}
	if cc.taken > 0 {
		err := cc.rows.(driver.RowsNextResultSet).NextResultSet()
		if err == io.EOF {
			err = errors.New("a read's result is missing from the batch")
		}
		if err != nil {
			return err
		}
	}
	cc.taken++
	return nil
}

// Finish reads the rest of the batch in flight, if any: the first error
// among the results not read yet is returned.
func (cc *clientConn) Finish() error {
	cc.taken = 0
	if cc.rows == nil {
		return nil
	}
	err := cc.rows.Close()
	cc.rows = nil
	return err
}

// Affected is the row count of the executed batch's last statement, or
// the one row of a read's SELECT ROW_COUNT() (Queue).
func (cc *clientConn) Affected() (int64, error) {
	if cc.rows == nil {
		return cc.affected, nil
	}
	var n int64
	more, err := cc.NextRow()
	if err == nil && !more {
		err = tpcc.ErrNoRows
	}
	if err == nil {
		err = cc.Scan(&n)
	}
	return n, err
}

// NextRow reads the current result's next row into cc.c.vals.
func (cc *clientConn) NextRow() (bool, error) {
	if cc.rows == nil {
		return false, errors.New("the statement returned no result set")
	}
	return cc.c.next(cc.rows)
}

func (cc *clientConn) Scan(dest ...any) error { return scanValues(cc.c.vals, dest) }
