package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"

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

// newClientSQLSession runs the transactions from the client over w
// (dialect.StyleClientSQL), each in a READ COMMITTED transaction, the
// PostgreSQL default that HammerDB also uses.
func newClientSQLSession(w *wireConn) *clientSQLSession {
	return &clientSQLSession{
		ClientSession: tpcc.NewClientSession(newClientTx(w), clientSQLStatements, w.close),
		w:             w,
	}
}

// clientSQLSession is a client-side session that, like procSession, is a
// dialect.Interrupter: the run driver then passes its calls a context that
// is never canceled, which spares watching one on every batch.
type clientSQLSession struct {
	*tpcc.ClientSession
	w *wireConn
}

var (
	_ dialect.Session     = (*clientSQLSession)(nil)
	_ dialect.Interrupter = (*clientSQLSession)(nil)
)

// Interrupt expires the connection's deadline, as procSession.Interrupt
// does: the batch in flight fails at once, and so does any later one.
func (s *clientSQLSession) Interrupt() { s.w.interrupt() }

// clientTx is the tpcc.Beginner, tpcc.Tx, tpcc.Deferrer and
// tpcc.Prefetcher of a client-side session: one transaction at a time on
// one connection, pipelined. BEGIN, the deferred statements and the
// prefetched reads wait in the batch being built and go to the server
// with the next statement whose result is needed, or with COMMIT, in one
// round trip (one Sync): a New-Order takes 2 round trips, a Payment 2 (3
// by last name). The results of the batch in flight are read in order; the
// next batch is sent only once they are all read. Statements are prepared
// on the connection the first time they are used (wireConn).
type clientTx struct {
	w *wireConn
	// stmts are the statements prepared or being prepared, by text.
	stmts map[string]*wireStmt
	// flight are the statements of the batch in flight, pos the next one
	// whose result is unread; queued those of the batch being built.
	flight, queued []clientStmt
	pos            int
	// begun: BEGIN has been sent, so ending the transaction needs a
	// round trip; false while BEGIN still waits in the batch being built.
	begun bool
	row   clientRow
	rows  clientRows
}

// clientStmt is a statement of a batch: its text, and whether its result
// is read by the transaction (a read) or only checked (deferred).
type clientStmt struct {
	sql  string
	read bool
}

func newClientTx(w *wireConn) *clientTx {
	t := &clientTx{w: w, stmts: make(map[string]*wireStmt)}
	t.row.w, t.rows.w = w, w
	return t
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

// reset reads what is left of the batch in flight and drops what is
// queued.
func (t *clientTx) reset() {
	_ = t.finish()
	t.w.discard()
	t.queued = t.queued[:0]
	t.begun = false
}

func (t *clientTx) queue(sql string, args []any, read bool) {
	s, ok := t.stmts[sql]
	if !ok {
		s = &wireStmt{name: "oltplab_" + strconv.Itoa(len(t.stmts)+1), sql: sql}
		t.stmts[sql] = s
	}
	t.w.bind(s)
	for _, a := range args {
		t.w.paramAny(a)
	}
	t.w.execute()
	t.queued = append(t.queued, clientStmt{sql: sql, read: read})
}

// Defer implements tpcc.Deferrer.
func (t *clientTx) Defer(sql string, args ...any) { t.queue(sql, args, false) }

// Prefetch implements tpcc.Prefetcher.
func (t *clientTx) Prefetch(sql string, args ...any) { t.queue(sql, args, true) }

// unread reports whether the batch in flight has a read not yet read.
func (t *clientTx) unread() bool {
	return slices.ContainsFunc(t.flight[t.pos:], func(s clientStmt) bool { return s.read })
}

// finish reads the rest of the batch in flight, if any: the server's
// error for the batch is returned.
func (t *clientTx) finish() error {
	t.flight, t.pos = t.flight[:0], 0
	if !t.w.inFlight {
		return nil
	}
	return t.w.finish()
}

// result moves to sql's result: a prefetched read's, or, when no
// prefetched read is waiting, sql's own, queued after what waits and sent
// with it. The server's error for a deferred statement before it is
// returned.
func (t *clientTx) result(ctx context.Context, sql string, args []any) error {
	if !t.unread() {
		if !slices.ContainsFunc(t.queued, func(s clientStmt) bool { return s.read }) {
			t.queue(sql, args, true)
		}
		if err := t.finish(); err != nil {
			return err
		}
		if err := t.w.send(ctx); err != nil {
			t.queued = t.queued[:0]
			return err
		}
		t.flight, t.queued = t.queued, t.flight[:0]
		t.begun = true
	}
	for ; !t.flight[t.pos].read; t.pos++ {
		if err := t.w.result(); err != nil {
			return err
		}
	}
	if got := t.flight[t.pos].sql; got != sql {
		t.finish()
		return fmt.Errorf("prefetched %q read as %q: reads must follow the order of their Prefetch", got, sql)
	}
	t.pos++
	return t.w.result()
}

func (t *clientTx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if err := t.result(ctx, sql, args); err != nil {
		return 0, err
	}
	if err := t.w.skipRows(); err != nil {
		return 0, err
	}
	return t.w.affected, nil
}

func (t *clientTx) QueryRow(ctx context.Context, sql string, args ...any) tpcc.RowScanner {
	t.row.err = t.result(ctx, sql, args)
	return &t.row
}

func (t *clientTx) Query(ctx context.Context, sql string, args ...any) (tpcc.Rows, error) {
	if err := t.result(ctx, sql, args); err != nil {
		return nil, err
	}
	t.rows.err = nil
	return &t.rows, nil
}

// Commit sends what is still queued and COMMIT in one round trip.
func (t *clientTx) Commit(ctx context.Context) error {
	if !t.begun && len(t.queued) == 1 {
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

// Rollback drops what is still queued or unread and rolls back what the
// server has seen (nothing, when even BEGIN is still queued).
func (t *clientTx) Rollback(ctx context.Context) error {
	begun := t.begun
	t.reset()
	if !begun {
		return nil
	}
	t.queue("ROLLBACK", nil, false)
	t.queued = t.queued[:0] // sent and read here, not through result
	if err := t.w.send(ctx); err != nil {
		return err
	}
	return t.w.finish()
}

// clientRow is the single-row result of a read; Scan reads its first row
// (tpcc.ErrNoRows when there is none).
type clientRow struct {
	w   *wireConn
	err error
}

func (r *clientRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	more, err := r.w.next()
	switch {
	case err != nil:
		return err
	case !more:
		return tpcc.ErrNoRows
	}
	return r.w.scan(dest...)
}

// clientRows is the multi-row result of a read.
type clientRows struct {
	w   *wireConn
	err error
}

func (r *clientRows) Next() bool {
	if r.err != nil {
		return false
	}
	more, err := r.w.next()
	r.err = err
	return more
}

func (r *clientRows) Scan(dest ...any) error {
	if err := r.w.scan(dest...); err != nil {
		r.err = err
		return err
	}
	return nil
}

func (r *clientRows) Err() error { return r.err }

// Close reads the rows not read.
func (r *clientRows) Close() {
	if err := r.w.skipRows(); err != nil && r.err == nil {
		r.err = err
	}
}
