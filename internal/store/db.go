package store

import (
	"context"
	"database/sql"
)

// db is the store's connection pool with its backend's placeholders: every
// statement in this package is written with '?' and rebound here, once,
// rather than in each query.
type db struct {
	pool *sql.DB
	b    backend
}

func (d *db) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return d.pool.ExecContext(ctx, d.b.rebind(q), args...)
}

func (d *db) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return d.pool.QueryContext(ctx, d.b.rebind(q), args...)
}

func (d *db) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return d.pool.QueryRowContext(ctx, d.b.rebind(q), args...)
}

func (d *db) BeginTx(ctx context.Context, opts *sql.TxOptions) (*dbTx, error) {
	t, err := d.pool.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &dbTx{Tx: t, b: d.b}, nil
}

// Conn pins one connection of the pool (for settings that hold per
// connection, and for the migration).
func (d *db) Conn(ctx context.Context) (*dbConn, error) {
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &dbConn{Conn: c, b: d.b}, nil
}

func (d *db) Close() error { return d.pool.Close() }

// tx is a transaction with its backend's placeholders.
type dbTx struct {
	*sql.Tx
	b backend
}

func (t *dbTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.b.rebind(q), args...)
}

func (t *dbTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, t.b.rebind(q), args...)
}

func (t *dbTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.b.rebind(q), args...)
}

func (t *dbTx) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return t.Tx.PrepareContext(ctx, t.b.rebind(q))
}

// conn is one pinned connection with its backend's placeholders.
type dbConn struct {
	*sql.Conn
	b backend
}

func (c *dbConn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return c.Conn.ExecContext(ctx, c.b.rebind(q), args...)
}

func (c *dbConn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.Conn.QueryContext(ctx, c.b.rebind(q), args...)
}

func (c *dbConn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return c.Conn.QueryRowContext(ctx, c.b.rebind(q), args...)
}

func (c *dbConn) BeginTx(ctx context.Context, opts *sql.TxOptions) (*dbTx, error) {
	t, err := c.Conn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &dbTx{Tx: t, b: c.b}, nil
}
