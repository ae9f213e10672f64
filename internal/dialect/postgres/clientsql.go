package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/placeholder"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// clientSQLOptions are PostgreSQL's variants of the client-side statements.
// A derived table's parameters need a type: PostgreSQL would take them
// for text.
var clientSQLOptions = tpcc.SQLOptions{ForUpdate: "FOR UPDATE", IntParam: "CAST(? AS INTEGER)"}

// clientSQLStatements are shared by every client-SQL session (read only),
// their placeholders rewritten to $n once.
var clientSQLStatements = tpcc.NewStatements(clientSQLOptions).Map(placeholder.Dollar)

// newClientSQLSession runs the transactions from the client over c
// (dialect.StyleClientSQL), each in a READ COMMITTED transaction, the
// PostgreSQL default that HammerDB also uses.
func newClientSQLSession(c *pgx.Conn) *clientSQLSession {
	// The statements are already in $n form: the session's querier does
	// not rewrite (nil sqls).
	b := &clientTx{conn: c}
	return &clientSQLSession{
		ClientSession: tpcc.NewClientSession(b, clientSQLStatements, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
			defer cancel()
			return c.Close(ctx)
		}),
		conn: c,
	}
}

// clientSQLSession is a client-side session that, like procSession, is a
// dialect.Interrupter: the run driver then passes its calls a context that
// is never canceled, which spares pgx watching one on every batch.
type clientSQLSession struct {
	*tpcc.ClientSession
	conn *pgx.Conn
}

var (
	_ dialect.Session     = (*clientSQLSession)(nil)
	_ dialect.Interrupter = (*clientSQLSession)(nil)
)

// Interrupt expires the connection's deadline, as procSession.Interrupt
// does: the batch in flight fails at once, and so does any later one.
func (s *clientSQLSession) Interrupt() {
	_ = s.conn.PgConn().Conn().SetDeadline(time.Now())
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
	r := placeholder.Dollar(s)
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

// clientTx is the tpcc.Beginner, tpcc.Tx, tpcc.Deferrer and
// tpcc.Prefetcher of a client-side session: one transaction at a time on
// one connection, pipelined. BEGIN, the deferred statements and the
// prefetched reads wait in a pgx.Batch and go to the server with the next
// statement whose result is needed, or with COMMIT, in one round trip (one
// Sync, pgx's batch): a New-Order takes 2 round trips, a Payment 2 (3 by
// last name). The results of a batch in flight are read in order; a new
// batch is sent only once they are all read. Statements are prepared once
// per connection (pgx's statement cache) and sent in binary form.
type clientTx struct {
	conn *pgx.Conn
	// batches alternate: one is being filled (index next) while the other
	// may be in flight, its results read through br.
	batches [2]clientBatch
	next    int
	br      pgx.BatchResults // results of batches[1-next]; nil: none in flight
	pos     int              // index of the next unread result in br
	// begun: BEGIN has been sent, so ending the transaction needs a
	// round trip; false while BEGIN still waits in a batch.
	begun bool
	row   batchRow
	rows  batchRows
}

// clientBatch is a batch and, for each queued statement, whether its
// result is read by the transaction (a read) or only checked (deferred).
type clientBatch struct {
	pgx.Batch
	read []bool
}

// empty empties b, keeping its capacity.
func (b *clientBatch) empty() {
	clear(b.QueuedQueries)
	b.QueuedQueries = b.QueuedQueries[:0]
	b.read = b.read[:0]
}

var (
	_ tpcc.Beginner   = (*clientTx)(nil)
	_ tpcc.Tx         = (*clientTx)(nil)
	_ tpcc.Deferrer   = (*clientTx)(nil)
	_ tpcc.Prefetcher = (*clientTx)(nil)
)

// beginSQL opens a client-side transaction in READ COMMITTED, the
// PostgreSQL default that HammerDB also uses.
const beginSQL = "BEGIN ISOLATION LEVEL READ COMMITTED"

// Begin queues BEGIN: it goes with the transaction's first statement.
func (t *clientTx) Begin(ctx context.Context) (tpcc.Tx, error) {
	t.reset()
	t.queue(beginSQL, nil, false)
	return t, nil
}

// reset discards the batch in flight and what is queued.
func (t *clientTx) reset() {
	if t.br != nil {
		t.br.Close()
		t.br = nil
	}
	t.batches[0].empty()
	t.batches[1].empty()
	t.begun = false
}

func (t *clientTx) queue(sql string, args []any, read bool) {
	b := &t.batches[t.next]
	b.Queue(sql, args...)
	b.read = append(b.read, read)
}

// Defer implements tpcc.Deferrer.
func (t *clientTx) Defer(sql string, args ...any) { t.queue(sql, args, false) }

// Prefetch implements tpcc.Prefetcher.
func (t *clientTx) Prefetch(sql string, args ...any) { t.queue(sql, args, true) }

// unread reports whether the batch in flight has a read not yet read.
func (t *clientTx) unread() bool {
	if t.br == nil {
		return false
	}
	return slices.Contains(t.batches[1-t.next].read[t.pos:], true)
}

// finish reads the remaining results of the batch in flight, if any, and
// closes it: the first error among them is returned.
func (t *clientTx) finish() error {
	if t.br == nil {
		return nil
	}
	err := t.br.Close()
	t.br = nil
	t.batches[1-t.next].empty()
	return err
}

// result returns the batch results positioned at sql's result: a
// prefetched read's, or, when no prefetched read is waiting, sql's own,
// queued after what waits and sent with it. The first error among the
// deferred statements before it closes the batch and is returned.
func (t *clientTx) result(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	if !t.unread() {
		if !slices.Contains(t.batches[t.next].read, true) {
			t.queue(sql, args, true)
		}
		if err := t.finish(); err != nil {
			return nil, err
		}
		t.br = t.conn.SendBatch(ctx, &t.batches[t.next].Batch)
		t.next, t.pos = 1-t.next, 0
		t.begun = true
	}
	b := &t.batches[1-t.next]
	for ; t.pos < len(b.read); t.pos++ {
		if b.read[t.pos] {
			break
		}
		if _, err := t.br.Exec(); err != nil {
			t.finish()
			return nil, err
		}
	}
	if got := b.QueuedQueries[t.pos].SQL; got != sql {
		t.finish()
		return nil, fmt.Errorf("prefetched %q read as %q: reads must follow the order of their Prefetch", got, sql)
	}
	t.pos++
	return t.br, nil
}

func (t *clientTx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	br, err := t.result(ctx, sql, args)
	if err != nil {
		return 0, err
	}
	tag, err := br.Exec()
	if err != nil {
		t.finish()
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (t *clientTx) QueryRow(ctx context.Context, sql string, args ...any) tpcc.RowScanner {
	br, err := t.result(ctx, sql, args)
	t.row = batchRow{err: err}
	if err == nil {
		t.row.r = br.QueryRow()
	}
	return &t.row
}

func (t *clientTx) Query(ctx context.Context, sql string, args ...any) (tpcc.Rows, error) {
	br, err := t.result(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	r, err := br.Query()
	if err != nil {
		t.finish()
		return nil, err
	}
	t.rows = batchRows{Rows: r}
	return &t.rows, nil
}

// Commit sends what is still queued and COMMIT in one round trip.
func (t *clientTx) Commit(ctx context.Context) error {
	if !t.begun && len(t.batches[t.next].QueuedQueries) == 1 {
		t.reset() // only BEGIN: nothing ran
		return nil
	}
	if _, err := t.Exec(ctx, "COMMIT"); err != nil {
		return err // still begun: the rollback that follows ends it
	}
	if err := t.finish(); err != nil {
		return err
	}
	t.reset()
	return nil
}

// Rollback discards what is still queued or unread and rolls back what the
// server has seen (nothing, when even BEGIN is still queued).
func (t *clientTx) Rollback(ctx context.Context) error {
	begun := t.begun
	t.reset()
	if !begun {
		return nil
	}
	_, err := t.conn.Exec(ctx, "ROLLBACK")
	return err
}

// batchRow is the single-row result of a read of a batch; Scan translates
// pgx.ErrNoRows to tpcc.ErrNoRows.
type batchRow struct {
	r   pgx.Row
	err error
}

func (r *batchRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	err := r.r.Scan(dest...)
	r.r = nil
	if errors.Is(err, pgx.ErrNoRows) {
		return tpcc.ErrNoRows
	}
	return err
}

// batchRows is the multi-row result of a read of a batch.
type batchRows struct{ pgx.Rows }

func (r *batchRows) Close() { r.Rows.Close() }
