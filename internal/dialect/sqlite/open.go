// Package sqlite is oltplab's embedded SQLite dialect (modernc.org/sqlite,
// pure Go, through database/sql): the zero-setup default target
// `sqlite:PATH`. It owns the SQLite DDL, the bulk loader, the client-side
// session adapter, the error classifier, the settings recorded with
// results, and the TPC-H tables, loader, sessions and query flavor
// (tpch.go).
//
// It imports dialect, tpcc and tpch: never another dialect package,
// driver, load, store or cli.
package sqlite

// SQLite differs from the server dialects in ways shared code sees only as
// data (Capabilities):
//   - no stored procedures: only dialect.StyleClientSQL (Caps.Procedures false);
//   - one writer at a time: the load runs on one connection
//     (Caps.MaxLoadWorkers 1) and sessions begin their write transactions
//     IMMEDIATE, so that two virtual users never deadlock on a lock upgrade;
//     a virtual user waiting for the write lock waits up to busy_timeout and
//     then fails with SQLITE_BUSY, classified as a retryable lock timeout;
//   - no exact decimal type: money is REAL (binary floating point), so sums
//     of money in the consistency checks (clause 3.3.2) are compared with
//     Caps.MoneyTolerance = 0.005, half a cent;
//   - no server counters: the dialect does not implement dialect.TxCounter.
//
// Timestamps are stored as TEXT 'YYYY-MM-DD HH:MM:SS' (the driver's
// _time_format=datetime on every connection formats time.Time arguments so)
// in columns declared TIMESTAMP, which the driver scans back into time.Time.
//
// The database file is created only by build (DropSchema, CreateTables);
// every other operation on a missing file fails with a *dialect.Error of
// class ClassUndefinedObject ("no such database file"), so that `run` on a
// mistyped path does not silently create an empty database.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

func init() { dialect.Register("sqlite", Open) }

// Connection settings. Every pooled connection gets them from its DSN, so
// no connection can miss one.
const (
	// busyTimeoutMillis is how long a connection waits for a lock held by
	// another connection before SQLITE_BUSY (ClassLockTimeout, retried).
	busyTimeoutMillis = 30000
	// runSynchronous: in WAL mode NORMAL syncs the WAL at checkpoints only;
	// a power loss may lose the last commits but never corrupts the file.
	runSynchronous = "normal"
	// loadSynchronous: the load connection does not sync at all. A crash
	// during build may corrupt the file; a failed build is rebuilt with
	// `oltplab build --drop` anyway.
	loadSynchronous = "off"
	// loadCacheKiB is the page cache of the load and index connections.
	loadCacheKiB = 256 << 10
	// mmapBytes is the largest mmap_size SQLite accepts by default
	// (SQLITE_MAX_MMAP_SIZE, just under 2 GiB).
	mmapBytes = 0x7fff0000
	// walAutocheckpointPages: checkpoint when the WAL holds this many pages (40 MB).
	walAutocheckpointPages = 10000
)

// runExtra are the settings of the run connections (the pool) only; the
// load and DDL connections, which grow the file, do without them (mmap
// made the load three times slower).
var runExtra = "" +
	// Reads come straight from the OS page cache, shared by every
	// connection, instead of through pread into a private page cache.
	"&_pragma=mmap_size(" + strconv.Itoa(mmapBytes) + ")" +
	// Fewer, larger checkpoints: each costs two fsyncs under synchronous=NORMAL.
	"&_pragma=wal_autocheckpoint(" + strconv.Itoa(walAutocheckpointPages) + ")"

// Database is one SQLite database file. It implements dialect.Database.
type Database struct {
	path string  // absolute file path
	db   *sql.DB // mode=rw pool: never creates the file
	// writeGate admits one session write transaction at a time (session.go).
	writeGate chan struct{}
}

var (
	_ dialect.Database  = (*Database)(nil)
	_ dialect.DataDirer = (*Database)(nil)
)

// Open opens the database file a sqlite: target names, without creating it
// (build creates it in DropSchema/CreateTables). It fails when the target
// is malformed or the directory of the file does not exist.
func Open(ctx context.Context, t dialect.Target) (dialect.Database, error) {
	const op = "open sqlite database"
	p, err := targetPath(t)
	if err != nil {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("resolve %q: %w", p, err)}
	}
	dir := filepath.Dir(abs)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = fmt.Errorf("%s is not a directory", dir)
		}
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: &marked{msg: fmt.Sprintf("the directory of database file %s does not exist: %v", abs, err), mark: dialect.ErrNoDatabase, err: err}}
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: &marked{msg: abs + " is a directory, not a database file", mark: dialect.ErrBadTarget}}
	}
	extra, err := runSettings(t)
	if err != nil {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	db, err := sql.Open("sqlite", dsn(abs, "rw", runSynchronous, extra))
	if err != nil {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	return &Database{path: abs, db: db, writeGate: make(chan struct{}, 1)}, nil
}

// runSettings are the settings of the run connections for a target:
// runExtra, or, with sqlite:PATH?cache_size=N (PRAGMA cache_size: pages,
// or KiB when negative; managed instances pass their memory so), that page
// cache on every connection and no mmap, so that reads beyond the cache
// go to the file (through the OS page cache) as they would on a server
// with that buffer pool. No other parameter is accepted.
func runSettings(t dialect.Target) (string, error) {
	if t.URL == nil || t.URL.RawQuery == "" {
		return runExtra, nil
	}
	q, err := url.ParseQuery(t.URL.RawQuery)
	if err != nil {
		return "", fmt.Errorf("sqlite target %q: bad parameters: %w", t.String(), err)
	}
	for k := range q {
		if k != "cache_size" {
			return "", fmt.Errorf("sqlite target %q: unknown parameter %q (want sqlite:PATH or sqlite:PATH?cache_size=N)", t.String(), k)
		}
	}
	n, err := strconv.ParseInt(q.Get("cache_size"), 10, 64)
	if err != nil || len(q["cache_size"]) != 1 {
		return "", fmt.Errorf("sqlite target %q: cache_size wants one integer (pages, or -KiB)", t.String())
	}
	return "&_pragma=cache_size(" + strconv.FormatInt(n, 10) + ")" +
		"&_pragma=mmap_size(0)" +
		"&_pragma=wal_autocheckpoint(" + strconv.Itoa(walAutocheckpointPages) + ")", nil
}

// targetPath returns the file named by sqlite:./x.db, sqlite:x.db,
// sqlite:/abs/x.db or sqlite:///abs/x.db.
func targetPath(t dialect.Target) (string, error) {
	u := t.URL
	if u == nil {
		return "", errors.New("no sqlite target given (want sqlite:PATH)")
	}
	if u.Host != "" {
		return "", fmt.Errorf("sqlite target %q names a host: want sqlite:PATH or sqlite:///ABSOLUTE/PATH", t.String())
	}
	if u.Fragment != "" {
		return "", fmt.Errorf("sqlite target %q has a fragment: want sqlite:PATH", t.String())
	}
	if _, err := runSettings(t); err != nil {
		return "", err
	}
	p := u.Path
	if u.Opaque != "" {
		var err error
		if p, err = url.PathUnescape(u.Opaque); err != nil {
			return "", fmt.Errorf("sqlite target %q: bad escape in path: %w", t.String(), err)
		}
	}
	if p == "" {
		return "", errors.New("sqlite target has no file path (want sqlite:PATH)")
	}
	return p, nil
}

// dsn is the modernc.org/sqlite DSN of path. mode is SQLite's URI mode:
// "rw" never creates the file, "rwc" does. extra is appended as more
// query parameters ("&_pragma=...").
func dsn(path, mode, synchronous, extra string) string {
	var b strings.Builder
	b.WriteString("file:")
	b.WriteString(uriPath(path))
	b.WriteString("?mode=")
	b.WriteString(mode)
	// BeginTx starts BEGIN IMMEDIATE; the sessions issue BEGIN IMMEDIATE
	// themselves (session.go).
	b.WriteString("&_txlock=immediate")
	b.WriteString("&_time_format=datetime")
	b.WriteString("&_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMillis) + ")")
	b.WriteString("&_pragma=journal_mode(wal)")
	b.WriteString("&_pragma=synchronous(" + synchronous + ")")
	b.WriteString("&_pragma=foreign_keys(off)")
	b.WriteString(extra)
	return b.String()
}

// uriPath escapes the characters that end or escape the path part of an
// SQLite URI filename (https://www.sqlite.org/uri.html).
func uriPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// DataDir is the directory of the database file.
func (d *Database) DataDir(context.Context) (string, error) { return filepath.Dir(d.path), nil }

// Name implements dialect.Database.
func (d *Database) Name() string { return "sqlite" }

// Caps implements dialect.Database.
func (d *Database) Caps() dialect.Capabilities {
	return dialect.Capabilities{
		Procedures:     false,
		MaxLoadWorkers: 1,     // one writer at a time
		MoneyTolerance: 0.005, // REAL money: half a cent
		Embedded:       true,
		MaxSessions:    MaxSessions,
	}
}

// MaxSessions bounds the sessions of one run: SQLite lets one writer in
// at a time, so beyond a few dozen sessions more only queue on its lock,
// and each open session holds about two file descriptors (1.9 measured
// over 20 sessions), so 256 stay well under the common limit of 1,024.
const MaxSessions = 256

// marked is an error that says msg and is its mark (dialect.ErrNoDatabase,
// dialect.ErrBadTarget) for the exit code, without saying the mark's own
// words, which speak of servers.
type marked struct {
	msg       string
	mark, err error
}

func (e *marked) Error() string   { return e.msg }
func (e *marked) Unwrap() []error { return []error{e.mark, e.err} }

// Close implements dialect.Database.
func (d *Database) Close() error { return d.db.Close() }

// exists reports whether the database file exists; a missing file is a
// *dialect.Error of class ClassUndefinedObject.
func (d *Database) exists(op string) error {
	_, err := os.Stat(d.path)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
			Err: fmt.Errorf("no such database file %s (build it first): %w", d.path, fs.ErrNotExist)}
	}
	return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("stat database file: %w", err)}
}

// fileExists reports whether the database file exists.
func (d *Database) fileExists() (bool, error) {
	err := d.exists("")
	if err == nil {
		return true, nil
	}
	if dialect.ClassOf(err) == dialect.ClassUndefinedObject {
		return false, nil
	}
	return false, err
}

// wrap classifies err for an administrative operation.
func (d *Database) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var de *dialect.Error
	if errors.As(err, &de) {
		return err
	}
	c := classify(err)
	if isNotADB(err) {
		// Another program's file: the target names the wrong file.
		err = &marked{msg: fmt.Sprintf("%s is not an SQLite database file (%v): name a database oltplab built, or a new file for build",
			d.path, err), mark: dialect.ErrBadTarget, err: err}
	}
	return &dialect.Error{Class: c, Op: op, Err: err}
}

// conn takes a dedicated connection from the pool after checking that the
// file exists.
func (d *Database) conn(ctx context.Context, op string) (*sql.Conn, error) {
	if err := d.exists(op); err != nil {
		return nil, err
	}
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap(op, err)
	}
	return c, nil
}

// Connect implements dialect.Database.
func (d *Database) Connect(ctx context.Context) (dialect.Conn, error) {
	c, err := d.conn(ctx, "connect")
	if err != nil {
		return nil, err
	}
	return newConn(c, false), nil
}

// Snapshot implements dialect.Database: a deferred read transaction on a
// dedicated connection. In WAL mode every read of it sees the snapshot
// taken at its first read (clause 3.3.2 checks see one consistent state).
func (d *Database) Snapshot(ctx context.Context, fn func(q tpcc.Querier) error) error {
	c, err := d.conn(ctx, "snapshot")
	if err != nil {
		return err
	}
	q := newConn(c, false)
	defer q.Close()
	if _, err := c.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return d.wrap("snapshot: begin", err)
	}
	ferr := fn(q)
	end := "COMMIT"
	if ferr != nil {
		end = "ROLLBACK"
	}
	if _, err := c.ExecContext(context.WithoutCancel(ctx), end); err != nil && ferr == nil {
		return d.wrap("snapshot: commit", err)
	}
	return ferr
}

// HasTable implements dialect.Database. A missing file has no table: build
// asks before it creates the file.
func (d *Database) HasTable(ctx context.Context, name string) (bool, error) {
	ok, err := d.fileExists()
	if err != nil || !ok {
		return false, err
	}
	var n int64
	err = d.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", name).Scan(&n)
	if err != nil {
		return false, d.wrap("look up table "+name, err)
	}
	return n > 0, nil
}
