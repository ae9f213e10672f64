package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Per-step hygiene (dialect.Checkpointer, dialect.Resetter).
//
// Checkpoint is PRAGMA wal_checkpoint(TRUNCATE): the WAL is copied into the
// database file, synced and truncated to zero bytes.
//
// The baseline is a byte copy of the database file, <file>.oltplab-base,
// taken after a TRUNCATE checkpoint (so the file holds every commit) with
// the write lock held. Reset closes the pool's connections (all must be
// idle: the caller closed its sessions), removes the WAL and shared-memory
// files, puts a copy of the baseline in place by rename, and lets the pool
// reopen connections on demand. The file copy uses copy_file_range where
// the kernel offers it (a reflink on XFS and btrfs).
var (
	_ dialect.Checkpointer = (*Database)(nil)
	_ dialect.Resetter     = (*Database)(nil)
)

const (
	baselineSuffix = ".oltplab-base"
	// poolIdle is database/sql's default MaxIdleConns, which Open keeps.
	poolIdle = 2
)

// Checkpoint copies the WAL into the database file and truncates the WAL.
func (d *Database) Checkpoint(ctx context.Context) error {
	const op = "checkpoint"
	c, err := d.conn(ctx, op)
	if err != nil {
		return err
	}
	defer c.Close()
	return d.checkpoint(ctx, op, c)
}

func (d *Database) checkpoint(ctx context.Context, op string, c *sql.Conn) error {
	var busy, logPages, done int64
	if err := c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &done); err != nil {
		return d.wrap(op, err)
	}
	if busy != 0 {
		return &dialect.Error{Class: dialect.ClassLockTimeout, Op: op,
			Err: fmt.Errorf("checkpoint incomplete: other connections held the database (%d of %d WAL pages copied)", done, logPages)}
	}
	return nil
}

func (d *Database) baselinePath() string { return d.path + baselineSuffix }

var _ dialect.BaselineSizer = (*Database)(nil)

// BaselineBytes is the size of the database file and its WAL, which the
// baseline copies.
func (d *Database) BaselineBytes(context.Context) (int64, error) {
	var n int64
	for _, f := range []string{d.path, d.path + "-wal"} {
		fi, err := os.Stat(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("size of %s: %w", f, err)
		}
		n += fi.Size()
	}
	return n, nil
}

// fingerprintOf reads the build fingerprint of the database file at path,
// read-only and without locking (the file is not being written).
func fingerprintOf(ctx context.Context, path string) (string, error) {
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=ro&immutable=1")
	if err != nil {
		return "", err
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	m, err := tpcc.ReadMeta(ctx, newConn(c, false))
	if err != nil {
		return "", err
	}
	return dialect.Fingerprint(m), nil
}

// SaveBaseline checkpoints the WAL and copies the database file to
// <file>.oltplab-base while holding the write lock.
func (d *Database) SaveBaseline(ctx context.Context) error {
	const op = "save baseline"
	c, err := d.conn(ctx, op)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := tpcc.ReadMeta(ctx, newConn(c, false)); err != nil {
		return d.wrap(op+": read build metadata", err)
	}
	if err := d.checkpoint(ctx, op, c); err != nil {
		return err
	}
	// With the write lock no commit can reach the WAL, which the checkpoint
	// emptied: the database file alone is the whole database.
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return d.wrap(op+": take the write lock", err)
	}
	defer func() { _, _ = c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") }()
	if fi, err := os.Stat(d.path + "-wal"); err == nil && fi.Size() > 0 {
		return &dialect.Error{Class: dialect.ClassLockTimeout, Op: op,
			Err: errors.New("a commit reached the WAL after the checkpoint: close sessions before saving a baseline")}
	}
	if err := copyFileSynced(d.path, d.baselinePath()); err != nil {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	return nil
}

// Reset puts a copy of the baseline file in place of the database file.
func (d *Database) Reset(ctx context.Context) error {
	const op = "reset to baseline"
	baseFP, err := fingerprintOf(ctx, d.baselinePath())
	if _, serr := os.Stat(d.baselinePath()); errors.Is(serr, fs.ErrNotExist) {
		return &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
			Err: fmt.Errorf("%w (no file %s)", dialect.ErrNoBaseline, d.baselinePath())}
	}
	if err != nil {
		return d.wrap(op+": read the baseline's build metadata", err)
	}
	c, err := d.conn(ctx, op)
	if err != nil {
		return err
	}
	m, err := tpcc.ReadMeta(ctx, newConn(c, false))
	c.Close()
	if err != nil {
		return d.wrap(op+": read build metadata", err)
	}
	if err := dialect.CheckFingerprint(op, dialect.Fingerprint(m), baseFP); err != nil {
		return err
	}

	// Close every pooled connection; one still in use is the caller's.
	d.db.SetMaxIdleConns(-1)
	defer d.db.SetMaxIdleConns(poolIdle)
	if n := d.db.Stats().OpenConnections; n > 0 {
		return &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: fmt.Errorf("%d connections of the database are still in use: close sessions before a reset", n)}
	}
	tmp := d.path + ".oltplab-reset"
	if err := copyFileSynced(d.baselinePath(), tmp); err != nil {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	// The WAL and its index belong to the old file: a WAL left beside the
	// new file would be replayed into it.
	for _, f := range []string{d.path + "-wal", d.path + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(tmp)
			return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("remove %s: %w", f, err)}
		}
	}
	if err := os.Rename(tmp, d.path); err != nil {
		_ = os.Remove(tmp)
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("put the baseline in place: %w", err)}
	}
	return nil
}

// DropBaseline removes the baseline file, if there is one.
func (d *Database) DropBaseline(ctx context.Context) error {
	if err := os.Remove(d.baselinePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &dialect.Error{Class: dialect.ClassOther, Op: "drop baseline", Err: err}
	}
	return nil
}

// copyFile copies src to a new file dst (replaced if present) and syncs it.
func copyFileSynced(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".*")
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return fmt.Errorf("copy %s to %s: %w", src, tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp.Name(), dst, err)
	}
	return nil
}
