package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// txCountSource labels TPM in results.
const txCountSource = "sys.dm_os_performance_counters Transactions/sec (this database)"

// txCountSQL reads the database's "Transactions/sec" counter: despite its
// name a cumulative count (PERF_COUNTER_BULK_COUNT) of the transactions
// started in this database, one per procedure call (each runs one
// explicit transaction) and one per client-side transaction. Named
// instances call the object MSSQL$NAME:Databases; the view's names are
// NCHAR, padded with blanks, which LIKE does not ignore.
const txCountSQL = `SELECT cntr_value FROM sys.dm_os_performance_counters
WHERE counter_name = 'Transactions/sec' AND object_name LIKE '%:Databases%' AND instance_name = DB_NAME()`

var errNoCounter = errors.New("sys.dm_os_performance_counters has no Transactions/sec row for this database")

// txCount is the counter's value (dialect.TxCounter, through countersPart:
// only where the view is readable).
func (d *DB) txCount(ctx context.Context) (int64, error) {
	var n int64
	err := d.db.QueryRowContext(ctx, txCountSQL).Scan(&n)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			err = errNoCounter
		}
		return 0, d.wrap("read Transactions/sec", err)
	}
	return n, nil
}

// serverStartTime is sys.dm_os_sys_info's sqlserver_start_time, in UTC:
// the view gives the server's local time, moved by the server's own UTC
// offset (dialect.ServerStartReader, through countersPart).
func (d *DB) serverStartTime(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := d.db.QueryRowContext(ctx,
		"SELECT DATEADD(MINUTE, -DATEPART(TZOFFSET, SYSDATETIMEOFFSET()), sqlserver_start_time) FROM sys.dm_os_sys_info").Scan(&t)
	if err != nil {
		return time.Time{}, d.wrap("read sqlserver_start_time", err)
	}
	return t.UTC().Truncate(time.Second), nil
}
