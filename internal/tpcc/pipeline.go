package tpcc

import (
	"context"
	"fmt"
	"slices"
)

// PipelineConn is what a Pipeline needs of one connection: a batch of
// statements built, sent in one round trip, and its results read in
// order. A dialect implements it over its own protocol; the Pipeline keeps
// the transaction's bookkeeping, which is the same for every protocol. A
// PipelineConn is owned by the goroutine that owns its Pipeline.
type PipelineConn interface {
	// Queue appends sql with its arguments to the batch being built; use
	// says what the transaction reads of its result. An argument the
	// connection cannot send is returned here (the statement is left
	// out), and the Pipeline then sends nothing of the batch.
	Queue(sql string, args []any, use ResultUse) error
	// Discard drops the batch being built.
	Discard()
	// Send sends the batch being built, whose statements then make the
	// batch in flight; the batch in flight before it has been finished.
	// The batch being built is empty afterwards, sent or not.
	Send(ctx context.Context) error
	// Result moves to the result of the batch in flight's next statement,
	// a read's (read) or a deferred statement's, which is only checked
	// (a connection that finds a deferred statement's error elsewhere
	// may skip it). The error of a statement the server ran before it,
	// or its own, is returned.
	Result(read bool) error
	// Finish reads the rest of the batch in flight, if any, and returns
	// the error of a statement the transaction has not read yet.
	Finish() error
	// Affected is the row count of the current result, read to its end.
	Affected() (int64, error)
	// NextRow moves to the current result's next row: false at its end.
	NextRow() (bool, error)
	// Scan decodes the current row into dest (Querier's destinations).
	Scan(dest ...any) error
}

// ResultUse is what a transaction reads of a queued statement's result.
type ResultUse uint8

const (
	// ResultChecked: nothing; the statement must only succeed (Defer).
	ResultChecked ResultUse = iota
	// ResultRead: its rows, or its row count (Prefetch, QueryRow, Query).
	ResultRead
	// ResultCount: its row count only, and no other result of its batch
	// is read (Exec of a statement not prefetched, COMMIT, ROLLBACK): a
	// connection may send such a batch as one that returns no rows.
	ResultCount
)

// Pipeline is the Beginner, Tx, Deferrer and Prefetcher of a client-side
// session over one PipelineConn: one transaction at a time, pipelined.
// The statement that opens a transaction (if the dialect needs one), the
// deferred statements and the prefetched reads wait in the batch being
// built and go to the server with the next statement whose result is
// needed, or with COMMIT, in one round trip: a New-Order takes 2 round
// trips, a Payment 2 (3 by last name). The results of the batch in flight
// are read in order; the next batch is sent only once they are all read.
//
// A Pipeline is owned by one goroutine.
type Pipeline struct {
	conn PipelineConn
	// begin opens a transaction ("" when its first statement does);
	// opening is how many statements Begin queues (0 or 1).
	begin   string
	opening int
	// flight are the statements of the batch in flight, pos the next one
	// whose result is unread; queued those of the batch being built.
	flight, queued []pipelined
	pos            int
	// badArg is the first argument of the batch being built that conn
	// could not send: the batch is then not sent.
	badArg error
	// begun: the server may have seen a statement of the transaction, so
	// ending it needs a round trip.
	begun bool
	row   pipelineRow
	rows  pipelineRows
}

// pipelined is a statement of a batch: its text, and whether its result
// is read by the transaction (a read) or only checked (deferred).
type pipelined struct {
	sql  string
	read bool
}

var (
	_ Beginner   = (*Pipeline)(nil)
	_ Tx         = (*Pipeline)(nil)
	_ Deferrer   = (*Pipeline)(nil)
	_ Prefetcher = (*Pipeline)(nil)
)

// NewPipeline returns the pipelined transactions of conn. begin is the
// statement that opens a transaction, queued by Begin to go with the
// transaction's first statement, or "" when the connection opens one
// with its first statement (autocommit off).
func NewPipeline(conn PipelineConn, begin string) *Pipeline {
	p := &Pipeline{conn: conn, begin: begin}
	if begin != "" {
		p.opening = 1
	}
	p.row.conn, p.rows.conn = conn, conn
	return p
}

// Begin queues the statement that opens a transaction, if any.
func (p *Pipeline) Begin(ctx context.Context) (Tx, error) {
	p.reset()
	if p.begin != "" {
		p.queue(p.begin, nil, ResultChecked)
	}
	return p, nil
}

// reset reads what is left of the batch in flight and drops what is
// queued.
func (p *Pipeline) reset() {
	_ = p.finish()
	p.conn.Discard()
	p.queued = p.queued[:0]
	p.badArg = nil
	p.begun = false
}

func (p *Pipeline) queue(sql string, args []any, use ResultUse) {
	if err := p.conn.Queue(sql, args, use); err != nil && p.badArg == nil {
		p.badArg = err
	}
	p.queued = append(p.queued, pipelined{sql: sql, read: use != ResultChecked})
}

// Defer implements Deferrer.
func (p *Pipeline) Defer(sql string, args ...any) { p.queue(sql, args, ResultChecked) }

// Prefetch implements Prefetcher.
func (p *Pipeline) Prefetch(sql string, args ...any) { p.queue(sql, args, ResultRead) }

func hasRead(stmts []pipelined) bool {
	return slices.ContainsFunc(stmts, func(s pipelined) bool { return s.read })
}

// finish reads the rest of the batch in flight, if any: the error of a
// statement not read yet is returned.
func (p *Pipeline) finish() error {
	p.flight, p.pos = p.flight[:0], 0
	return p.conn.Finish()
}

// send sends the batch being built, unless one of its arguments could not
// be written.
func (p *Pipeline) send(ctx context.Context) error {
	if err := p.badArg; err != nil {
		p.conn.Discard()
		p.queued, p.badArg = p.queued[:0], nil
		return err
	}
	p.begun = true
	if err := p.conn.Send(ctx); err != nil {
		p.queued = p.queued[:0]
		return err
	}
	p.flight, p.queued = p.queued, p.flight[:0]
	return nil
}

// result moves to sql's result: a prefetched read's, or, when no
// prefetched read is waiting, sql's own, queued after what waits and sent
// with it (count: only its row count is read). The error of a deferred
// statement before it is returned.
func (p *Pipeline) result(ctx context.Context, sql string, args []any, count bool) error {
	if !hasRead(p.flight[p.pos:]) {
		if !hasRead(p.queued) {
			use := ResultRead
			if count {
				use = ResultCount
			}
			p.queue(sql, args, use)
		}
		if err := p.finish(); err != nil {
			return err
		}
		if err := p.send(ctx); err != nil {
			return err
		}
	}
	for ; !p.flight[p.pos].read; p.pos++ {
		if err := p.conn.Result(false); err != nil {
			_ = p.finish()
			return err
		}
	}
	if got := p.flight[p.pos].sql; got != sql {
		_ = p.finish()
		return fmt.Errorf("prefetched %q read as %q: reads must follow the order of their Prefetch", got, sql)
	}
	p.pos++
	if err := p.conn.Result(true); err != nil {
		_ = p.finish()
		return err
	}
	return nil
}

func (p *Pipeline) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if err := p.result(ctx, sql, args, true); err != nil {
		return 0, err
	}
	return p.conn.Affected()
}

func (p *Pipeline) QueryRow(ctx context.Context, sql string, args ...any) RowScanner {
	p.row.err = p.result(ctx, sql, args, false)
	return &p.row
}

func (p *Pipeline) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	if err := p.result(ctx, sql, args, false); err != nil {
		return nil, err
	}
	p.rows.err = nil
	return &p.rows, nil
}

// Commit sends what is still queued and COMMIT in one round trip.
func (p *Pipeline) Commit(ctx context.Context) error {
	if !p.begun && len(p.queued) == p.opening {
		p.reset() // nothing ran
		return nil
	}
	if _, err := p.Exec(ctx, "COMMIT"); err != nil {
		return err // still begun: the rollback that follows ends it
	}
	if err := p.finish(); err != nil {
		return err
	}
	p.reset()
	return nil
}

// Rollback drops what is still queued or unread and rolls back what the
// server may have seen of the transaction (nothing, when all of it is
// still queued). It also follows an error after which the server rolled
// back only the failed statement (MySQL's lock wait timeout), so that the
// transaction's retry starts clean.
func (p *Pipeline) Rollback(ctx context.Context) error {
	begun := p.begun
	p.reset()
	if !begun {
		return nil
	}
	if err := p.conn.Queue("ROLLBACK", nil, ResultCount); err != nil {
		return err
	}
	if err := p.conn.Send(ctx); err != nil {
		return err
	}
	return p.conn.Finish()
}

// pipelineRow is the single-row result of a read; Scan reads its first
// row (ErrNoRows when there is none).
type pipelineRow struct {
	conn PipelineConn
	err  error
}

func (r *pipelineRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	more, err := r.conn.NextRow()
	switch {
	case err != nil:
		return err
	case !more:
		return ErrNoRows
	}
	return r.conn.Scan(dest...)
}

// pipelineRows is the multi-row result of a read.
type pipelineRows struct {
	conn PipelineConn
	err  error
}

func (r *pipelineRows) Next() bool {
	if r.err != nil {
		return false
	}
	more, err := r.conn.NextRow()
	r.err = err
	return more
}

func (r *pipelineRows) Scan(dest ...any) error {
	if err := r.conn.Scan(dest...); err != nil {
		r.err = err
		return err
	}
	return nil
}

func (r *pipelineRows) Err() error { return r.err }

// Close leaves the rows not read to the next result or to the end of the
// batch, which skip them.
func (r *pipelineRows) Close() {}
