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

// serverStartQuery reads when the server's statistics last started from
// zero: pg_postmaster_start_time() changes when the server restarts; when
// one backend crashes the postmaster survives (its start time unchanged)
// but ends every session, runs crash recovery and discards the statistics
// behind TxCount, and that shows (PostgreSQL 15) as a new stats_reset of
// the cluster-wide pg_stat_bgwriter. The later of the two is the start
// the counters count from.
const serverStartQuery = "SELECT GREATEST(pg_postmaster_start_time(), (SELECT stats_reset FROM pg_stat_bgwriter))"

// ServerStartTime is the later of pg_postmaster_start_time() and the last
// reset of the cluster's statistics (serverStartQuery): it changes when
// the server restarts, and when a crashed backend made the postmaster
// reset every session and discard the statistics behind TxCount.
func (d *Database) ServerStartTime(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, serverStartQuery).Scan(&t)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("read the server's start (pg_postmaster_start_time(), pg_stat_bgwriter.stats_reset): %w", err)
	}
	return t, nil
}

var _ dialect.ServerStartReader = (*Database)(nil)
