// Package sqlserver is oltplab's Microsoft SQL Server dialect, over TDS
// with github.com/microsoft/go-mssqldb through database/sql: targets
// sqlserver://USER@HOST:PORT?database=DB (open.go), the tables with
// clustered primary keys and the secondary indexes of SQL Server studies
// (schema.go), bulk load through TDS bulk copy (load.go), the five
// transactions as T-SQL stored procedures (procedures.sql, session.go) or
// as client-side SQL sent in batches, two round trips for a New-Order
// (clientsql.go), plain connections with '?' rewritten
// to @p1, @p2, ... (conn.go, rewrite.go), consistent snapshots for the
// consistency checks (snapshot.go), the error classifier by server error
// number (classify.go), version and settings (settings.go), the CPU
// calibration loop in T-SQL (calibrate.go), and the server's own figures
// where it offers them: TPM from sys.dm_os_performance_counters and the
// start time from sys.dm_os_sys_info (counters.go), wait classes from
// sys.dm_exec_requests and sys.dm_os_wait_stats and file latency from
// sys.dm_io_virtual_file_stats (waits.go), index rebuilds with ALTER INDEX
// ... REBUILD (rebuild.go), backups with BACKUP DATABASE ... WITH
// COPY_ONLY and their restore (backup.go), and scratch databases of its
// own, marked and dropped only with the mark, for `oltplab selftest`
// (scratch.go).
//
// What a server offers is found when a target is opened (server.go): the
// views and commands above are probed, and the Database that Open returns
// implements the optional dialect interfaces of what was found and no
// others (abilities.go). Each one missing is reported as one labelled line
// (dialect.AbsenceReporter) and its figures fall back (the driver's own
// counts for TPM, no wait classes), never a wrong figure. Babelfish for
// PostgreSQL, which speaks TDS and much of T-SQL, lacks those views,
// ALTER INDEX and BACKUP; oltplab's tests run on it.
//
// Everything is written for SQL Server's locking and for MVCC with lock
// hints ignored (Babelfish accepts UPDLOCK and HOLDLOCK and ignores them):
// a row that a transaction reads and then changes is locked by updating it
// first, never by a hint. The T-SQL avoids what SQL Server 2008 lacks
// (THROW, OFFSET/FETCH, CONCAT, IIF, DROP ... IF EXISTS), what Babelfish
// cannot run (variable assignment inside UPDATE ... SET, UPDATE ... OUTPUT
// into variables, MERGE, TOP n PERCENT) and DECIMAL in bulk copy
// (Babelfish misreads it): money is MONEY, rates SMALLMONEY, both exact.
//
// It registers the "sqlserver" scheme. It must not import another dialect
// package, internal/driver, internal/load, internal/store or internal/cli.
package sqlserver
