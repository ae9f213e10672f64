package sqlserver

import (
	"context"
	"database/sql"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
)

// What SQL Server tells about its sessions' waits (dialect.WaitSampler,
// through waitsPart: only where the views are readable and the login has
// VIEW SERVER STATE, without which sys.dm_exec_requests shows the login's
// own requests only):
//
//   - sys.dm_exec_sessions: every session of this database; one without a
//     request is idle, or idle inside a transaction (open_transaction_count,
//     the client's time).
//   - sys.dm_exec_requests: a running or runnable request is on CPU (or
//     queued for it), a suspended one waits on wait_type.
//   - sys.dm_os_wait_stats: every wait since the server started, by type
//     (server-wide), summed per class as counters.
//   - sys.dm_io_virtual_file_stats: this database's data and log files'
//     I/O counts and stall times, for their average latency.
//
// sys.dm_exec_sessions has database_id and open_transaction_count since
// SQL Server 2012.

// waitsSQL lists this database's other user sessions with their request,
// if any.
const waitsSQL = `SELECT s.session_id, COALESCE(r.status, ''), COALESCE(r.wait_type, ''), s.open_transaction_count
FROM sys.dm_exec_sessions s LEFT JOIN sys.dm_exec_requests r ON r.session_id = s.session_id
WHERE s.is_user_process = 1 AND s.database_id = DB_ID() AND s.session_id <> @@SPID`

// waitStatsSQL reads the cumulative waits of the types waitClassOf maps
// to a class of its own: the others (mostly the server's idle background
// waits) would only make "other" grow while nothing runs.
const waitStatsSQL = `SELECT wait_type, waiting_tasks_count, wait_time_ms FROM sys.dm_os_wait_stats
WHERE wait_type LIKE 'LCK[_]M[_]%' OR wait_type LIKE 'PAGEIOLATCH[_]%' OR wait_type LIKE 'PAGELATCH[_]%'
	OR wait_type LIKE 'LATCH[_]%' OR wait_type IN ('WRITELOG', 'LOGBUFFER', 'IO_COMPLETION', 'ASYNC_IO_COMPLETION',
	'ASYNC_NETWORK_IO', 'SOS_SCHEDULER_YIELD')`

// fileStatsSQL sums this database's files' I/O by type (0 rows, 1 log).
const fileStatsSQL = `SELECT f.type, SUM(v.num_of_reads), SUM(v.num_of_bytes_read), SUM(v.io_stall_read_ms),
	SUM(v.num_of_writes), SUM(v.num_of_bytes_written), SUM(v.io_stall_write_ms)
FROM sys.dm_io_virtual_file_stats(DB_ID(), NULL) v JOIN sys.database_files f ON f.file_id = v.file_id
GROUP BY f.type`

// waitClassOf maps a wait_type to oltplab's classes, as data: locks
// (LCK_M_*), data file I/O (PAGEIOLATCH_*, IO_COMPLETION), the log's
// (WRITELOG, LOGBUFFER), latches (PAGELATCH_*, LATCH_*), the client
// (ASYNC_NETWORK_IO: the server waits for the client to read results),
// the CPU (SOS_SCHEDULER_YIELD: a task gave up the scheduler and waits to
// run again); anything else is "other".
func waitClassOf(waitType string) dialect.WaitClass {
	for _, p := range waitPrefixes {
		if strings.HasPrefix(waitType, p.prefix) {
			return p.class
		}
	}
	return dialect.WaitOther
}

var waitPrefixes = []struct {
	prefix string
	class  dialect.WaitClass
}{
	{"LCK_M_", dialect.WaitLock},
	{"PAGEIOLATCH_", dialect.WaitDataIO},
	{"IO_COMPLETION", dialect.WaitDataIO},
	{"ASYNC_IO_COMPLETION", dialect.WaitDataIO},
	{"WRITELOG", dialect.WaitLogIO},
	{"LOGBUFFER", dialect.WaitLogIO},
	{"PAGELATCH_", dialect.WaitLatch},
	{"LATCH_", dialect.WaitLatch},
	{"ASYNC_NETWORK_IO", dialect.WaitClient},
	{"SOS_SCHEDULER_YIELD", dialect.WaitCPU},
}

// classifySession maps a session's request status, wait type and open
// transactions to a class.
func classifySession(status, waitType string, openTx int64) dialect.WaitClass {
	switch status {
	case "":
		if openTx > 0 {
			return dialect.WaitClient // idle inside an open transaction
		}
		return dialect.WaitIdle
	case "running", "runnable":
		return dialect.WaitCPU
	case "suspended":
		if waitType == "" {
			return dialect.WaitOther
		}
		return waitClassOf(waitType)
	case "sleeping", "background":
		return dialect.WaitIdle
	}
	return dialect.WaitOther
}

// openWaitProbe takes a connection of its own from the pool.
func (d *DB) openWaitProbe(ctx context.Context) (dialect.WaitProbe, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap("open wait probe", err)
	}
	p := &waitProbe{d: d, c: c, files: d.srv.fileStats}
	p.source = "sys.dm_exec_sessions and sys.dm_exec_requests (wait_type), sys.dm_os_wait_stats"
	if p.files {
		p.source += ", sys.dm_io_virtual_file_stats"
	} else {
		p.source += " (no sys.dm_io_virtual_file_stats on this server: no file latency)"
	}
	return p, nil
}

// waitProbe is dialect.WaitProbe on one pooled connection held for its life.
type waitProbe struct {
	d      *DB
	c      *sql.Conn
	files  bool
	source string
}

func (p *waitProbe) SampleWaits(ctx context.Context) ([]dialect.WaitSample, error) {
	rows, err := p.c.QueryContext(ctx, waitsSQL)
	if err != nil {
		return nil, p.d.wrap("sample sys.dm_exec_requests", err)
	}
	defer rows.Close()
	var out []dialect.WaitSample
	var id, openTx int64
	var status, waitType string
	for rows.Next() {
		if err := rows.Scan(&id, &status, &waitType, &openTx); err != nil {
			return nil, p.d.wrap("sample sys.dm_exec_requests", err)
		}
		status = strings.TrimSpace(status)
		waitType = strings.TrimSpace(waitType)
		s := dialect.WaitSample{Session: id, Class: classifySession(status, waitType, openTx)}
		if status == "suspended" {
			s.Event = waitType
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, p.d.wrap("sample sys.dm_exec_requests", err)
	}
	return out, nil
}

// DBCounters: per class, the waits and their milliseconds since the server
// started ("lock_waits", "lock_wait_ms", ...), WRITELOG's alone (the
// commit's wait for the log), and, where the server has it, this
// database's data and log file I/O.
func (p *waitProbe) DBCounters(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	rows, err := p.c.QueryContext(ctx, waitStatsSQL)
	if err != nil {
		return nil, p.d.wrap("read sys.dm_os_wait_stats", err)
	}
	var waitType string
	var count, ms float64
	for rows.Next() {
		if err := rows.Scan(&waitType, &count, &ms); err != nil {
			rows.Close()
			return nil, p.d.wrap("read sys.dm_os_wait_stats", err)
		}
		waitType = strings.TrimSpace(waitType)
		c := waitClassOf(waitType).String()
		out[c+"_waits"] += count
		out[c+"_wait_ms"] += ms
		if waitType == "WRITELOG" {
			out["writelog_waits"] += count
			out["writelog_wait_ms"] += ms
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, p.d.wrap("read sys.dm_os_wait_stats", err)
	}
	if !p.files {
		return out, nil
	}
	rows, err = p.c.QueryContext(ctx, fileStatsSQL)
	if err != nil {
		return nil, p.d.wrap("read sys.dm_io_virtual_file_stats", err)
	}
	defer rows.Close()
	var typ int64
	var reads, readBytes, readStall, writes, writeBytes, writeStall float64
	for rows.Next() {
		if err := rows.Scan(&typ, &reads, &readBytes, &readStall, &writes, &writeBytes, &writeStall); err != nil {
			return nil, p.d.wrap("read sys.dm_io_virtual_file_stats", err)
		}
		kind := "data"
		if typ == 1 {
			kind = "log"
		}
		out[kind+"_reads"] += reads
		out[kind+"_read_bytes"] += readBytes
		out[kind+"_read_stall_ms"] += readStall
		out[kind+"_writes"] += writes
		out[kind+"_written_bytes"] += writeBytes
		out[kind+"_write_stall_ms"] += writeStall
	}
	if err := rows.Err(); err != nil {
		return nil, p.d.wrap("read sys.dm_io_virtual_file_stats", err)
	}
	return out, nil
}

// AvgWaits: the commit's wait for the log, a row lock's wait, and the
// files' average read and write latency.
func (p *waitProbe) AvgWaits() []dialect.AvgWait {
	a := []dialect.AvgWait{
		{Label: "writelog", TimeCounter: "writelog_wait_ms", CountCounter: "writelog_waits"},
		{Label: "lock_wait", TimeCounter: "lock_wait_ms", CountCounter: "lock_waits"},
	}
	if p.files {
		a = append(a,
			dialect.AvgWait{Label: "data_read", TimeCounter: "data_read_stall_ms", CountCounter: "data_reads"},
			dialect.AvgWait{Label: "data_write", TimeCounter: "data_write_stall_ms", CountCounter: "data_writes"},
			dialect.AvgWait{Label: "log_write", TimeCounter: "log_write_stall_ms", CountCounter: "log_writes"})
	}
	return a
}

func (p *waitProbe) WaitSource() string { return p.source }

func (p *waitProbe) Close() error { return p.c.Close() }
