package postgres

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// clientSQLOptions are PostgreSQL's variants of the client-side statements.
// A derived table's parameters need a type: PostgreSQL would take them
// for text.
var clientSQLOptions = tpcc.SQLOptions{ForUpdate: "FOR UPDATE", IntParam: "CAST(? AS INTEGER)"}

// clientSQLStatements are shared by every client-SQL session (read only),
// their placeholders rewritten to $n once.
var clientSQLStatements = tpcc.NewStatements(clientSQLOptions).Map(rewritePlaceholders)

// newClientSQLSession runs the transactions from the client over c
// (dialect.StyleClientSQL), each in a READ COMMITTED transaction, the
// PostgreSQL default that HammerDB also uses.
func newClientSQLSession(c *pgx.Conn) *tpcc.ClientSession {
	// The statements are already in $n form: the session's querier does
	// not rewrite (nil sqls).
	b := &clientTx{conn: c}
	return tpcc.NewClientSession(b, clientSQLStatements, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		return c.Close(ctx)
	})
}

// pgxQuerier is what *pgx.Conn and pgx.Tx have in common.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// querier adapts a pgx connection or transaction to tpcc.Querier: with a
// non-nil sqls cache it rewrites '?' placeholders to $n (once per distinct
// statement), and it translates pgx.ErrNoRows to tpcc.ErrNoRows. It reuses one row and one
// rows value, so a caller has at most one result open at a time (as
// tpcc's transactions do).
type querier struct {
	q    pgxQuerier
	sqls map[string]string // statement with '?' -> with $n; nil: no rewriting
	row  row
	rows rows
}

func (q *querier) sql(s string) string {
	if q.sqls == nil {
		return s
	}
	if r, ok := q.sqls[s]; ok {
		return r
	}
	r := rewritePlaceholders(s)
	q.sqls[s] = r
	return r
}

func (q *querier) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := q.q.Exec(ctx, q.sql(sql), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (q *querier) QueryRow(ctx context.Context, sql string, args ...any) tpcc.RowScanner {
	q.row.r = q.q.QueryRow(ctx, q.sql(sql), args...)
	return &q.row
}

func (q *querier) Query(ctx context.Context, sql string, args ...any) (tpcc.Rows, error) {
	r, err := q.q.Query(ctx, q.sql(sql), args...)
	if err != nil {
		return nil, err
	}
	q.rows.Rows = r
	return &q.rows, nil
}

type row struct{ r pgx.Row }

func (r *row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	r.r = nil
	if errors.Is(err, pgx.ErrNoRows) {
		return tpcc.ErrNoRows
	}
	return err
}

type rows struct{ pgx.Rows }

func (r *rows) Close() { r.Rows.Close() }

// rewritePlaceholders turns each '?' outside quotes into $1, $2, ...
func rewritePlaceholders(s string) string {
	out := make([]byte, 0, len(s)+16)
	n := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			out = append(out, '$')
			out = strconv.AppendInt(out, int64(n), 10)
			continue
		}
		out = append(out, c)
	}
	return string(out)
}

// clientTx is the tpcc.Beginner, tpcc.Tx and tpcc.Deferrer of a
// client-side session: one transaction at a time on one connection,
// pipelined. BEGIN and the deferred statements wait in a pgx.Batch and go
// to the server with the next statement that returns something, or with
// COMMIT, in one round trip (one Sync, pgx's batch): a New-Order takes 5
// round trips, a Payment 4. Statements are prepared once per connection
// (pgx's statement cache) and sent in binary form.
type clientTx struct {
	conn  *pgx.Conn
	batch pgx.Batch
	// begun: BEGIN has been sent, so ending the transaction needs a
	// round trip; false while BEGIN still waits in batch.
	begun bool
	// sent: batch went to the server and its results may still be being
	// read (pgx reads them through the batch); it is emptied before the
	// next statement is queued.
	sent bool
	row  batchRow
	rows batchRows
}

var (
	_ tpcc.Beginner = (*clientTx)(nil)
	_ tpcc.Tx       = (*clientTx)(nil)
	_ tpcc.Deferrer = (*clientTx)(nil)
)

// beginSQL opens a client-side transaction in READ COMMITTED, the
// PostgreSQL default that HammerDB also uses.
const beginSQL = "BEGIN ISOLATION LEVEL READ COMMITTED"

// Begin queues BEGIN: it goes with the transaction's first statement.
func (t *clientTx) Begin(ctx context.Context) (tpcc.Tx, error) {
	t.reset()
	t.queue(beginSQL, nil)
	return t, nil
}

func (t *clientTx) reset() {
	t.empty()
	t.begun = false
}

// empty empties the batch, keeping its capacity.
func (t *clientTx) empty() {
	clear(t.batch.QueuedQueries)
	t.batch.QueuedQueries = t.batch.QueuedQueries[:0]
	t.sent = false
}

// queue adds a statement to the batch, emptying it first if it was sent.
func (t *clientTx) queue(sql string, args []any) {
	if t.sent {
		t.empty()
	}
	t.batch.Queue(sql, args...)
}

// Defer implements tpcc.Deferrer.
func (t *clientTx) Defer(sql string, args ...any) { t.queue(sql, args) }

// send sends the queued statements followed by sql and reads the queued
// statements' results: the first error among them, if any, closes the
// batch; otherwise the caller reads sql's result from the returned batch
// and closes it.
func (t *clientTx) send(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	t.queue(sql, args)
	queued := len(t.batch.QueuedQueries) - 1
	br := t.conn.SendBatch(ctx, &t.batch)
	t.begun, t.sent = true, true
	var first error
	for range queued {
		if _, err := br.Exec(); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		br.Close()
		return nil, first
	}
	return br, nil
}

func (t *clientTx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	br, err := t.send(ctx, sql, args)
	if err != nil {
		return 0, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (t *clientTx) QueryRow(ctx context.Context, sql string, args ...any) tpcc.RowScanner {
	br, err := t.send(ctx, sql, args)
	t.row = batchRow{br: br, err: err}
	if err == nil {
		t.row.r = br.QueryRow()
	}
	return &t.row
}

func (t *clientTx) Query(ctx context.Context, sql string, args ...any) (tpcc.Rows, error) {
	br, err := t.send(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	r, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	t.rows = batchRows{Rows: r, br: br}
	return &t.rows, nil
}

// Commit sends what is still queued and COMMIT in one round trip.
func (t *clientTx) Commit(ctx context.Context) error {
	if !t.begun && !t.sent && len(t.batch.QueuedQueries) == 1 {
		t.reset() // only BEGIN: nothing ran
		return nil
	}
	if _, err := t.Exec(ctx, "COMMIT"); err != nil {
		return err // still begun: the rollback that follows ends it
	}
	t.reset()
	return nil
}

// Rollback discards what is still queued and rolls back what the server
// has seen (nothing, when even BEGIN is still queued).
func (t *clientTx) Rollback(ctx context.Context) error {
	begun := t.begun
	t.reset()
	if !begun {
		return nil
	}
	_, err := t.conn.Exec(ctx, "ROLLBACK")
	return err
}

// batchRow is the single-row result of the statement that ended a batch;
// Scan closes the batch and translates pgx.ErrNoRows to tpcc.ErrNoRows.
type batchRow struct {
	br  pgx.BatchResults
	r   pgx.Row
	err error
}

func (r *batchRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	err := r.r.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	r.r, r.br = nil, nil
	if errors.Is(err, pgx.ErrNoRows) {
		return tpcc.ErrNoRows
	}
	return err
}

// batchRows is the multi-row result of the statement that ended a batch;
// Close closes the batch.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r *batchRows) Close() {
	r.Rows.Close()
	r.br.Close()
}
