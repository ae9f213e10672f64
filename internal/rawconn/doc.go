// Package rawconn owns the raw-syscall socket wrapper that the dialects
// put around their session connections (Wrap): reads and writes on the
// non-blocking descriptor without telling the Go scheduler they enter a
// system call, which saves the driver CPU on every round trip
// (rawconn_linux.go says why). Elsewhere Wrap returns the conn unchanged.
// The dialects wrap every session connection unless dialect.Env.PlainSockets
// is set (OLTPLAB_RAWCONN=off), so that the saving can be measured again.
//
// It imports nothing of oltplab.
package rawconn

// make bench runs every workload both ways, and BenchmarkConformance/session
// of internal/dialect/postgres and internal/dialect/mysql measure
// raw-sockets against plain-sockets. Measured on the 2-core development VM
// (Debian 12, Go 1.26, PostgreSQL 15 and MariaDB 10.11 with the bench
// profile of scripts/testservers.sh, 2 warehouses), driver CPU per
// transaction (cpu-us/op), three runs each, while the machine was shared
// with other builds (load average 12 to 30):
//
// 	go test -run '^$' -bench 'BenchmarkConformance/session/.*-sockets/(procedures|client-sql)/mix' \
// 	    -benchtime 3000x -count 3 ./internal/dialect/postgres ./internal/dialect/mysql   (under scripts/testservers.sh, bench profile)
//
// 	                                    raw sockets    plain sockets
// 	PostgreSQL procedures, 1 session    150-173 us     212-236 us
// 	PostgreSQL procedures, 8 sessions   132-137 us     211-216 us
// 	PostgreSQL client SQL, 1 session    1913-2132 us   2748-2855 us
// 	PostgreSQL client SQL, 8 sessions   1548-1818 us   1854-1960 us
// 	MariaDB procedures, 1 session       267-285 us     248-278 us
// 	MariaDB procedures, 8 sessions      175-190 us     229-246 us
// 	MariaDB client SQL, 1 session       2387-2549 us   2320-2683 us
// 	MariaDB client SQL, 8 sessions     1406-1733 us   1402-1502 us
//
// Verdict: on PostgreSQL raw sockets save about a third of the driver's
// CPU per transaction, well outside the spread; on MariaDB they save about
// a quarter with 8 sessions of procedure calls and nothing measurable
// otherwise (the ranges overlap). The package stays; measure again on a
// quiet machine before relying on the MariaDB figures.
//
// A wrapped conn does not implement syscall.Conn. go-sql-driver/mysql
// checks a pooled connection's liveness through syscall.Conn before
// reusing it (CheckConnLiveness): on a wrapped conn it silently skips the
// check, which is harmless only because the MariaDB dialect never reuses
// a session's connection (internal/dialect/mysql, session.go). pgx does
// not look for syscall.Conn.
