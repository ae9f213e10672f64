package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// conn adapts one *sql.Conn to tpcc.Querier and dialect.Conn. SQL text uses
// '?' placeholders, MySQL's own.
type conn struct {
	c *sql.Conn
}

func (q *conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.c.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q *conn) QueryRow(ctx context.Context, query string, args ...any) tpcc.RowScanner {
	return row{q.c.QueryRowContext(ctx, query, args...)}
}

func (q *conn) Query(ctx context.Context, query string, args ...any) (tpcc.Rows, error) {
	r, err := q.c.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

func (q *conn) Close() error { return q.c.Close() }

// row translates sql.ErrNoRows to tpcc.ErrNoRows.
type row struct{ r *sql.Row }

func (r row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return tpcc.ErrNoRows
	}
	return err
}

// rows adapts *sql.Rows to tpcc.Rows (Close without an error result: the
// error, if any, is reported by Err).
type rows struct{ r *sql.Rows }

func (r rows) Next() bool             { return r.r.Next() }
func (r rows) Scan(dest ...any) error { return r.r.Scan(dest...) }
func (r rows) Err() error             { return r.r.Err() }
func (r rows) Close()                 { _ = r.r.Close() }

// discard closes c's connection instead of returning it to the pool.
// Sessions and loaders change session state (autocommit, unique_checks,
// ...) that must not leak into connections the pool hands out later.
func discard(c *sql.Conn) error {
	err := c.Raw(func(any) error { return driver.ErrBadConn })
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return nil
	}
	return err
}
