package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// clientStatements is the client-side statement text: MySQL's own '?'
// placeholders, FOR UPDATE on the reads that precede an update, and
// MySQL's multi-table UPDATE form.
var clientStatements = tpcc.NewStatements(tpcc.SQLOptions{ForUpdate: "FOR UPDATE", UpdateJoin: true})

// clientConn is the tpcc.Beginner and tpcc.Tx of a client-side session:
// one dedicated connection with every statement prepared on its first use
// and kept (only the statements a session runs count against the
// server's max_prepared_stmt_count).
//
// The connection runs with autocommit off, so a transaction begins with
// its first statement and ends with COMMIT or ROLLBACK: the same
// transaction as START TRANSACTION (without a consistent snapshot) opens,
// one round trip shorter. Com_commit and Com_rollback count both.
type clientConn struct {
	c     *sql.Conn
	nc    net.Conn // c's socket
	stmts map[string]*sql.Stmt
}

func (d *DB) newClientSession(ctx context.Context) (*clientSQLSession, error) {
	cc, err := d.newClientConn(ctx)
	if err != nil {
		return nil, err
	}
	return &clientSQLSession{ClientSession: tpcc.NewClientSession(cc, clientStatements, cc.Close), nc: cc.nc}, nil
}

// clientSQLSession is a client-side session that, like procSession, is a
// dialect.Interrupter: the run driver then passes its calls a context that
// is never canceled, which spares the driver handing every statement's
// context to its watcher goroutine.
type clientSQLSession struct {
	*tpcc.ClientSession
	nc net.Conn // the connection's socket, for Interrupt
}

var (
	_ dialect.Session     = (*clientSQLSession)(nil)
	_ dialect.Interrupter = (*clientSQLSession)(nil)
)

// Interrupt expires the connection's deadline, as procSession.Interrupt
// does: the statement in flight fails at once, and so does any later one.
func (s *clientSQLSession) Interrupt() {
	_ = s.nc.SetDeadline(time.Now())
}

func (d *DB) newClientConn(ctx context.Context) (*clientConn, error) {
	var nc net.Conn
	c, err := d.sessDB.Conn(context.WithValue(ctx, dialedKey{}, &nc))
	if err != nil {
		return nil, d.wrap("open session", err)
	}
	if nc == nil {
		// sessDB keeps no idle connection, so this does not happen.
		discard(c)
		return nil, d.wrap("open session", errors.New("the session's connection was not dialed for it"))
	}
	cc := &clientConn{c: c, nc: nc, stmts: make(map[string]*sql.Stmt, 48)}
	if _, err := c.ExecContext(ctx, "SET SESSION autocommit = 0"); err != nil {
		cc.Close()
		return nil, d.wrap("set session autocommit", err)
	}
	return cc, nil
}

// stmt returns the prepared statement of query, preparing it on first use.
func (cc *clientConn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := cc.stmts[query]; st != nil {
		return st, nil
	}
	st, err := cc.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	cc.stmts[query] = st
	return st, nil
}

// Close closes the prepared statements and the connection; an open
// transaction is rolled back by the server.
func (cc *clientConn) Close() error {
	for _, st := range cc.stmts {
		st.Close()
	}
	return discard(cc.c)
}

// Begin starts a transaction: with autocommit off there is nothing to send.
func (cc *clientConn) Begin(ctx context.Context) (tpcc.Tx, error) { return cc, nil }

// Commit ends the transaction.
func (cc *clientConn) Commit(ctx context.Context) error {
	_, err := cc.c.ExecContext(ctx, "COMMIT")
	return err
}

// Rollback rolls the whole transaction back. It also follows a lock wait
// timeout (error 1205), after which InnoDB has by default rolled back only
// the failed statement: the transaction's retry then starts clean.
func (cc *clientConn) Rollback(ctx context.Context) error {
	_, err := cc.c.ExecContext(ctx, "ROLLBACK")
	return err
}

func (cc *clientConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	st, err := cc.stmt(ctx, query)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (cc *clientConn) QueryRow(ctx context.Context, query string, args ...any) tpcc.RowScanner {
	st, err := cc.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return row{st.QueryRowContext(ctx, args...)}
}

func (cc *clientConn) Query(ctx context.Context, query string, args ...any) (tpcc.Rows, error) {
	st, err := cc.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	r, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

// errRow is the result of a QueryRow whose statement could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
