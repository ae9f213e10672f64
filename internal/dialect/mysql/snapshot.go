package mysql

import (
	"context"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// Snapshot runs fn in one read-only transaction that sees a single
// consistent snapshot (TPC-C 3.3.2 checks): REPEATABLE READ, started WITH
// CONSISTENT SNAPSHOT so the snapshot is taken at once, not at fn's first
// read.
func (d *DB) Snapshot(ctx context.Context, fn func(q tpcc.Querier) error) error {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return d.wrap("connect for a snapshot", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
		return d.wrap("set snapshot isolation", err)
	}
	if _, err := c.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
		return d.wrap("start snapshot", err)
	}
	if err := fn(&conn{c: c}); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, rerr := c.ExecContext(rctx, "ROLLBACK"); rerr != nil {
			return fmt.Errorf("%w (rollback also failed: %w)", err, rerr)
		}
		return err
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		return d.wrap("end snapshot", err)
	}
	return nil
}
