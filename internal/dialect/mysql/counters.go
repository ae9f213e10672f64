package mysql

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

var errMissingCounters = errors.New("server reported no Com_commit or Com_rollback")

// txCountSQL reads the server's commit and rollback statement counters:
// every COMMIT and ROLLBACK, including those inside the stored procedures.
// They are server-wide (HammerDB computes MySQL TPM from the same two).
const txCountSQL = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')"

// TxCount returns Com_commit + Com_rollback.
func (d *DB) TxCount(ctx context.Context) (int64, error) {
	rows, err := d.db.QueryContext(ctx, txCountSQL)
	if err != nil {
		return 0, d.wrap("read Com_commit and Com_rollback", err)
	}
	defer rows.Close()
	var total int64
	n := 0
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return 0, d.wrap("read Com_commit and Com_rollback", err)
		}
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return 0, d.wrap("read Com_commit and Com_rollback", err)
		}
		total += v
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, d.wrap("read Com_commit and Com_rollback", err)
	}
	if n != 2 {
		return 0, d.wrap("read Com_commit and Com_rollback", errMissingCounters)
	}
	return total, nil
}

// TxCountSource labels the counter in results.
func (d *DB) TxCountSource() string { return "Com_commit+Com_rollback (global)" }

// ServerStartTime is the server's clock less its Uptime status variable,
// to the second: it changes when the server restarts (Com_commit and
// Com_rollback then count from zero again).
func (d *DB) ServerStartTime(ctx context.Context) (time.Time, error) {
	var started int64
	err := d.db.QueryRowContext(ctx,
		"SELECT UNIX_TIMESTAMP() - CAST(VARIABLE_VALUE AS SIGNED) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'").Scan(&started)
	if err != nil {
		return time.Time{}, d.wrap("read the server's Uptime", err)
	}
	return time.Unix(started, 0), nil
}

var _ dialect.ServerStartReader = (*DB)(nil)
