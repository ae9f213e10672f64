package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
)

const txCountSource = "pg_stat_database xact_commit+xact_rollback"

// TxCount is the number of committed plus rolled-back transactions of the
// target database, from which TPM is computed. It discards the session's
// statistics snapshot first so repeated reads are fresh. PostgreSQL
// backends publish their counts at most once a second, so the figure lags
// by up to a second.
func (d *Database) TxCount(ctx context.Context) (int64, error) {
	var n int64
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			return err
		}
		return c.QueryRow(ctx,
			"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()").Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", txCountSource, err)
	}
	return n, nil
}

// TxCountSource labels the counter in results.
func (d *Database) TxCountSource() string { return txCountSource }

// ServerStartTime is pg_postmaster_start_time(): it changes when the
// server restarts, after a crash too (the statistics behind TxCount are
// then discarded).
func (d *Database) ServerStartTime(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT pg_postmaster_start_time()").Scan(&t)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("read pg_postmaster_start_time(): %w", err)
	}
	return t, nil
}

var _ dialect.ServerStartReader = (*Database)(nil)
