package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
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
