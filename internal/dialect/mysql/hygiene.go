package mysql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Per-step hygiene (dialect.Checkpointer, dialect.Resetter).
//
// Checkpoint makes InnoDB flush its whole buffer pool: it sets
// innodb_max_dirty_pages_pct to 0, which makes the page cleaner write
// every dirty page, waits (bounded) until Innodb_buffer_pool_pages_dirty
// is about zero, and restores the previous value. The redo log checkpoint
// follows the flushed pages. It needs SUPER (MariaDB) or
// SYSTEM_VARIABLES_ADMIN (MySQL 8).
//
// MariaDB and MySQL have no template databases. SaveBaseline copies the
// nine tables and the metadata table into a schema of its own,
// <db>_oltplab_base (CREATE TABLE ... LIKE, INSERT ... SELECT); Reset
// truncates each table of the database and copies the baseline back
// (TRUNCATE, INSERT ... SELECT), two tables at a time. Stored procedures
// stay where they are. TRUNCATE waits for metadata locks: sessions must be
// closed first, and a reset gives up after resetLockWait.
//
// The baseline's mark (dialect.BaselineMark) is the one row of a table of
// its own in the baseline schema, baselineMarkTable, created right after
// the schema and before any table is copied (MySQL has no comments on
// schemas). A schema of that name without it is the user's, even one
// holding a copy of the database: SaveBaseline does not replace it, Reset
// does not copy from it, and DropBaseline does not drop it
// (dialect.ErrNotOurs).
var (
	_ dialect.Checkpointer = (*DB)(nil)
	_ dialect.Resetter     = (*DB)(nil)
)

const (
	baselineSuffix = "_oltplab_base"
	// baselineMarkTable holds the baseline schema's mark.
	baselineMarkTable = "oltplab_baseline_mark"
	maxSchemaName     = 64
	// checkpointWait bounds the wait for the buffer pool to become clean.
	checkpointWait = 5 * time.Minute
	// checkpointIOCapacity is innodb_io_capacity during a checkpoint.
	checkpointIOCapacity = 100000
	// checkpointPoll is how often the dirty page count is read.
	checkpointPoll = 50 * time.Millisecond
	// cleanPages: the buffer pool is clean enough when at most this many
	// pages are dirty (background purge may keep dirtying a few).
	cleanPages = 16
	// resetLockWait is lock_wait_timeout (seconds) of the copy connections.
	resetLockWait = 60
	// copyWorkers copy tables in parallel.
	copyWorkers = 2
	// errSpecificAccessDenied: ER_SPECIFIC_ACCESS_DENIED_ERROR (needs SUPER).
	errSpecificAccessDenied = 1227
	// errTableAccessDenied: ER_TABLEACCESS_DENIED_ERROR.
	errTableAccessDenied = 1142
)

// checkpointMu serialises Checkpoint within this process, so that two
// checkpoints do not restore each other's 0. (A process killed during a
// checkpoint leaves innodb_max_dirty_pages_pct at 0 until someone sets it.)
var checkpointMu sync.Mutex

// notPermitted turns a privilege error into a *dialect.Error of class
// ClassAuth wrapping dialect.ErrNotPermitted; other errors are wrapped
// with their own class.
func (d *DB) notPermitted(op, need string, err error) error {
	switch errno(err) {
	case errSpecificAccessDenied, errTableAccessDenied, 1044, 1045:
		return &dialect.Error{Class: dialect.ClassAuth, Op: op, Err: fmt.Errorf("%w: %s: %w", dialect.ErrNotPermitted, need, err)}
	}
	return d.wrap(op, err)
}

// Checkpoint flushes every dirty page of the InnoDB buffer pool.
func (d *DB) Checkpoint(ctx context.Context) error {
	const op = "checkpoint"
	checkpointMu.Lock()
	defer checkpointMu.Unlock()
	c, err := d.db.Conn(ctx)
	if err != nil {
		return d.wrap(op+": connect", err)
	}
	defer c.Close()
	var old string
	if err := c.QueryRowContext(ctx, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct").Scan(&old); err != nil {
		return d.wrap(op+": read innodb_max_dirty_pages_pct", err)
	}
	if _, err := strconv.ParseFloat(old, 64); err != nil {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("innodb_max_dirty_pages_pct %q is not a number", old)}
	}
	if _, err := c.ExecContext(ctx, "SET GLOBAL innodb_max_dirty_pages_pct = 0"); err != nil {
		return d.notPermitted(op, "SET GLOBAL needs SUPER or SYSTEM_VARIABLES_ADMIN", err)
	}
	defer func() {
		// old was checked to be a number: it is safe in the statement text.
		if _, rerr := c.ExecContext(context.WithoutCancel(ctx), "SET GLOBAL innodb_max_dirty_pages_pct = "+old); rerr != nil {
			d.log.Error("restore innodb_max_dirty_pages_pct after a checkpoint", "value", old, "err", rerr)
		}
	}()
	// The page cleaner flushes at innodb_io_capacity pages per second
	// (default 200): at that pace one warehouse takes a minute. Let it
	// write as fast as the device can for the checkpoint, then restore.
	var ioCap, ioCapMax int64
	if err := c.QueryRowContext(ctx, "SELECT @@GLOBAL.innodb_io_capacity, @@GLOBAL.innodb_io_capacity_max").Scan(&ioCap, &ioCapMax); err != nil {
		return d.wrap(op+": read innodb_io_capacity", err)
	}
	if ioCapMax < checkpointIOCapacity {
		if _, err := c.ExecContext(ctx, fmt.Sprintf("SET GLOBAL innodb_io_capacity_max = %d", checkpointIOCapacity)); err != nil {
			return d.notPermitted(op, "SET GLOBAL needs SUPER or SYSTEM_VARIABLES_ADMIN", err)
		}
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("SET GLOBAL innodb_io_capacity = %d", checkpointIOCapacity)); err != nil {
		return d.notPermitted(op, "SET GLOBAL needs SUPER or SYSTEM_VARIABLES_ADMIN", err)
	}
	defer func() {
		rctx := context.WithoutCancel(ctx)
		if _, rerr := c.ExecContext(rctx, fmt.Sprintf("SET GLOBAL innodb_io_capacity = %d", ioCap)); rerr != nil {
			d.log.Error("restore innodb_io_capacity after a checkpoint", "value", ioCap, "err", rerr)
		}
		if _, rerr := c.ExecContext(rctx, fmt.Sprintf("SET GLOBAL innodb_io_capacity_max = %d", ioCapMax)); rerr != nil {
			d.log.Error("restore innodb_io_capacity_max after a checkpoint", "value", ioCapMax, "err", rerr)
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, checkpointWait)
	defer cancel()
	var dirty int64
	for {
		var name string
		if err := c.QueryRowContext(wctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'").Scan(&name, &dirty); err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				break
			}
			return d.wrap(op+": read Innodb_buffer_pool_pages_dirty", err)
		}
		if dirty <= cleanPages {
			return nil
		}
		select {
		case <-wctx.Done():
		case <-time.After(checkpointPoll):
			continue
		}
		if ctx.Err() != nil {
			return d.wrap(op, ctx.Err())
		}
		break
	}
	return &dialect.Error{Class: dialect.ClassOther, Op: op,
		Err: fmt.Errorf("%d buffer pool pages still dirty after %v", dirty, checkpointWait)}
}

// baselineTables are the tables a baseline holds: the nine and the metadata.
func baselineTables() []string {
	names := make([]string, 0, len(tpcc.Tables)+1)
	// Largest first, so that the two copy workers finish together.
	for _, t := range []tpcc.Table{tpcc.OrderLine, tpcc.Stock, tpcc.Customer, tpcc.Orders, tpcc.History,
		tpcc.Item, tpcc.NewOrderTable, tpcc.District, tpcc.Warehouse} {
		names = append(names, t.String())
	}
	return append(names, tpcc.MetaTable)
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func (d *DB) baselineName() (string, error) {
	name := d.dbName + baselineSuffix
	if len(name) > maxSchemaName {
		return "", &dialect.Error{Class: dialect.ClassOther, Op: "name the baseline schema",
			Err: fmt.Errorf("%q is longer than %d characters: use a shorter database name to reset between steps", name, maxSchemaName)}
	}
	return name, nil
}

// fingerprint reads the build fingerprint from the metadata table of
// schema (quoted), on a connection that is discarded afterwards (USE).
var _ dialect.BaselineSizer = (*DB)(nil)

// BaselineBytes is the data and index size of the database's tables,
// which the baseline copies.
func (d *DB) BaselineBytes(ctx context.Context) (int64, error) {
	var n int64
	err := d.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(data_length + index_length), 0)
		FROM information_schema.TABLES WHERE table_schema = DATABASE()`).Scan(&n)
	if err != nil {
		return 0, d.wrap("read the size of the database", err)
	}
	return n, nil
}

func (d *DB) fingerprint(ctx context.Context, schema string) (string, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = discard(c); _ = c.Close() }()
	if _, err := c.ExecContext(ctx, "USE "+schema); err != nil {
		return "", err
	}
	m, err := tpcc.ReadMeta(ctx, &conn{c: c})
	if err != nil {
		return "", err
	}
	return dialect.Fingerprint(m), nil
}

// baselineMark reads the mark of schema base: exists is false when there
// is no such schema, marked false when it has no mark.
func (d *DB) baselineMark(ctx context.Context, base string) (m dialect.BaselineMark, exists, marked bool, err error) {
	var schemas, tables int
	err = d.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?),
		(SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?)`,
		base, base, baselineMarkTable).Scan(&schemas, &tables)
	if err != nil || schemas == 0 || tables == 0 {
		return m, schemas > 0, false, err
	}
	var marks []string
	rows, err := d.db.QueryContext(ctx, "SELECT mark FROM "+quoteIdent(base)+"."+baselineMarkTable)
	if err != nil {
		return m, true, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return m, true, false, err
		}
		marks = append(marks, s)
	}
	if err := rows.Err(); err != nil {
		return m, true, false, err
	}
	if len(marks) != 1 {
		return m, true, false, nil
	}
	m, marked = dialect.ParseBaselineMark(marks[0])
	return m, true, marked, nil
}

// SaveBaseline copies the tables into <db>_oltplab_base, replacing an
// older baseline of oltplab's (never a schema of that name without its
// mark).
func (d *DB) SaveBaseline(ctx context.Context) error {
	const op = "save baseline"
	base, err := d.baselineName()
	if err != nil {
		return err
	}
	fp, err := d.fingerprint(ctx, quoteIdent(d.dbName))
	if err != nil {
		return d.wrap(op+": read build metadata", err)
	}
	_, exists, marked, err := d.baselineMark(ctx, base)
	if err != nil {
		return d.wrap(op+": look up the old baseline", err)
	}
	if exists && !marked {
		return dialect.NotOurs(op, "database "+base, "not replaced; rename it, or drop it yourself if it is yours to lose")
	}
	src, dst := quoteIdent(d.dbName), quoteIdent(base)
	var stmts []string
	if exists {
		stmts = append(stmts, "DROP DATABASE "+dst)
	}
	stmts = append(stmts, "CREATE DATABASE "+dst, "CREATE TABLE "+dst+"."+baselineMarkTable+" (mark VARCHAR(255) NOT NULL)")
	for _, q := range stmts {
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			return d.notPermitted(op+": create schema "+base, "the baseline schema needs CREATE and DROP privileges", err)
		}
	}
	mark := dialect.NewBaselineMark(fp).String()
	if _, err := d.db.ExecContext(ctx, "INSERT INTO "+dst+"."+baselineMarkTable+" VALUES (?)", mark); err != nil {
		return d.notPermitted(op+": mark schema "+base, "the baseline schema needs CREATE and INSERT privileges", err)
	}
	return d.copyTables(ctx, op, func(t string) []string {
		return []string{
			"CREATE TABLE " + dst + "." + t + " LIKE " + src + "." + t,
			"INSERT INTO " + dst + "." + t + " SELECT * FROM " + src + "." + t,
		}
	})
}

// Reset truncates every table, copies the baseline back and refreshes the
// statistics as a build does: InnoDB would otherwise plan the next queries
// on the statistics of the empty tables TRUNCATE left until its background
// recalculation catches up (the clause 3.3.2 checks took minutes).
func (d *DB) Reset(ctx context.Context) error {
	const op = "reset to baseline"
	base, err := d.baselineName()
	if err != nil {
		return err
	}
	_, exists, marked, err := d.baselineMark(ctx, base)
	if err != nil {
		return d.wrap(op+": look up the baseline", err)
	}
	if !exists {
		return &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
			Err: fmt.Errorf("%w (schema %s does not exist)", dialect.ErrNoBaseline, base)}
	}
	if !marked {
		return dialect.NotOurs(op, "database "+base, "not copied back; rename it, or drop it yourself if it is yours to lose")
	}
	src, dst := quoteIdent(base), quoteIdent(d.dbName)
	baseFP, err := d.fingerprint(ctx, src)
	if err != nil {
		return d.wrap(op+": read the baseline's build metadata", err)
	}
	fp, err := d.fingerprint(ctx, dst)
	if err != nil {
		return d.wrap(op+": read build metadata", err)
	}
	if err := dialect.CheckFingerprint(op, fp, baseFP); err != nil {
		return err
	}
	err = d.copyTables(ctx, op, func(t string) []string {
		return []string{
			"TRUNCATE TABLE " + dst + "." + t,
			"INSERT INTO " + dst + "." + t + " SELECT * FROM " + src + "." + t,
		}
	})
	if err != nil {
		return err
	}
	return d.Analyze(ctx)
}

// DropBaseline drops the baseline schema, if there is one and it carries
// oltplab's mark.
func (d *DB) DropBaseline(ctx context.Context) error {
	const op = "drop baseline"
	base, err := d.baselineName()
	if err != nil {
		return err
	}
	_, exists, marked, err := d.baselineMark(ctx, base)
	if err != nil {
		return d.wrap(op+": look up the baseline", err)
	}
	if !exists {
		return nil
	}
	if !marked {
		return dialect.NotOurs(op, "database "+base, "not dropped; drop it yourself if it is yours to lose")
	}
	if _, err := d.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(base)); err != nil {
		return d.notPermitted(op, "dropping the baseline schema needs the DROP privilege", err)
	}
	return nil
}

// copyTables runs, per baseline table, the statements stmts gives, on
// copyWorkers connections of their own (discarded afterwards: they change
// session settings).
func (d *DB) copyTables(ctx context.Context, op string, stmts func(table string) []string) error {
	next := make(chan string, len(baselineTables()))
	for _, t := range baselineTables() {
		next <- t
	}
	close(next)
	g, gctx := errgroup.WithContext(ctx)
	for range copyWorkers {
		g.Go(func() error {
			c, err := d.db.Conn(gctx)
			if err != nil {
				return d.wrap(op+": connect", err)
			}
			defer func() { _ = discard(c); _ = c.Close() }()
			// No unique or foreign key checks on rows that were checked when
			// they were loaded; TRUNCATE waits for sessions at most this long.
			if _, err := c.ExecContext(gctx, "SET SESSION unique_checks = 0, foreign_key_checks = 0, lock_wait_timeout = "+
				strconv.Itoa(resetLockWait)); err != nil {
				return d.wrap(op+": session settings", err)
			}
			for t := range next {
				for _, q := range stmts(t) {
					if _, err := c.ExecContext(gctx, q); err != nil {
						return d.notPermitted(op+": copy table "+t, "copying needs CREATE, INSERT, SELECT and DROP on both schemas", err)
					}
				}
			}
			return nil
		})
	}
	return g.Wait()
}

var _ dialect.Syncer = (*DB)(nil)

// maxSyncWait bounds how long SyncCommitted waits for InnoDB's timed log
// flush.
const maxSyncWait = 30 * time.Second

// SyncCommitted returns once every commit before the call survives a
// crash of the server. With innodb_flush_log_at_trx_commit = 1 or 3 each
// commit was flushed before it returned; with 2 it was written to the
// operating system, which keeps it when the server dies (not when the
// machine does). With 0 InnoDB writes and flushes its log once every
// innodb_flush_log_at_timeout seconds (both are global settings, not
// oltplab's to change on a user's server), so it waits one such period and
// a margin.
func (d *DB) SyncCommitted(ctx context.Context) error {
	const op = "sync commits"
	var mode, period int64
	if err := d.db.QueryRowContext(ctx, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.innodb_flush_log_at_timeout").Scan(&mode, &period); err != nil {
		return d.wrap(op, err)
	}
	if mode != 0 {
		return nil
	}
	wait := time.Duration(period)*time.Second + 500*time.Millisecond
	if wait > maxSyncWait {
		return &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: fmt.Errorf("innodb_flush_log_at_trx_commit = 0 and innodb_flush_log_at_timeout = %d s: the build's last commits may not be on disk yet", period)}
	}
	select {
	case <-time.After(wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
