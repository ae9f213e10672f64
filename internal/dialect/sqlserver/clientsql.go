package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// statements are the client-side statements in T-SQL, built once: '?'
// numbered (tsql), LIMIT 1 as TOP (1), no FOR UPDATE (T-SQL has none, and
// Babelfish ignores the lock hints that stand for it); the reads that
// precede an update of the same rows lock them by updating them first,
// in the same batch (lockByUpdate), which holds under SQL Server's locking
// and under MVCC with hints ignored.
var statements = func() *tpcc.Statements {
	st := tpcc.NewStatements(tpcc.SQLOptions{}).Map(tsql)
	// TPC-C 2.4.2.2: the district row, whose D_NEXT_O_ID the New-Order
	// increments.
	st.NewOrderDistrict = lockByUpdate(st.NewOrderDistrict, "d_next_o_id")
	// TPC-C 2.4.2.2: the stock rows, whose S_QUANTITY the New-Order sets
	// from what it read.
	for d := range st.NewOrderStocks {
		st.NewOrderStocks[d] = lockByUpdate(st.NewOrderStocks[d], "s_quantity")
	}
	// TPC-C 2.5.2.2: the customer row, whose C_DATA a Payment to a
	// bad-credit customer sets from what it read.
	st.PaymentCustomer = lockByUpdate(st.PaymentCustomer, "c_balance")
	return st
}()

// lockByUpdate prefixes the read q ("SELECT ... FROM t WHERE cond [ORDER BY
// ...]") with "UPDATE t SET col = col WHERE cond;": the update takes the
// rows' locks, held to the end of the transaction, changing nothing, and
// the read that follows in the same batch sees them as the transaction
// then has them. Its parameters are the read's own: the same @p names.
func lockByUpdate(q, col string) string {
	_, afterFrom, ok := strings.Cut(q, " FROM ")
	if !ok {
		panic("lockByUpdate: no FROM in " + q)
	}
	table, cond, ok := strings.Cut(afterFrom, " WHERE ")
	if !ok {
		panic("lockByUpdate: no WHERE in " + q)
	}
	cond, _, _ = strings.Cut(cond, " ORDER BY ")
	return "UPDATE " + table + " SET " + col + " = " + col + " WHERE " + cond + "; " + q
}

// clientConn is the tpcc.Beginner of a client-side session: one
// database/sql transaction at a time on the session's connection.
type clientConn struct {
	s  *sessConn
	tx clientTx
}

func newClientSession(sc *sessConn) *clientSession {
	cc := &clientConn{s: sc}
	return &clientSession{ClientSession: tpcc.NewClientSession(cc, statements, sc.Close), sessConn: sc}
}

// clientSession is tpcc.ClientSession on a session connection that can be
// interrupted.
type clientSession struct {
	*tpcc.ClientSession
	sessConn *sessConn
}

// Close closes the session's connection.
func (s *clientSession) Close() error { return s.ClientSession.Close() }

// Interrupt expires the connection's socket (sessConn.Interrupt).
func (s *clientSession) Interrupt() { s.sessConn.Interrupt() }

var (
	_ dialect.Session     = (*clientSession)(nil)
	_ dialect.Interrupter = (*clientSession)(nil)
)

func (c *clientConn) Begin(ctx context.Context) (tpcc.Tx, error) {
	t, err := c.s.c.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	c.tx.t = t
	return &c.tx, nil
}

// clientTx runs the statements, already T-SQL, in one transaction.
type clientTx struct{ t *sql.Tx }

func (t *clientTx) Exec(ctx context.Context, q string, a ...any) (int64, error) {
	return execOn(ctx, t.t, q, a)
}

func (t *clientTx) QueryRow(ctx context.Context, q string, a ...any) tpcc.RowScanner {
	return row{t.t.QueryRowContext(ctx, q, args(a)...), ctx}
}

func (t *clientTx) Query(ctx context.Context, q string, a ...any) (tpcc.Rows, error) {
	return queryOn(ctx, t.t, q, a)
}

func (t *clientTx) Commit(context.Context) error {
	if err := t.t.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (t *clientTx) Rollback(context.Context) error { return t.t.Rollback() }
