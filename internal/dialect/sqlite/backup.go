package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	msqlite "modernc.org/sqlite"

	"github.com/oltplab/oltplab/internal/dialect"
)

var _ dialect.OnlineBackuper = (*Database)(nil)

// backupStepPages is how many pages one step of an online backup copies
// (16 MiB at the default 4 KiB page size): the context is checked between
// steps, and each step holds the source's read lock only while it runs.
const backupStepPages = 4096

// OnlineBackup implements dialect.OnlineBackuper with SQLite's online
// backup API (sqlite3_backup_step): the copy is of one consistent moment
// (a step that sees the source changed by another connection starts the
// copy over), and the destination is committed, and synced, by SQLite
// itself when the last step is done.
func (d *Database) OnlineBackup(ctx context.Context, dst string) (_ int64, err error) {
	const op = "online backup"
	if _, err := os.Lstat(dst); err == nil {
		return 0, &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("%s already exists", dst)}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, &dialect.Error{Class: dialect.ClassOther, Op: op, Err: err}
	}
	if _, err := os.Stat(d.path); err != nil {
		return 0, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op, Err: fmt.Errorf("no such database file %s", d.path)}
	}
	defer func() {
		if err != nil {
			for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
				_ = os.Remove(dst + suffix)
			}
		}
	}()
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return 0, d.wrap(op, err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		src, ok := dc.(interface {
			NewBackup(string) (*msqlite.Backup, error)
		})
		if !ok {
			return fmt.Errorf("the driver connection (%T) offers no backup", dc)
		}
		bk, err := src.NewBackup("file:" + uriPath(dst) + "?mode=rwc")
		if err != nil {
			return err
		}
		for more := true; more; {
			if err := ctx.Err(); err != nil {
				_ = bk.Finish()
				return err
			}
			if more, err = bk.Step(backupStepPages); err != nil {
				_ = bk.Finish()
				return err
			}
		}
		return bk.Finish()
	})
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, d.wrap(op, err)
	}
	fi, err := os.Stat(dst)
	if err != nil {
		return 0, d.wrap(op, err)
	}
	return fi.Size(), nil
}
