// Package sqlserver is oltplab's Microsoft SQL Server dialect, over TDS
// with github.com/microsoft/go-mssqldb through database/sql: targets
// sqlserver://USER@HOST:PORT?database=DB (open.go), the schema (schema.go),
// bulk copy (load.go), the five transactions as T-SQL procedures
// (procedures.sql, session.go) or client-side SQL in batches (clientsql.go),
// the error classifier by server error number (classify.go), and the
// server's own figures, rebuilds, backups and scratch databases where the
// server offers them. What a server offers is probed when a target is
// opened (server.go), and the Database Open returns implements the optional
// dialect interfaces of what was found and no others (abilities.go), each
// one missing reported as one labelled line (dialect.AbsenceReporter).
//
// It imports dialect, placeholder, rawconn and tpcc: never another dialect
// package, driver, load, store or cli.
package sqlserver

// The server's own figures: TPM from sys.dm_os_performance_counters and the
// start time from sys.dm_os_sys_info (counters.go), wait classes from
// sys.dm_exec_requests and sys.dm_os_wait_stats and file latency from
// sys.dm_io_virtual_file_stats (waits.go), index rebuilds with ALTER INDEX
// ... REBUILD (rebuild.go), backups with BACKUP DATABASE ... WITH
// COPY_ONLY and their restore (backup.go), scratch databases of its own,
// marked and dropped only with the mark, for `oltplab selftest`
// (scratch.go), and the CPU calibration loop in T-SQL (calibrate.go). A
// figure the server lacks falls back (the driver's own counts for TPM, no
// wait classes), never a wrong one. Babelfish for PostgreSQL, which speaks
// TDS and much of T-SQL, lacks those views, ALTER INDEX and BACKUP;
// oltplab's tests run on it.
//
// Everything is written for SQL Server's locking and for MVCC with lock
// hints ignored (Babelfish accepts UPDLOCK and HOLDLOCK and ignores them):
// a row that a transaction reads and then changes is locked by updating it
// first, never by a hint. The T-SQL avoids what SQL Server 2008 lacks
// (THROW, OFFSET/FETCH, CONCAT, IIF, DROP ... IF EXISTS), what Babelfish
// cannot run (variable assignment inside UPDATE ... SET, UPDATE ... OUTPUT
// into variables, MERGE, TOP n PERCENT) and DECIMAL in bulk copy
// (Babelfish misreads it): money is MONEY, rates SMALLMONEY, both exact.
// Plain connections rewrite '?' to @p1, @p2, ... (conn.go, rewrite.go);
// consistent snapshots serve the consistency checks (snapshot.go).
