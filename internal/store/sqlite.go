package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// applicationID marks the SQLite file as an oltplab results store
// (PRAGMA application_id; "oltb").
const applicationID = 0x6f6c7462

// sqliteBackend is a store in one SQLite file (modernc.org/sqlite, pure
// Go), opened in WAL mode with a busy timeout and immediate write
// transactions, so that several processes can write to it at once.
type sqliteBackend struct {
	path string // absolute
}

var _ backend = sqliteBackend{}

// openSQLite opens the file at path (creating the file, never its
// directory). The returned unlock ends the serialization of openers
// (lockDir), to be called once the store is migrated.
func openSQLite(ctx context.Context, path string, busy time.Duration) (backend, *sql.DB, func(), error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	if err := checkDir(abs); err != nil {
		return nil, nil, nil, err
	}
	unlock, err := lockDir(ctx, filepath.Dir(abs), openLockTimeout)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open results store %s: %w", abs, err)
	}
	if err := checkWritable(abs); err != nil {
		unlock()
		return nil, nil, nil, err
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate") // writers take the lock up front: no upgrade deadlock
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String() + "?" + q.Encode()
	pool, err := sql.Open("sqlite", dsn)
	if err != nil {
		unlock()
		return nil, nil, nil, fmt.Errorf("open results store %s: %w", abs, err)
	}
	// One connection per process: the process's own writers queue in Go
	// instead of sleeping in SQLite's busy handler; other processes are
	// what busy_timeout is for. Nothing here holds rows open across calls.
	pool.SetMaxOpenConns(1)
	return sqliteBackend{path: abs}, pool, unlock, nil
}

// checkDir gives a clear ErrUnwritable for a missing directory.
func checkDir(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("results store %s: directory %s does not exist: %w", path, dir, ErrUnwritable)
	case err != nil:
		return fmt.Errorf("results store %s: %w: %w", path, ErrUnwritable, err)
	case !st.IsDir():
		return fmt.Errorf("results store %s: %s is not a directory: %w", path, dir, ErrUnwritable)
	}
	return nil
}

// checkWritable gives a clear ErrUnwritable before SQLite gives an opaque
// "unable to open database file". WAL mode also needs to create files next
// to the store, so the directory must be writable too.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	probe, err := os.CreateTemp(dir, ".oltplab-probe-*")
	if err != nil {
		return fmt.Errorf("results store %s: cannot create files in %s: %w: %w", path, dir, ErrUnwritable, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("results store %s: %w: %w", path, ErrUnwritable, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("results store %s: %w: %w", path, ErrUnwritable, err)
	}
	return nil
}

func (b sqliteBackend) location() string { return b.path }

// ddl: the migrations are written in SQLite's words.
func (sqliteBackend) ddl(stmt string) string { return stmt }

func (sqliteBackend) rebind(q string) string { return q }

// forUpdate: a write transaction (BEGIN IMMEDIATE) holds the whole file.
func (sqliteBackend) forUpdate() string { return "" }

func (sqliteBackend) setWait(d time.Duration) string {
	return fmt.Sprintf("PRAGMA busy_timeout = %d", max(d.Milliseconds(), 1))
}

func (sqliteBackend) checkVersion(ctx context.Context, q queryer) (int, error) {
	var appID int64
	if err := q.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return 0, fmt.Errorf("read application id: %w", err)
	}
	var hasMigrations, otherTables int
	if err := q.QueryRowContext(ctx, `SELECT
			count(*) FILTER (WHERE name = 'schema_migrations'),
			count(*) FILTER (WHERE name <> 'schema_migrations')
		FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`).
		Scan(&hasMigrations, &otherTables); err != nil {
		return 0, fmt.Errorf("list tables: %w", err)
	}
	if appID != applicationID && (appID != 0 || hasMigrations > 0 || otherTables > 0) {
		return 0, fmt.Errorf("%w: the SQLite file holds other data (application id %#x)", ErrNotStore, appID)
	}
	if hasMigrations == 0 {
		if otherTables > 0 {
			return 0, fmt.Errorf("%w: tables but no schema_migrations", ErrNotStore)
		}
		return 0, nil
	}
	return storedVersion(ctx, q)
}

// checkIntegrity runs SQLite's quick_check (the structure of every page
// and index, without comparing index content to tables) and turns a
// failure into ErrDamaged with the first problems it names.
func (sqliteBackend) checkIntegrity(ctx context.Context, c *dbConn) error {
	rows, err := c.QueryContext(ctx, `PRAGMA quick_check(3)`)
	if err != nil {
		return fmt.Errorf("check integrity: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return fmt.Errorf("check integrity: %w", err)
		}
		if msg != "ok" {
			problems = append(problems, msg)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check integrity: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w (integrity check: %s)", ErrDamaged, strings.Join(problems, "; "))
	}
	return nil
}

// prepare sets WAL mode: persistent in the file, a no-op when already
// WAL, and not allowed inside a transaction.
func (sqliteBackend) prepare(ctx context.Context, c *dbConn) error {
	var mode string
	if err := c.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return fmt.Errorf("set WAL mode: %w", err)
	}
	return nil
}

// lockMigration: BEGIN IMMEDIATE has taken the file's write lock, and
// lockDir serializes creation.
func (sqliteBackend) lockMigration(context.Context, *dbTx) error { return nil }

func (sqliteBackend) markStore(ctx context.Context, t *dbTx) error {
	if _, err := t.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)); err != nil {
		return fmt.Errorf("mark the file as a results store: %w", err)
	}
	return nil
}

// classify maps SQLite result codes (never message text) to our sentinels.
func (sqliteBackend) classify(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff { // primary result code
	case sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: %w", ErrNotStore, err)
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
		return fmt.Errorf("%w: %w", ErrUnwritable, err)
	case sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("%w: %w", ErrDamaged, err)
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	return err
}

// savedLocation: next to the store file, else the temporary directory.
func (b sqliteBackend) savedLocation() ([]string, string) {
	return []string{filepath.Dir(b.path), os.TempDir()}, filepath.Base(b.path)
}
