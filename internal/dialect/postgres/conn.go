package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/placeholder"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Connect opens a plain connection in autocommit.
func (d *Database) Connect(ctx context.Context) (dialect.Conn, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	pc := &plainConn{conn: c}
	pc.q, pc.sqls = c, make(map[string]string)
	return pc, nil
}

// snapshotOptions give one consistent read-only snapshot.
var snapshotOptions = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// Snapshot runs fn inside one REPEATABLE READ READ ONLY transaction, which
// sees one snapshot of the whole database (TPC-C 3.3.2 checks).
func (d *Database) Snapshot(ctx context.Context, fn func(q tpcc.Querier) error) error {
	c, err := d.connect(ctx)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	tx, err := c.BeginTx(ctx, snapshotOptions)
	if err != nil {
		return fmt.Errorf("begin snapshot: %w", err)
	}
	q := &querier{q: tx, sqls: make(map[string]string)}
	if err := fn(q); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("end snapshot: %w", err)
	}
	return nil
}

// plainConn is a tpcc.Querier in autocommit on its own connection
// (dialect.Conn).
type plainConn struct {
	conn *pgx.Conn
	querier
}

func (c *plainConn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return c.conn.Close(ctx)
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
