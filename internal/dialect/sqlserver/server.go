package sqlserver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
)

// server is what Open found the server to offer. SQL Server has every
// view and command the dialect uses, its dynamic management views only
// for a login with VIEW SERVER STATE; Babelfish for PostgreSQL has none of
// them. Each is probed, not assumed from the product's name, so that a
// server without one is found out before a figure depends on it.
type server struct {
	// babelfish: SERVERPROPERTY('babelfish') is set. Babelfish accepts
	// CHECKPOINT and UPDATE STATISTICS's absence differently from SQL
	// Server (statistics.go), and its unmapped errors have one number.
	babelfish bool
	// viewServerState: HAS_PERMS_BY_NAME says the login may read the
	// server-wide views; without it SQL Server shows a login only its own
	// requests, which would read as a server where nobody waits.
	viewServerState bool

	// The views and commands, each present (true) or not.
	perfCounters bool // sys.dm_os_performance_counters: TPM (counters.go)
	sysInfo      bool // sys.dm_os_sys_info: the server's start time (counters.go)
	waitStats    bool // sys.dm_os_wait_stats: cumulative waits (waits.go)
	requests     bool // sys.dm_exec_requests: what each session waits on now (waits.go)
	fileStats    bool // sys.dm_io_virtual_file_stats: file latency (waits.go)
	alterIndex   bool // ALTER INDEX ... REBUILD (rebuild.go)
	backup       bool // BACKUP DATABASE and RESTORE DATABASE (backup.go)

	absent []dialect.Absence
}

// counters: TPM from the server's counter, and its start time to tell a
// restart inside a window.
func (s server) counters() bool { return s.perfCounters && s.sysInfo }

// waits: every session's wait now and the cumulative waits.
func (s server) waits() bool { return s.waitStats && s.requests && s.viewServerState }

// engine: the engine's own maintenance statements, ALTER INDEX ...
// REBUILD and BACKUP DATABASE, are understood; CHECKPOINT, which Babelfish
// accepts and ignores, is then taken to be honoured.
func (s server) engine() bool { return s.alterIndex && s.backup && !s.babelfish }

// A probe is one view or command and what oltplab does without it.
type probe struct {
	what    string
	query   string
	has     func(*server) *bool
	instead string
	// command: the query is a statement on an object that does not exist,
	// which a server that knows the statement refuses for that reason
	// (understood) and one that does not refuses as unsupported.
	command bool
}

// probes are run in order by DB.probe.
var probes = []probe{
	{what: "sys.dm_os_performance_counters", query: "SELECT TOP (0) cntr_value FROM sys.dm_os_performance_counters",
		has: func(s *server) *bool { return &s.perfCounters }, instead: "TPM is the driver's own commit count"},
	{what: "sys.dm_os_sys_info", query: "SELECT TOP (0) sqlserver_start_time FROM sys.dm_os_sys_info",
		has: func(s *server) *bool { return &s.sysInfo }, instead: "a server restart inside a window is not seen; TPM is the driver's own commit count"},
	{what: "sys.dm_os_wait_stats", query: "SELECT TOP (0) wait_time_ms FROM sys.dm_os_wait_stats",
		has: func(s *server) *bool { return &s.waitStats }, instead: "no wait classes"},
	{what: "sys.dm_exec_requests", query: "SELECT TOP (0) wait_type FROM sys.dm_exec_requests",
		has: func(s *server) *bool { return &s.requests }, instead: "no wait classes"},
	{what: "sys.dm_io_virtual_file_stats", query: "SELECT TOP (0) io_stall_read_ms FROM sys.dm_io_virtual_file_stats(DB_ID(), NULL)",
		has: func(s *server) *bool { return &s.fileStats }, instead: "no data and log file latency"},
	{what: "ALTER INDEX ... REBUILD", query: "ALTER INDEX ALL ON oltplab_probe_no_such_table REBUILD", command: true,
		has: func(s *server) *bool { return &s.alterIndex }, instead: "oltplab rebuild cannot run here"},
	{what: "BACKUP DATABASE", query: "BACKUP DATABASE oltplab_probe_no_such_database TO DISK = N'oltplab-probe.bak' WITH COPY_ONLY", command: true,
		has: func(s *server) *bool { return &s.backup }, instead: "oltplab backup cannot run here"},
}

// unsupported are the errors with which a server refuses a statement it
// does not know: Babelfish's unmapped error, SQL Server's syntax errors.
var unsupported = map[int32]bool{errnoUnmapped: true, 102: true, 156: true, 343: true}

// probe fills d.srv. Every query runs on one connection, discarded
// afterwards; none leaves anything behind.
func (d *DB) probe(ctx context.Context) error {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() {
		_ = discard(c)
		_ = c.Close()
	}()
	s := server{}
	var bbf, perm sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT CAST(SERVERPROPERTY('babelfish') AS INT), HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE')").Scan(&bbf, &perm); err != nil {
		return fmt.Errorf("read SERVERPROPERTY and HAS_PERMS_BY_NAME: %w", err)
	}
	s.babelfish = bbf.Valid && bbf.Int64 == 1
	s.viewServerState = perm.Valid && perm.Int64 == 1
	suffix := randomSuffix()
	for _, p := range probes {
		_, err := c.ExecContext(ctx, strings.ReplaceAll(p.query, "no_such", "no_such_"+suffix))
		ok := err == nil
		if p.command && err != nil {
			// Refused for the missing object: the statement is understood.
			n := serverErrno(err)
			ok = n != 0 && !unsupported[n]
		}
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && classify(err) == dialect.ClassConnection {
			return err
		}
		*p.has(&s) = ok
		if !ok {
			s.absent = append(s.absent, dialect.Absence{What: p.what, Instead: p.instead})
		}
	}
	if !s.viewServerState && s.waitStats && s.requests {
		s.absent = append(s.absent, dialect.Absence{What: "VIEW SERVER STATE permission",
			Instead: "no wait classes: sys.dm_exec_requests would show this login's own requests only"})
	}
	if !s.engine() {
		what := "CHECKPOINT (taken as honoured only where ALTER INDEX and BACKUP DATABASE are)"
		if s.babelfish {
			what = "CHECKPOINT (Babelfish accepts it and does nothing)"
		}
		s.absent = append(s.absent, dialect.Absence{What: what, Instead: "run --checkpoint-before cannot run here"})
	}
	d.srv = s
	return nil
}

// randomSuffix makes the probes' object names ones nobody created.
func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
