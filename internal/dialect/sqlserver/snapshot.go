package sqlserver

import (
	"context"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// Snapshot runs fn in one read-only transaction that sees a single
// consistent state of the database (TPC-C 3.3.2 checks): SNAPSHOT
// isolation where the database allows it (ALLOW_SNAPSHOT_ISOLATION ON;
// Babelfish always), which reads row versions and blocks nobody, else
// SERIALIZABLE, which holds shared range locks until the end: consistent
// as well, but writers wait for the checks.
func (d *DB) Snapshot(ctx context.Context, fn func(q tpcc.Querier) error) error {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return d.wrap("connect for a snapshot", err)
	}
	defer c.Close()
	// The isolation level stays with the connection: it goes back to no
	// one else.
	defer func() { _ = discard(c) }()
	var state int64
	if err := c.QueryRowContext(ctx, "SELECT snapshot_isolation_state FROM sys.databases WHERE database_id = DB_ID()").Scan(&state); err != nil {
		return d.wrap("read snapshot_isolation_state", err)
	}
	level := "SNAPSHOT"
	if state != 1 { // 1: ON
		level = "SERIALIZABLE"
	}
	if _, err := c.ExecContext(ctx, "SET TRANSACTION ISOLATION LEVEL "+level); err != nil {
		return d.wrap("set "+level+" isolation", err)
	}
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return d.wrap("start snapshot", err)
	}
	if err := fn(&conn{c: c}); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, rerr := c.ExecContext(rctx, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION"); rerr != nil {
			return fmt.Errorf("%w (rollback also failed: %w)", err, rerr)
		}
		return err
	}
	if _, err := c.ExecContext(ctx, "COMMIT TRANSACTION"); err != nil {
		return d.wrap("end snapshot", err)
	}
	return nil
}
