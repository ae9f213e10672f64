package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
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
// transaction at a time on the session's connection (clientTx).
type clientConn struct {
	s  *sessConn
	tx clientTx
}

// clientSettings are set once on a client-side session's connection:
// every error aborts and rolls back the whole transaction (as the
// procedures do), and writes report no row counts (a batch's results are
// its reads only; a count a caller needs is selected, @@ROWCOUNT).
const clientSettings = "SET XACT_ABORT ON; SET NOCOUNT ON"

func (d *DB) newClientSession(ctx context.Context, sc *sessConn) (*clientSession, error) {
	if _, err := sc.c.ExecContext(ctx, clientSettings); err != nil {
		sc.Close()
		return nil, d.wrap("open session", err)
	}
	cc := &clientConn{s: sc}
	cc.tx.c = sc.c
	return &clientSession{ClientSession: tpcc.NewClientSession(cc, statements, sc.Close), sessConn: sc}, nil
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
	_ tpcc.Deferrer       = (*clientTx)(nil)
	_ tpcc.Prefetcher     = (*clientTx)(nil)
)

// Begin starts a transaction: BEGIN TRANSACTION waits in the batch for the
// transaction's first statement.
func (c *clientConn) Begin(context.Context) (tpcc.Tx, error) {
	c.tx.reset()
	c.tx.add("BEGIN TRANSACTION", nil)
	c.tx.open = true
	return &c.tx, nil
}

// clientTx runs a client-side transaction in batches (tpcc.Deferrer and
// tpcc.Prefetcher): BEGIN TRANSACTION, the writes whose results are not
// read and the reads whose arguments are known wait in one T-SQL batch,
// sent with the next statement whose result is needed, or with COMMIT
// TRANSACTION; the batch's reads come back as its result sets, in order.
// A New-Order or a Payment is two round trips. Each statement's @p
// parameters are renumbered after those already in the batch.
type clientTx struct {
	c *sql.Conn
	// open: BEGIN TRANSACTION was queued; sent: it was sent.
	open, sent bool
	text       []byte
	params     []any
	// queued are the prefetched statements of the unsent batch, in order;
	// pending those of the sent one whose results are still unread.
	queued, pending []string
	rows            *sql.Rows
	// read: the rows' current result set was handed out.
	read bool
}

func (t *clientTx) reset() {
	t.closeRows()
	t.open, t.sent = false, false
	t.text, t.params = t.text[:0], t.params[:0]
	t.queued, t.pending = t.queued[:0], t.pending[:0]
}

func (t *clientTx) closeRows() {
	if t.rows != nil {
		_ = t.rows.Close()
		t.rows = nil
	}
}

// add appends statement q with its arguments to the batch.
func (t *clientTx) add(q string, a []any) {
	if len(t.text) > 0 {
		t.text = append(t.text, ";\n"...)
	}
	t.text = renumber(t.text, q, len(t.params))
	t.params = append(t.params, args(a)...)
}

// renumber appends q to dst with every @pN parameter moved up by offset.
func renumber(dst []byte, q string, offset int) []byte {
	if offset == 0 {
		return append(dst, q...)
	}
	for i := 0; i < len(q); i++ {
		if q[i] == '@' && i+2 < len(q) && q[i+1] == 'p' && q[i+2] >= '0' && q[i+2] <= '9' {
			j := i + 2
			n := 0
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				n = n*10 + int(q[j]-'0')
				j++
			}
			dst = strconv.AppendInt(append(dst, "@p"...), int64(n+offset), 10)
			i = j - 1
			continue
		}
		dst = append(dst, q[i])
	}
	return dst
}

// isWrite: a statement without a result set of its own; prefetched, it
// selects @@ROWCOUNT for Exec to read.
func isWrite(q string) bool {
	return !strings.HasPrefix(q, "SELECT ") && !strings.Contains(q, "; SELECT ")
}

func (t *clientTx) Defer(q string, a ...any) { t.add(q, a) }

func (t *clientTx) Prefetch(q string, a ...any) {
	t.add(q, a)
	if isWrite(q) {
		t.text = append(t.text, "; SELECT @@ROWCOUNT"...)
	}
	t.queued = append(t.queued, q)
}

// send sends the batch and positions the rows on its first result set.
func (t *clientTx) send(ctx context.Context) error {
	t.closeRows()
	text := string(t.text)
	t.text = t.text[:0]
	t.sent = t.sent || t.open
	t.pending = append(t.pending[:0], t.queued...)
	t.queued = t.queued[:0]
	rows, err := t.c.QueryContext(ctx, text, t.params...)
	t.params = t.params[:0]
	if err != nil {
		return err
	}
	t.rows, t.read = rows, false
	return nil
}

// result returns the rows of statement q's result: the next one of the
// sent batch when q was prefetched, else q's own, sent with the batch.
func (t *clientTx) result(ctx context.Context, q string, a []any) (*sql.Rows, error) {
	if len(t.pending) == 0 && len(t.queued) > 0 && t.queued[0] == q {
		if err := t.send(ctx); err != nil {
			return nil, err
		}
	}
	if len(t.pending) > 0 && t.pending[0] == q {
		t.pending = t.pending[1:]
		if t.read {
			if !t.rows.NextResultSet() {
				if err := t.rows.Err(); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("the batch returned no result for %.60s...", q)
			}
		}
		t.read = true
		return t.rows, nil
	}
	if len(t.pending) > 0 || len(t.queued) > 0 {
		return nil, fmt.Errorf("statement %.60s... read before the prefetched %.60s...", q, append(t.pending, t.queued...)[0])
	}
	t.Prefetch(q, a...)
	return t.result(ctx, q, nil)
}

func (t *clientTx) Exec(ctx context.Context, q string, a ...any) (int64, error) {
	rows, err := t.result(ctx, q, a)
	if err != nil {
		return 0, err
	}
	var n int64
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("no @@ROWCOUNT after %.60s...", q)
	}
	err = rows.Scan(&n)
	for rows.Next() {
	}
	return n, err
}

func (t *clientTx) QueryRow(ctx context.Context, q string, a ...any) tpcc.RowScanner {
	rows, err := t.result(ctx, q, a)
	if err != nil {
		return errRow{err}
	}
	return batchRow{rows}
}

func (t *clientTx) Query(ctx context.Context, q string, a ...any) (tpcc.Rows, error) {
	rows, err := t.result(ctx, q, a)
	if err != nil {
		return nil, err
	}
	return &batchRows{r: rows}, nil
}

// Commit sends what is still queued with COMMIT TRANSACTION.
func (t *clientTx) Commit(ctx context.Context) error {
	if len(t.pending) > 0 || len(t.queued) > 0 {
		return fmt.Errorf("commit with %d prefetched results unread", len(t.pending)+len(t.queued))
	}
	t.closeRows()
	t.add("COMMIT TRANSACTION", nil)
	text := string(t.text)
	_, err := t.c.ExecContext(ctx, text, t.params...)
	t.open = false
	t.reset()
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Rollback discards what is queued and rolls back what the server began.
// An error has already rolled the transaction back (XACT_ABORT ON).
func (t *clientTx) Rollback(ctx context.Context) error {
	sent := t.sent
	t.reset()
	if !sent {
		return nil
	}
	_, err := t.c.ExecContext(ctx, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION")
	return err
}

// batchRow is one result set of a batch read as one row: the first, the
// rest skipped.
type batchRow struct{ r *sql.Rows }

func (b batchRow) Scan(dest ...any) error {
	if !b.r.Next() {
		if err := b.r.Err(); err != nil {
			return err
		}
		return tpcc.ErrNoRows
	}
	err := b.r.Scan(dest...)
	for b.r.Next() {
	}
	if err == nil {
		err = b.r.Err()
	}
	return err
}

// batchRows is one result set of a batch; Close skips what is unread of
// it and leaves the batch's later result sets to their readers.
type batchRows struct {
	r    *sql.Rows
	done bool
}

func (b *batchRows) Next() bool {
	if b.done {
		return false
	}
	if b.r.Next() {
		return true
	}
	b.done = true
	return false
}

func (b *batchRows) Scan(dest ...any) error { return b.r.Scan(dest...) }
func (b *batchRows) Err() error             { return b.r.Err() }

func (b *batchRows) Close() {
	for !b.done && b.r.Next() {
	}
	b.done = true
}
