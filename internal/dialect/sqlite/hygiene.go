package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Per-step hygiene (dialect.Checkpointer, dialect.Resetter).
//
// Checkpoint is PRAGMA wal_checkpoint(TRUNCATE): the WAL is copied into the
// database file, synced and truncated to zero bytes.
//
// The baseline is a file of its own, <file>.oltplab-base: a header of
// baselineHeaderSize bytes holding oltplab's mark (dialect.BaselineMark:
// an id, when it was saved, the build's fingerprint), then a byte copy of
// the database file taken after a TRUNCATE checkpoint (so the file holds
// every commit) with the write lock held. Reset closes the pool's
// connections (all must be idle: the caller closed its sessions), removes
// the WAL and shared-memory files, puts a copy of the baseline's database
// bytes in place by rename, and lets the pool reopen connections on
// demand. The copies use copy_file_range where the kernel offers it (a
// reflink on XFS and btrfs: the header keeps the data block-aligned).
//
// Only a regular file carrying the mark is oltplab's: a file of that name
// without it (the user's, a plain copy of the database included) or a
// symbolic link is never replaced, read back or removed
// (dialect.ErrNotOurs). The baseline is opened with O_NOFOLLOW, created
// with O_EXCL under a new name and put in place by link (never over
// anything) or, replacing oltplab's own, by rename. A database file that
// is itself a symbolic link is refused: a reset would replace the link.
var (
	_ dialect.Checkpointer = (*Database)(nil)
	_ dialect.Resetter     = (*Database)(nil)
)

const (
	baselineSuffix = ".oltplab-base"
	// baselineHeaderSize is the size of the baseline file's header: the
	// mark, then NUL bytes.
	baselineHeaderSize = 4096
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

// openBaseline opens the baseline file for reading, without following a
// symbolic link, and reads its mark. found is false when there is no
// file; anything there that is not oltplab's is a dialect.NotOurs error of
// op, which then completes. On success the file is positioned after the
// header, at the database's bytes.
func (d *Database) openBaseline(op, then string) (f *os.File, m dialect.BaselineMark, found bool, err error) {
	p := d.baselinePath()
	// O_NONBLOCK: a FIFO planted there must not hang the open.
	f, err = os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, m, false, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, m, true, dialect.NotOurs(op, "file "+p+" (a symbolic link)", then)
	}
	if err != nil {
		return nil, m, true, &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	fail := func(err error) (*os.File, dialect.BaselineMark, bool, error) {
		f.Close()
		return nil, dialect.BaselineMark{}, true, err
	}
	if fi, err := f.Stat(); err != nil {
		return fail(&dialect.Error{Class: dialect.ClassOther, Op: op, Err: err})
	} else if !fi.Mode().IsRegular() {
		return fail(dialect.NotOurs(op, "file "+p+" (not a regular file)", then))
	}
	head := make([]byte, baselineHeaderSize)
	if _, err := io.ReadFull(f, head); err != nil {
		return fail(dialect.NotOurs(op, "file "+p, then))
	}
	text, _, _ := bytes.Cut(head, []byte{0})
	m, ok := dialect.ParseBaselineMark(string(text))
	if !ok {
		return fail(dialect.NotOurs(op, "file "+p, then))
	}
	return f, m, true, nil
}

// notSymlink refuses a database file that is a symbolic link.
func (d *Database) notSymlink(op string) error {
	if fi, err := os.Lstat(d.path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: fmt.Errorf("database file %s is a symbolic link: a reset would replace the link, not the file; give the file's own path", d.path)}
	}
	return nil
}

// SaveBaseline checkpoints the WAL and copies the database file, after
// the mark, to <file>.oltplab-base while holding the write lock. It
// replaces an older baseline of oltplab's, never anything else.
func (d *Database) SaveBaseline(ctx context.Context) error {
	const op = "save baseline"
	if err := d.notSymlink(op); err != nil {
		return err
	}
	old, _, replace, err := d.openBaseline(op, "not replaced; rename it, or remove it yourself if it is yours to lose")
	if err != nil {
		return err
	}
	if old != nil {
		old.Close()
	}
	c, err := d.conn(ctx, op)
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := tpcc.ReadMeta(ctx, newConn(c, false))
	if err != nil {
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
	src, err := os.OpenFile(d.path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	defer src.Close()
	head := make([]byte, baselineHeaderSize)
	copy(head, dialect.NewBaselineMark(dialect.Fingerprint(m)).String())
	tmp, err := copySynced(head, src, d.baselinePath())
	if err != nil {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	defer os.Remove(tmp) // fails harmlessly once linked or renamed
	if replace {
		// The old baseline was oltplab's (openBaseline checked it).
		err = os.Rename(tmp, d.baselinePath())
	} else {
		// Link, unlike rename, never replaces what may have appeared since.
		err = os.Link(tmp, d.baselinePath())
	}
	if err != nil {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("put the baseline in place: %w", err)}
	}
	return nil
}

// Reset puts a copy of the baseline's database bytes in place of the
// database file.
func (d *Database) Reset(ctx context.Context) error {
	const op = "reset to baseline"
	if err := d.notSymlink(op); err != nil {
		return err
	}
	base, mark, found, err := d.openBaseline(op, "not copied back; rename it, or remove it yourself if it is yours to lose")
	if err != nil {
		return err
	}
	if !found {
		return &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
			Err: fmt.Errorf("%w (no file %s)", dialect.ErrNoBaseline, d.baselinePath())}
	}
	defer base.Close()
	c, err := d.conn(ctx, op)
	if err != nil {
		return err
	}
	m, err := tpcc.ReadMeta(ctx, newConn(c, false))
	c.Close()
	if err != nil {
		return d.wrap(op+": read build metadata", err)
	}
	if err := dialect.CheckFingerprint(op, dialect.Fingerprint(m), mark.Fingerprint); err != nil {
		return err
	}

	// Close every pooled connection; one still in use is the caller's.
	d.db.SetMaxIdleConns(-1)
	defer d.db.SetMaxIdleConns(poolIdle)
	if n := d.db.Stats().OpenConnections; n > 0 {
		return &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: fmt.Errorf("%d connections of the database are still in use: close sessions before a reset", n)}
	}
	tmp, err := copySynced(nil, base, d.path)
	if err != nil {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	defer os.Remove(tmp) // fails harmlessly once renamed
	// The WAL and its index belong to the old file: a WAL left beside the
	// new file would be replayed into it.
	for _, f := range []string{d.path + "-wal", d.path + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("remove %s: %w", f, err)}
		}
	}
	if err := os.Rename(tmp, d.path); err != nil {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("put the baseline in place: %w", err)}
	}
	return nil
}

// DropBaseline removes the baseline file, if there is one and it carries
// oltplab's mark.
func (d *Database) DropBaseline(context.Context) error {
	const op = "drop baseline"
	f, _, found, err := d.openBaseline(op, "not removed; remove it yourself if it is yours to lose")
	if err != nil || !found {
		return err
	}
	f.Close()
	if err := os.Remove(d.baselinePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	return nil
}

// copySynced writes head, then the rest of src from its offset, to a new
// file beside dst (created with O_EXCL under a name of its own), syncs it
// and returns its name; the caller puts it in place.
func copySynced(head []byte, src *os.File, dst string) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", src.Name(), err)
	}
	fail := func(err error) (string, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if _, err := tmp.Write(head); err != nil {
		return fail(fmt.Errorf("write %s: %w", tmp.Name(), err))
	}
	if _, err := io.Copy(tmp, src); err != nil {
		return fail(fmt.Errorf("copy %s to %s: %w", src.Name(), tmp.Name(), err))
	}
	if err := tmp.Sync(); err != nil {
		return fail(fmt.Errorf("sync %s: %w", tmp.Name(), err))
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	return tmp.Name(), nil
}
