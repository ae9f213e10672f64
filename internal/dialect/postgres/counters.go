package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
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
