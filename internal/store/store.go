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
	"sync"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	// ErrUnwritable: the store file cannot be created or written (missing
	// directory, no permission, read-only file system).
	ErrUnwritable = errors.New("results store is not writable")
	// ErrNewerSchema: the store was written by a newer oltplab. It is left
	// untouched.
	ErrNewerSchema = errors.New("results store was written by a newer oltplab")
	// ErrNotStore: the file is not an oltplab results store (not SQLite, or
	// a SQLite database of something else, such as a TPC-C database).
	ErrNotStore = errors.New("not an oltplab results store")
	// ErrNotFound: no run or profile with that id or label.
	ErrNotFound = errors.New("not found")
	// ErrFinished: FinishRun or FinishProfile on something already finished.
	ErrFinished = errors.New("already finished")
	// ErrSecretInTarget: CreateRun got a target that still holds a password.
	ErrSecretInTarget = errors.New("target holds a password; redact it before storing")
	// ErrDamaged: the file is a damaged SQLite database (its integrity
	// check fails, or a stored value is not what was written). Nothing is
	// written to it.
	ErrDamaged = errors.New("results store is damaged")
	// ErrBusy: another process held the store locked for longer than a
	// writer waits (SQLITE_BUSY).
	ErrBusy = errors.New("results store is locked by another process")
)

// busyTimeout is how long a writer waits for another process's write
// transaction before giving up with SQLITE_BUSY.
const busyTimeout = 15 * time.Second

// openLockTimeout bounds the wait for another process that is creating or
// migrating the store (lockDir).
const openLockTimeout = 2 * time.Minute

// timeLayout is RFC 3339 in UTC with a fixed nine-digit fraction, so stored
// times sort as text. time.RFC3339Nano parses it.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Store is an open results store. It is safe for concurrent use.
type Store struct {
	db     *sql.DB
	path   string
	now    func() time.Time // injected in tests
	writer Writer           // this process, recorded with what it creates
	toRead bool             // opened by OpenToRead

	// What this process created, for the file a result is saved to when
	// the store cannot take it (durable.go).
	mu       sync.Mutex
	runs     map[int64]Run
	profiles map[int64]Profile
}

// DefaultPath is where the results store lives when the user names none:
// $OLTPLAB_RESULTS if set, else $XDG_DATA_HOME/oltplab/results.db, else
// $HOME/.local/share/oltplab/results.db. getenv reads the environment
// (os.Getenv when nil).
func DefaultPath(getenv func(string) string) (string, error) {
	p, _, err := defaultPath(getenv)
	return p, err
}

// defaultPath also reports whether the directory is ours to create (the
// XDG location), as opposed to one the user named in $OLTPLAB_RESULTS.
func defaultPath(getenv func(string) string) (path string, ownDir bool, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if p := getenv("OLTPLAB_RESULTS"); p != "" {
		return p, false, nil
	}
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "oltplab", "results.db"), true, nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", false, fmt.Errorf("locate default results store: no $OLTPLAB_RESULTS, $XDG_DATA_HOME or home directory: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "oltplab", "results.db"), true, nil
}

// OpenDefault opens (creating if needed) the store at DefaultPath,
// creating the XDG data directory when that is where it lives.
func OpenDefault(ctx context.Context, getenv func(string) string) (*Store, error) {
	path, err := PrepareDefault(getenv)
	if err != nil {
		return nil, err
	}
	return Open(ctx, path)
}

// PrepareDefault returns DefaultPath after creating the XDG data
// directory when that is where it lives (never the directory of a path the
// user named in $OLTPLAB_RESULTS).
func PrepareDefault(getenv func(string) string) (string, error) {
	path, ownDir, err := defaultPath(getenv)
	if err != nil {
		return "", err
	}
	if ownDir {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", fmt.Errorf("create results store directory %s: %w: %w", filepath.Dir(path), ErrUnwritable, err)
		}
	}
	return path, nil
}

// Open opens the results store at path, creating the file (never its
// directory) and bringing its schema up to date. A missing or unwritable
// directory or file gives an error wrapping ErrUnwritable; a store from a
// newer oltplab gives ErrNewerSchema and a damaged one ErrDamaged, and
// neither is modified. Running runs whose process has ended on this host
// are marked abandoned.
//
// Opening is serialized between processes (lockDir): a store that several
// processes create at once is created once, completely.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, busyTimeout, false)
}

// OpenToRead opens the store for a command that only reads it (lists,
// shows, exports, reports). It skips the integrity check, which reads the
// whole file (seconds for a store of a few hundred megabytes), unless the
// schema must be migrated, and writes nothing else: runs and profiles
// whose writer is gone read as abandoned without being marked. Damage is
// still found where it is read (ErrDamaged).
func OpenToRead(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, busyTimeout, true)
}

func open(ctx context.Context, path string, busy time.Duration, toRead bool) (*Store, error) {
	if path == "" {
		return nil, errors.New("open results store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	if err := checkDir(abs); err != nil {
		return nil, err
	}
	unlock, err := lockDir(ctx, filepath.Dir(abs), openLockTimeout)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", abs, err)
	}
	defer unlock()
	if err := checkWritable(abs); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate") // writers take the lock up front: no upgrade deadlock
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", abs, err)
	}
	// One connection per process: the process's own writers queue in Go
	// instead of sleeping in SQLite's busy handler; other processes are
	// what busy_timeout is for. Nothing here holds rows open across calls.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: abs, now: time.Now, writer: currentWriter(), toRead: toRead,
		runs: map[int64]Run{}, profiles: map[int64]Profile{}}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open results store %s: %w", abs, classify(err))
	}
	if toRead {
		return s, nil
	}
	if err := s.markAbandoned(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open results store %s: %w", abs, classify(err))
	}
	return s, nil
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

// classify maps SQLite result codes (never message text) to our sentinels.
func classify(err error) error {
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

// Path is the absolute path of the store file.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close results store %s: %w", s.path, err)
	}
	return nil
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

func nullTime(ns sql.NullString) (time.Time, error) {
	if !ns.Valid {
		return time.Time{}, nil
	}
	return parseTime(ns.String)
}
