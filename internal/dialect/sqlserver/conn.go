package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// querier is what conn and clientTx run statements on: an *sql.Conn or an
// *sql.Tx.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn adapts one *sql.Conn to tpcc.Querier and dialect.Conn: SQL text
// is oltplab's portable SQL, rewritten to T-SQL (tsql) on every call.
type conn struct {
	c *sql.Conn
}

// A context that has ended fails a call before it reaches the driver:
// go-mssqldb answers a done context by interrupting the server (TDS
// attention) and, when the context cannot wait for the server's
// confirmation either, gives the connection up; a call refused here
// leaves the connection usable.

func (q *conn) Exec(ctx context.Context, query string, a ...any) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n, err := execOn(ctx, q.c, tsql(query), a)
	return n, withContext(ctx, err)
}

func (q *conn) QueryRow(ctx context.Context, query string, a ...any) tpcc.RowScanner {
	if err := ctx.Err(); err != nil {
		return errRow{err}
	}
	return row{q.c.QueryRowContext(ctx, tsql(query), args(a)...), ctx}
}

func (q *conn) Query(ctx context.Context, query string, a ...any) (tpcc.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := queryOn(ctx, q.c, tsql(query), a)
	return r, withContext(ctx, err)
}

// withContext adds ctx's error to err when ctx ended during the call, so
// that the failure classifies as canceled rather than as the broken
// connection the driver reports.
func withContext(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w: %w", ctx.Err(), err)
}

// errRow is a RowScanner that fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (q *conn) Close() error { return q.c.Close() }

// execOn runs a T-SQL statement on q and returns the rows it affected.
func execOn(ctx context.Context, q querier, text string, a []any) (int64, error) {
	res, err := q.ExecContext(ctx, text, args(a)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// queryOn runs a T-SQL query on q.
func queryOn(ctx context.Context, q querier, text string, a []any) (tpcc.Rows, error) {
	r, err := q.QueryContext(ctx, text, args(a)...)
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

// row translates sql.ErrNoRows to tpcc.ErrNoRows.
type row struct {
	r   *sql.Row
	ctx context.Context
}

func (r row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return tpcc.ErrNoRows
	}
	return withContext(r.ctx, err)
}

// rows adapts *sql.Rows to tpcc.Rows.
type rows struct{ r *sql.Rows }

func (r rows) Next() bool             { return r.r.Next() }
func (r rows) Scan(dest ...any) error { return r.r.Scan(dest...) }
func (r rows) Err() error             { return r.r.Err() }
func (r rows) Close()                 { _ = r.r.Close() }

// discard closes c's connection instead of returning it to the pool: a
// connection whose session state was changed (isolation level, an open
// transaction after a failure) must not serve anyone else.
func discard(c *sql.Conn) error {
	err := c.Raw(func(any) error { return driver.ErrBadConn })
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return nil
	}
	return err
}
