package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
)

var _ dialect.WaitSampler = (*Database)(nil)

// waitsSQL reads the state of every client backend of the target database
// but the probe's own. pg_stat_activity is a shared-memory read, cheap at
// several times a second.
const waitsSQL = `SELECT pid, coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, '')
FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`

// counterColumns maps "view.column" to the counter name DBCounters
// reports (with the unit where the column has one). Views are read whole
// as JSON (to_jsonb of the row), so a column a server version lacks is
// simply absent, and a renamed one (PostgreSQL 17's pg_stat_checkpointer)
// maps to the same name.
var counterColumns = map[string]string{
	// pg_stat_wal (PostgreSQL 14+); the *_time columns need track_wal_io_timing.
	"wal.wal_records": "wal_records", "wal.wal_fpi": "wal_fpi", "wal.wal_bytes": "wal_bytes",
	"wal.wal_buffers_full": "wal_buffers_full", "wal.wal_write": "wal_write", "wal.wal_sync": "wal_sync",
	"wal.wal_write_time": "wal_write_time_ms", "wal.wal_sync_time": "wal_sync_time_ms",
	// pg_stat_bgwriter up to 16.
	"bgwriter.checkpoints_timed": "checkpoints_timed", "bgwriter.checkpoints_req": "checkpoints_req",
	"bgwriter.checkpoint_write_time": "checkpoint_write_time_ms",
	"bgwriter.checkpoint_sync_time":  "checkpoint_sync_time_ms",
	"bgwriter.buffers_checkpoint":    "buffers_checkpoint", "bgwriter.buffers_clean": "buffers_clean",
	"bgwriter.maxwritten_clean": "maxwritten_clean", "bgwriter.buffers_backend": "buffers_backend",
	"bgwriter.buffers_backend_fsync": "buffers_backend_fsync", "bgwriter.buffers_alloc": "buffers_alloc",
	// pg_stat_checkpointer (17+) took over the checkpoint columns.
	"checkpointer.num_timed": "checkpoints_timed", "checkpointer.num_requested": "checkpoints_req",
	"checkpointer.write_time": "checkpoint_write_time_ms", "checkpointer.sync_time": "checkpoint_sync_time_ms",
	"checkpointer.buffers_written": "buffers_checkpoint",
	// pg_stat_database of the target database; *_time columns need track_io_timing.
	"db.xact_commit": "xact_commit", "db.xact_rollback": "xact_rollback",
	"db.blks_read": "blks_read", "db.blks_hit": "blks_hit",
	"db.tup_returned": "tup_returned", "db.tup_fetched": "tup_fetched", "db.tup_inserted": "tup_inserted",
	"db.tup_updated": "tup_updated", "db.tup_deleted": "tup_deleted",
	"db.temp_files": "temp_files", "db.temp_bytes": "temp_bytes", "db.deadlocks": "deadlocks",
	"db.blk_read_time": "blk_read_time_ms", "db.blk_write_time": "blk_write_time_ms",
}

// OpenWaitProbe opens the probe's own connection and decides, from the
// server version, which statistics views it reads.
func (d *Database) OpenWaitProbe(ctx context.Context) (dialect.WaitProbe, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("open wait probe: %w", err)
	}
	p := &waitProbe{conn: c}
	var version int
	var ioTiming, walTiming string
	err = c.QueryRow(ctx, `SELECT current_setting('server_version_num')::int,
		current_setting('track_io_timing'), coalesce(current_setting('track_wal_io_timing', true), 'off')`).
		Scan(&version, &ioTiming, &walTiming)
	if err != nil {
		p.Close()
		return nil, &dialect.Error{Class: classify(err), Op: "open wait probe: read server version", Err: err}
	}
	views := []string{"(SELECT to_jsonb(d) FROM pg_stat_database d WHERE datname = current_database()) AS db",
		"(SELECT to_jsonb(b) FROM pg_stat_bgwriter b) AS bgwriter"}
	if version >= 140000 {
		views = append(views, "(SELECT to_jsonb(w) FROM pg_stat_wal w) AS wal")
	}
	if version >= 170000 {
		views = append(views, "(SELECT to_jsonb(c) FROM pg_stat_checkpointer c) AS checkpointer")
	}
	p.countersSQL = "SELECT " + strings.Join(views, ", ")
	if walTiming == "on" {
		p.avg = append(p.avg,
			dialect.AvgWait{Label: "wal_sync", TimeCounter: "wal_sync_time_ms", CountCounter: "wal_sync"},
			dialect.AvgWait{Label: "wal_write", TimeCounter: "wal_write_time_ms", CountCounter: "wal_write"})
	}
	if ioTiming == "on" {
		p.avg = append(p.avg, dialect.AvgWait{Label: "data_block_read", TimeCounter: "blk_read_time_ms", CountCounter: "blks_read"})
	}
	p.source = fmt.Sprintf("pg_stat_activity wait_event_type/wait_event; counters from pg_stat_database, "+
		"pg_stat_bgwriter, pg_stat_wal; track_io_timing=%s, track_wal_io_timing=%s "+
		"(average wait times need them on)", ioTiming, walTiming)
	return p, nil
}

// waitProbe is dialect.WaitProbe on one connection of its own.
type waitProbe struct {
	conn        *pgx.Conn
	countersSQL string
	avg         []dialect.AvgWait
	source      string
}

func (p *waitProbe) SampleWaits(ctx context.Context) ([]dialect.WaitSample, error) {
	rows, err := p.conn.Query(ctx, waitsSQL)
	if err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "sample pg_stat_activity", Err: err}
	}
	defer rows.Close()
	var out []dialect.WaitSample
	var pid int64
	var state, typ, event string
	for rows.Next() {
		if err := rows.Scan(&pid, &state, &typ, &event); err != nil {
			return nil, fmt.Errorf("sample pg_stat_activity: %w", err)
		}
		s := dialect.WaitSample{Session: pid, Class: classifyWait(state, typ, event)}
		if typ != "" {
			s.Event = typ + ":" + event
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "sample pg_stat_activity", Err: err}
	}
	return out, nil
}

// classifyWait maps a backend's state and wait event to a common class
// (PostgreSQL 15 docs, table 28.4 "Wait Event Types" and 28.5-28.13).
func classifyWait(state, typ, event string) dialect.WaitClass {
	switch state {
	case "idle":
		return dialect.WaitIdle
	case "idle in transaction", "idle in transaction (aborted)":
		// Between statements of an open transaction: the client (or the
		// network round trip) holds the transaction, and its locks.
		return dialect.WaitClient
	case "active", "fastpath function call":
	default:
		return dialect.WaitOther // "disabled" (track_activities off) or unknown
	}
	switch typ {
	case "":
		return dialect.WaitCPU
	case "IO":
		if strings.HasPrefix(event, "WAL") {
			return dialect.WaitLogIO // WALWrite, WALSync, WALRead, WALInitWrite, ...
		}
		return dialect.WaitDataIO // DataFileRead, DataFileWrite, DataFileExtend, BufFileRead, ...
	case "Lock":
		return dialect.WaitLock
	case "LWLock":
		if event == "WALWrite" {
			// Waiting for another backend to flush the WAL up to our
			// commit record: commit I/O, not contention for a latch.
			return dialect.WaitLogIO
		}
		return dialect.WaitLatch
	case "Client":
		return dialect.WaitClient
	case "IPC":
		if event == "SyncRep" {
			return dialect.WaitLogIO // commit waiting for a synchronous standby
		}
	}
	return dialect.WaitOther // IPC, Timeout, Extension, BufferPin, Activity
}

func (p *waitProbe) DBCounters(ctx context.Context) (map[string]float64, error) {
	rows, err := p.conn.Query(ctx, p.countersSQL)
	if err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "read statistics views", Err: err}
	}
	defer rows.Close()
	out := make(map[string]float64, len(counterColumns))
	fields := rows.FieldDescriptions()
	for rows.Next() {
		raws := rows.RawValues()
		for i, f := range fields {
			if raws[i] == nil {
				continue // no pg_stat_database row yet
			}
			if err := addCounters(out, f.Name, raws[i]); err != nil {
				return nil, fmt.Errorf("read statistics view %s: %w", f.Name, err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "read statistics views", Err: err}
	}
	return out, nil
}

// addCounters adds the known numeric columns of one view row, given as
// JSON text (jsonb's text form, which is what pgx returns for it).
func addCounters(out map[string]float64, view string, raw []byte) error {
	// jsonb in binary format is a version byte followed by the text.
	if len(raw) > 0 && raw[0] == 1 {
		raw = raw[1:]
	}
	var row map[string]json.RawMessage
	if err := json.Unmarshal(raw, &row); err != nil {
		return err
	}
	for col, v := range row {
		name, ok := counterColumns[view+"."+col]
		if !ok {
			continue
		}
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			continue // null (e.g. a reset time) or not a number
		}
		out[name] = f
	}
	return nil
}

func (p *waitProbe) AvgWaits() []dialect.AvgWait { return p.avg }

func (p *waitProbe) WaitSource() string { return p.source }

func (p *waitProbe) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return p.conn.Close(ctx)
}
