package mysql

import (
	"context"
	"database/sql"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// clientStatements is the client-side statement text: MySQL's own '?'
// placeholders, FOR UPDATE on the reads that precede an update.
var clientStatements = tpcc.NewStatements(tpcc.SQLOptions{ForUpdate: "FOR UPDATE"})

// clientConn is the tpcc.Beginner and tpcc.Tx of a client-side session:
// one dedicated connection with every statement prepared once.
//
// The connection runs with autocommit off, so a transaction begins with
// its first statement and ends with COMMIT or ROLLBACK: the same
// transaction as START TRANSACTION (without a consistent snapshot) opens,
// one round trip shorter. Com_commit and Com_rollback count both.
type clientConn struct {
	c     *sql.Conn
	stmts map[string]*sql.Stmt
}

func (d *DB) newClientSession(ctx context.Context) (*tpcc.ClientSession, error) {
	cc, err := d.newClientConn(ctx)
	if err != nil {
		return nil, err
	}
	return tpcc.NewClientSession(cc, clientStatements, cc.Close), nil
}

func (d *DB) newClientConn(ctx context.Context) (*clientConn, error) {
	c, err := d.sessDB.Conn(ctx)
	if err != nil {
		return nil, d.wrap("open session", err)
	}
	cc := &clientConn{c: c, stmts: make(map[string]*sql.Stmt, 48)}
	if _, err := c.ExecContext(ctx, "SET SESSION autocommit = 0"); err != nil {
		cc.Close()
		return nil, d.wrap("set session autocommit", err)
	}
	for _, q := range clientStatements.All() {
		st, err := c.PrepareContext(ctx, q)
		if err != nil {
			cc.Close()
			return nil, d.wrap("prepare client-side statements", err)
		}
		cc.stmts[q] = st
	}
	return cc, nil
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
	var res sql.Result
	var err error
	if st := cc.stmts[query]; st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = cc.c.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (cc *clientConn) QueryRow(ctx context.Context, query string, args ...any) tpcc.RowScanner {
	if st := cc.stmts[query]; st != nil {
		return row{st.QueryRowContext(ctx, args...)}
	}
	return row{cc.c.QueryRowContext(ctx, query, args...)}
}

func (cc *clientConn) Query(ctx context.Context, query string, args ...any) (tpcc.Rows, error) {
	var r *sql.Rows
	var err error
	if st := cc.stmts[query]; st != nil {
		r, err = st.QueryContext(ctx, args...)
	} else {
		r, err = cc.c.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}
