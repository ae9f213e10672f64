package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

var (
	// ErrUnwritable: the store file cannot be created or written (missing
	// directory, no permission, read-only file system), or the PostgreSQL
	// user may not create or write the store's tables.
	ErrUnwritable = errors.New("results store is not writable")
	// ErrNewerSchema: the store was written by a newer oltplab. It is left
	// untouched.
	ErrNewerSchema = errors.New("results store was written by a newer oltplab")
	// ErrNotStore: the file is not an oltplab results store (not SQLite, or
	// a SQLite database of something else, such as a TPC-C database), or
	// the PostgreSQL schema holds other tables.
	ErrNotStore = errors.New("not an oltplab results store")
	// ErrNotFound: no run or profile with that id or label.
	ErrNotFound = errors.New("not found")
	// ErrFinished: FinishRun or FinishProfile on something already finished.
	ErrFinished = errors.New("already finished")
	// ErrSecretInTarget: CreateRun got a target that still holds a password.
	ErrSecretInTarget = errors.New("target holds a password; redact it before storing")
	// ErrDamaged: the file is a damaged SQLite database (its integrity
	// check fails), PostgreSQL reports damaged data, or a stored value is
	// not what was written. Nothing is written to it.
	ErrDamaged = errors.New("results store is damaged")
	// ErrBusy: another process held the store locked for longer than a
	// writer waits (SQLITE_BUSY; PostgreSQL's lock timeout, deadlock or
	// serialization failure).
	ErrBusy = errors.New("results store is locked by another process")
	// ErrUnavailable: the PostgreSQL server holding the store cannot be
	// reached, or the connection to it was lost.
	ErrUnavailable = errors.New("results store server cannot be reached")
)

// busyTimeout is how long a writer waits for another process's write
// transaction (or, in PostgreSQL, for a row or table lock) before giving up
// with ErrBusy.
const busyTimeout = 15 * time.Second

// openLockTimeout bounds the wait for another process that is creating or
// migrating the store (lockDir; PostgreSQL's advisory lock).
const openLockTimeout = 2 * time.Minute

// timeLayout is RFC 3339 in UTC with a fixed nine-digit fraction, so stored
// times sort as text. time.RFC3339Nano parses it.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Store is an open results store. It is safe for concurrent use.
type Store struct {
	db     *db
	b      backend
	now    func() time.Time // injected in tests
	writer Writer           // this process, recorded with what it creates
	toRead bool             // opened by OpenToRead
	// savedKey tags the files results are saved to (key.go); read when
	// the store is opened for writing.
	savedKey []byte

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
	d, err := DataDir(getenv)
	if err != nil {
		return "", false, fmt.Errorf("locate default results store: no $OLTPLAB_RESULTS, %w", err)
	}
	return filepath.Join(d, "results.db"), true, nil
}

// DataDir is oltplab's data directory: $XDG_DATA_HOME/oltplab, else
// $HOME/.local/share/oltplab. It may not exist yet.
func DataDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "oltplab"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("$XDG_DATA_HOME or home directory: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "oltplab"), nil
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
// directory) and bringing its schema up to date. A path that is a
// postgres:// or postgresql:// URL opens a store in that PostgreSQL
// database instead (postgres.go), in the schema the connection's
// search_path selects. A missing or unwritable directory or file gives an
// error wrapping ErrUnwritable; a store from a newer oltplab gives
// ErrNewerSchema and a damaged one ErrDamaged, and neither is modified.
// Running runs whose process has ended on this host are marked abandoned.
//
// Opening is serialized between processes (lockDir; an advisory lock in
// PostgreSQL): a store that several processes create at once is created
// once, completely.
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

func open(ctx context.Context, location string, busy time.Duration, toRead bool) (*Store, error) {
	if location == "" {
		return nil, errors.New("open results store: empty path")
	}
	var (
		b      backend
		pool   *sql.DB
		unlock func()
		err    error
	)
	if IsPostgresURL(location) {
		b, pool, unlock, err = openPostgres(ctx, location, busy)
	} else {
		b, pool, unlock, err = openSQLite(ctx, location, busy)
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	s := &Store{db: &db{pool: pool, b: b}, b: b, now: time.Now, writer: currentWriter(), toRead: toRead,
		runs: map[int64]Run{}, profiles: map[int64]Profile{}}
	if err := s.migrate(ctx); err != nil {
		s.close()
		return nil, fmt.Errorf("open results store %s: %w", b.location(), s.classify(err))
	}
	if toRead {
		return s, nil
	}
	if err := s.readSavedKey(ctx); err != nil {
		s.close()
		return nil, fmt.Errorf("open results store %s: %w", b.location(), s.classify(err))
	}
	if err := s.markAbandoned(ctx); err != nil {
		s.close()
		return nil, fmt.Errorf("open results store %s: %w", b.location(), s.classify(err))
	}
	return s, nil
}

// classify maps the backend's errors to this package's sentinels.
func (s *Store) classify(err error) error {
	if err == nil {
		return nil
	}
	return s.b.classify(err)
}

// Path is where the store is, as the user may see it: the absolute path of
// its file, or its PostgreSQL URL without a password.
func (s *Store) Path() string { return s.b.location() }

// Close closes the store.
func (s *Store) Close() error {
	if err := s.close(); err != nil {
		return fmt.Errorf("close results store %s: %w", s.Path(), s.classify(err))
	}
	return nil
}

func (s *Store) close() error { return s.db.Close() }

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
