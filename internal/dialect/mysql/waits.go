package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
)

var _ dialect.WaitSampler = (*DB)(nil)

// What MariaDB and MySQL can tell about a session's wait, and what not:
//
//   - the process list (SHOW PROCESSLIST) always: Command "Sleep" is an
//     idle session (idle in a transaction when INNODB_TRX has one for it).
//     Its State is free text and is not used to classify.
//   - information_schema.INNODB_TRX always: trx_state "LOCK WAIT" (an
//     enumerated value, not a message) is a row lock wait.
//   - performance_schema.events_waits_current when performance_schema is
//     ON (it is OFF by default in MariaDB): the instrument name of the
//     wait in progress (wait/io/file/innodb/innodb_log_file, ...).
//
// InnoDB refreshes INNODB_TRX (trx_i_s_cache) only when it was not read
// for 100 ms: sampling more often than that, by this probe or anyone else,
// sees a stale list. The sampler's default of 200 ms is above it.
//
// Without performance_schema a session running a statement that waits for
// I/O or a latch cannot be told from one on CPU: it counts as CPU, and
// WaitSource says so.

// A wait sample takes up to three statements on the probe's connection,
// none of which joins an information_schema table: SHOW PROCESSLIST (the
// sessions of the probe's database, filtered here), INNODB_TRX's two
// columns when there is such a session, and, with performance_schema's
// events_waits_current consumer on, the waits in progress of those
// sessions. information_schema.PROCESSLIST joined to INNODB_TRX, which
// the probe used before, costs the server about 17 times SHOW
// PROCESSLIST's CPU: the server fills a temporary table of PROCESSLIST's
// every column (its INFO is a LONGTEXT) at each read. Measured side by
// side on one MariaDB 10.11 with eight sessions in the database, half in
// a transaction, alternating blocks of 1,000 samples: 225 against 42 µs of
// the server's CPU per sample without performance_schema, 565 against
// 196 µs with it (SHOW PROCESSLIST alone: 16 against 268 µs).
const (
	trxSQL     = `SELECT trx_mysql_thread_id, trx_state FROM information_schema.INNODB_TRX`
	psWaitsSQL = `SELECT t.PROCESSLIST_ID, w.EVENT_NAME
FROM performance_schema.threads t
JOIN performance_schema.events_waits_current w ON w.THREAD_ID = t.THREAD_ID AND w.END_EVENT_ID IS NULL
WHERE t.PROCESSLIST_DB = DATABASE()`
)

// statusCounters maps SHOW GLOBAL STATUS names to the counter names
// DBCounters reports (units where they have one). Server-wide counters.
var statusCounters = map[string]string{
	"Innodb_row_lock_waits":            "innodb_row_lock_waits",
	"Innodb_row_lock_time":             "innodb_row_lock_time_ms",
	"Innodb_log_waits":                 "innodb_log_waits",
	"Innodb_log_write_requests":        "innodb_log_write_requests",
	"Innodb_os_log_written":            "innodb_os_log_written_bytes",
	"Innodb_os_log_fsyncs":             "innodb_os_log_fsyncs", // MySQL and MariaDB before 10.8
	"Innodb_data_fsyncs":               "innodb_data_fsyncs",
	"Innodb_data_reads":                "innodb_data_reads",
	"Innodb_data_writes":               "innodb_data_writes",
	"Innodb_data_read":                 "innodb_data_read_bytes",
	"Innodb_data_written":              "innodb_data_written_bytes",
	"Innodb_buffer_pool_reads":         "innodb_buffer_pool_reads",
	"Innodb_buffer_pool_read_requests": "innodb_buffer_pool_read_requests",
	"Innodb_buffer_pool_wait_free":     "innodb_buffer_pool_wait_free",
	"Innodb_deadlocks":                 "innodb_deadlocks",
	"Com_commit":                       "com_commit",
	"Com_rollback":                     "com_rollback",
}

// countersSQL lists statusCounters' names.
var countersSQL = func() string {
	names := make([]string, 0, len(statusCounters))
	for k := range statusCounters {
		names = append(names, "'"+k+"'")
	}
	return "SHOW GLOBAL STATUS WHERE Variable_name IN (" + strings.Join(names, ", ") + ")"
}()

// OpenWaitProbe takes a connection of its own from the pool and checks
// whether performance_schema wait events can be read.
func (d *DB) OpenWaitProbe(ctx context.Context) (dialect.WaitProbe, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap("open wait probe", err)
	}
	var ps int
	if err := c.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&ps); err != nil {
		c.Close()
		return nil, d.wrap("open wait probe: read @@performance_schema", err)
	}
	var enabled string
	var cerr error
	if ps == 1 {
		cerr = c.QueryRowContext(ctx,
			"SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'events_waits_current'").Scan(&enabled)
	}
	p := &waitProbe{d: d, c: c, fileIO: ps == 1}
	var db sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID(), DATABASE()").Scan(&p.ownID, &db); err != nil {
		c.Close()
		return nil, d.wrap("open wait probe: read the session's id and database", err)
	}
	p.db, p.hasDB = db.String, db.Valid
	p.psWaits, p.source = waitSource(ps == 1, enabled, cerr)
	if p.fileIO {
		p.source += "; InnoDB file I/O timed by performance_schema.file_summary_by_event_name"
	}
	return p, nil
}

// fileIOSQL reads the server's own timing of InnoDB's file I/O
// (performance_schema, picoseconds), cumulative since it started.
const fileIOSQL = `SELECT EVENT_NAME, COUNT_READ, SUM_TIMER_READ, COUNT_WRITE, SUM_TIMER_WRITE, COUNT_MISC, SUM_TIMER_MISC
FROM performance_schema.file_summary_by_event_name
WHERE EVENT_NAME IN ('wait/io/file/innodb/innodb_data_file', 'wait/io/file/innodb/innodb_log_file')`

// fileIOCounters adds one row of fileIOSQL to out: counts, and times in
// milliseconds, of reads, writes and the rest (opens, closes and syncs:
// "misc"), named after the file kind ("innodb_data_file_reads",
// "innodb_data_file_read_time_ms").
func fileIOCounters(out map[string]float64, event string, counts, picos [3]float64) {
	kind, ok := strings.CutPrefix(event, "wait/io/file/innodb/")
	if !ok {
		return
	}
	for i, op := range []struct{ count, time string }{{"reads", "read"}, {"writes", "write"}, {"misc_ops", "misc"}} {
		out[kind+"_"+op.count] = counts[i]
		out[kind+"_"+op.time+"_time_ms"] = picos[i] / 1e9
	}
}

// waitSource says whether the waits in progress can be read from
// performance_schema, and what the samples can see, from
// @@performance_schema, the ENABLED column of the events_waits_current
// consumer and the error reading it. performance_schema on with that
// consumer off is not "performance_schema off": the fix differs (enable
// the consumer, no restart).
func waitSource(psOn bool, consumerEnabled string, consumerErr error) (psWaits bool, source string) {
	const blind = "sessions waiting for I/O or latches count as CPU; row lock waits and idle sessions are exact"
	switch {
	case !psOn:
		return false, "SHOW PROCESSLIST and information_schema.INNODB_TRX (performance_schema off: " + blind + ")"
	case consumerErr != nil:
		return false, "SHOW PROCESSLIST and information_schema.INNODB_TRX (performance_schema on, but its setup_consumers " +
			"could not be read: " + consumerErr.Error() + "; " + blind + ")"
	case consumerEnabled != "YES":
		return false, "SHOW PROCESSLIST and information_schema.INNODB_TRX (performance_schema on, but its events_waits_current " +
			"consumer is off; enable it with UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' " +
			"WHERE NAME = 'events_waits_current'; until then " + blind + ")"
	}
	return true, "SHOW PROCESSLIST and information_schema.INNODB_TRX with performance_schema.events_waits_current " +
		"(only the instruments enabled in setup_instruments are seen)"
}

// waitProbe is dialect.WaitProbe on one pooled connection held for its life.
type waitProbe struct {
	d       *DB
	c       *sql.Conn
	ownID   int64  // the probe's session, left out of the samples
	db      string // the probe's database: the sessions sampled are its
	hasDB   bool   // the probe has a database (else no session is sampled)
	psWaits bool   // read the waits in progress from performance_schema
	source  string
	fileIO  bool // performance_schema is on: read its file I/O timing
}

// session is a session of the probe's database, as SHOW PROCESSLIST
// shows it.
type session struct {
	id      int64
	command string
}

func (p *waitProbe) SampleWaits(ctx context.Context) ([]dialect.WaitSample, error) {
	sessions, err := p.sessions(ctx)
	if err != nil || len(sessions) == 0 {
		return nil, err
	}
	trx, err := p.trxStates(ctx)
	if err != nil {
		return nil, err
	}
	var events map[int64]string
	if p.psWaits {
		if events, err = p.waitEvents(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]dialect.WaitSample, 0, len(sessions))
	for _, ss := range sessions {
		event := events[ss.id]
		s := dialect.WaitSample{Session: ss.id, Class: classifyWait(ss.command, trx[ss.id], event), Event: event}
		if s.Class == dialect.WaitLock && event == "" {
			s.Event = "innodb:row_lock"
		}
		out = append(out, s)
	}
	return out, nil
}

// sessions reads SHOW PROCESSLIST: the sessions of the probe's database
// but the probe's own. Its columns are found by name (MariaDB adds
// Progress to MySQL's).
func (p *waitProbe) sessions(ctx context.Context) ([]session, error) {
	rows, err := p.c.QueryContext(ctx, "SHOW PROCESSLIST")
	if err != nil {
		return nil, p.d.wrap("sample SHOW PROCESSLIST", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, p.d.wrap("sample SHOW PROCESSLIST", err)
	}
	idCol, dbCol, cmdCol := -1, -1, -1
	for i, c := range cols {
		switch strings.ToLower(c) {
		case "id":
			idCol = i
		case "db":
			dbCol = i
		case "command":
			cmdCol = i
		}
	}
	if idCol < 0 || dbCol < 0 || cmdCol < 0 {
		return nil, p.d.wrap("sample SHOW PROCESSLIST", fmt.Errorf("no Id, db or Command column among %v", cols))
	}
	vals := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	var out []session
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, p.d.wrap("sample SHOW PROCESSLIST", err)
		}
		if !p.hasDB || vals[dbCol] == nil || string(vals[dbCol]) != p.db {
			continue
		}
		id, err := strconv.ParseInt(string(vals[idCol]), 10, 64)
		if err != nil {
			return nil, p.d.wrap("sample SHOW PROCESSLIST", fmt.Errorf("session id %q: %w", vals[idCol], err))
		}
		if id != p.ownID {
			out = append(out, session{id: id, command: string(vals[cmdCol])})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, p.d.wrap("sample SHOW PROCESSLIST", err)
	}
	return out, nil
}

// trxStates reads the InnoDB transactions' states by session.
func (p *waitProbe) trxStates(ctx context.Context) (map[int64]string, error) {
	rows, err := p.c.QueryContext(ctx, trxSQL)
	if err != nil {
		return nil, p.d.wrap("sample INNODB_TRX", err)
	}
	defer rows.Close()
	out := map[int64]string{}
	var id int64
	var state string
	for rows.Next() {
		if err := rows.Scan(&id, &state); err != nil {
			return nil, p.d.wrap("sample INNODB_TRX", err)
		}
		out[id] = state
	}
	if err := rows.Err(); err != nil {
		return nil, p.d.wrap("sample INNODB_TRX", err)
	}
	return out, nil
}

// waitEvents reads the waits in progress of the sessions of the probe's
// database; a session with several open waits keeps the first.
func (p *waitProbe) waitEvents(ctx context.Context) (map[int64]string, error) {
	rows, err := p.c.QueryContext(ctx, psWaitsSQL)
	if err != nil {
		return nil, p.d.wrap("sample performance_schema.events_waits_current", err)
	}
	defer rows.Close()
	out := map[int64]string{}
	var id int64
	var event string
	for rows.Next() {
		if err := rows.Scan(&id, &event); err != nil {
			return nil, p.d.wrap("sample performance_schema.events_waits_current", err)
		}
		if _, ok := out[id]; !ok && event != "" {
			out[id] = event
		}
	}
	if err := rows.Err(); err != nil {
		return nil, p.d.wrap("sample performance_schema.events_waits_current", err)
	}
	return out, nil
}

// classifyWait maps a PROCESSLIST command, the session's InnoDB
// transaction state and its performance_schema wait (or "") to a class.
func classifyWait(command, trxState, event string) dialect.WaitClass {
	if trxState == "LOCK WAIT" {
		return dialect.WaitLock
	}
	switch command {
	case "Sleep":
		if trxState != "" {
			return dialect.WaitClient // idle inside an open transaction
		}
		return dialect.WaitIdle
	case "Query", "Execute", "Fetch", "Prepare":
	default:
		return dialect.WaitOther
	}
	switch {
	case event == "":
		return dialect.WaitCPU
	case strings.HasPrefix(event, "wait/io/file/innodb/innodb_log_file"),
		strings.HasPrefix(event, "wait/io/file/sql/binlog"):
		return dialect.WaitLogIO
	case strings.HasPrefix(event, "wait/io/file/"):
		return dialect.WaitDataIO
	case strings.HasPrefix(event, "wait/io/socket/"):
		return dialect.WaitClient
	case strings.HasPrefix(event, "wait/lock/"):
		return dialect.WaitLock // table and metadata locks
	case strings.HasPrefix(event, "wait/synch/"):
		return dialect.WaitLatch // mutex, rwlock, sxlock, cond
	case strings.HasPrefix(event, "wait/io/table/"):
		// Handler row operations, timed by the server: work in the
		// storage engine, not a wait for the disk.
		return dialect.WaitCPU
	}
	return dialect.WaitOther
}

func (p *waitProbe) DBCounters(ctx context.Context) (map[string]float64, error) {
	rows, err := p.c.QueryContext(ctx, countersSQL)
	if err != nil {
		return nil, p.d.wrap("read SHOW GLOBAL STATUS", err)
	}
	defer rows.Close()
	out := make(map[string]float64, len(statusCounters))
	var name, value string
	for rows.Next() {
		if err := rows.Scan(&name, &value); err != nil {
			return nil, p.d.wrap("read SHOW GLOBAL STATUS", err)
		}
		k, ok := statusCounters[name]
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue // not a number on this server version
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, p.d.wrap("read SHOW GLOBAL STATUS", err)
	}
	if p.fileIO {
		if err := p.readFileIO(ctx, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readFileIO adds the server's own file I/O timing to out.
func (p *waitProbe) readFileIO(ctx context.Context, out map[string]float64) error {
	rows, err := p.c.QueryContext(ctx, fileIOSQL)
	if err != nil {
		return p.d.wrap("read performance_schema.file_summary_by_event_name", err)
	}
	defer rows.Close()
	for rows.Next() {
		var event string
		var counts, picos [3]float64
		if err := rows.Scan(&event, &counts[0], &picos[0], &counts[1], &picos[1], &counts[2], &picos[2]); err != nil {
			return p.d.wrap("read performance_schema.file_summary_by_event_name", err)
		}
		fileIOCounters(out, event, counts, picos)
	}
	if err := rows.Err(); err != nil {
		return p.d.wrap("read performance_schema.file_summary_by_event_name", err)
	}
	return nil
}

func (p *waitProbe) AvgWaits() []dialect.AvgWait {
	w := []dialect.AvgWait{
		{Label: "row_lock_wait", TimeCounter: "innodb_row_lock_time_ms", CountCounter: "innodb_row_lock_waits"},
	}
	if p.fileIO {
		// InnoDB's data files as the server timed them; its redo log
		// writes are not instrumented in MariaDB 10.11 (they stay 0).
		w = append(w,
			dialect.AvgWait{Label: "data_file_read", TimeCounter: "innodb_data_file_read_time_ms", CountCounter: "innodb_data_file_reads"},
			dialect.AvgWait{Label: "data_file_write", TimeCounter: "innodb_data_file_write_time_ms", CountCounter: "innodb_data_file_writes"},
			dialect.AvgWait{Label: "data_file_sync_open_close", TimeCounter: "innodb_data_file_misc_time_ms", CountCounter: "innodb_data_file_misc_ops"},
			dialect.AvgWait{Label: "log_file_write", TimeCounter: "innodb_log_file_write_time_ms", CountCounter: "innodb_log_file_writes"},
		)
	}
	return w
}

func (p *waitProbe) WaitSource() string { return p.source }

func (p *waitProbe) Close() error { return p.c.Close() }
