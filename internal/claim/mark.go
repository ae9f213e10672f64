package claim

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// MarkFile is the file that marks a directory as oltplab's: JSON holding
// the directory's kind and a random id (Mark). oltplab writes it when it
// creates or takes the directory; without it (or with another id) the
// directory is not oltplab's to reuse or remove.
const MarkFile = ".oltplab"

// Kind is what oltplab made a directory or file for.
type Kind string

const (
	// KindInstance is a managed instance's data_dir or wal_dir, which
	// later starts reuse.
	KindInstance Kind = "instance"
	// KindBackup is one backup cycle's directory (the backup in it).
	KindBackup Kind = "backup"
	// KindRestore is a backup restored into a directory of its own (a
	// managed instance's, for a server).
	KindRestore Kind = "restored copy"
	// KindTestFile is fio's test file (its name holds the id).
	KindTestFile Kind = "fio test file"
)

// Mark is oltplab's mark on something it created: what for, and an id
// no one else knows in advance, recorded in the results store beside
// the path so that a later oltplab removes exactly what it made.
type Mark struct {
	Kind    Kind      `json:"kind"`
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
}

// NewMark is a mark of kind k with a new random id.
func NewMark(k Kind) Mark {
	return Mark{Kind: k, ID: rand.Text(), Created: time.Now().UTC().Truncate(time.Second)}
}

// markJSON is the mark file's content: the mark, with a line for whoever
// finds it.
type markJSON struct {
	Note string `json:"oltplab"`
	Mark
}

const markNote = "this directory was created or taken by oltplab, which reuses or removes it; remove this file and oltplab leaves the directory alone"

// maxMarkBytes bounds what is read of a mark file.
const maxMarkBytes = 4096

// writeMark creates the mark file in the directory dirfd (never over an
// existing file, never through a link) and makes it durable.
func writeMark(dirfd int, m Mark) error {
	b, err := json.Marshal(markJSON{Note: markNote, Mark: m})
	if err != nil {
		return err
	}
	fd, err := unix.Openat(dirfd, MarkFile, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", MarkFile, err)
	}
	f := os.NewFile(uintptr(fd), MarkFile)
	defer f.Close()
	if err := unix.Fchmod(fd, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", MarkFile, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", MarkFile, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", MarkFile, err)
	}
	return unix.Fsync(dirfd)
}

// readMark reads the mark of the directory dirfd: ok false when it has no
// mark file. A mark file that is a link, not a regular file, or not a
// mark is an error.
func readMark(dirfd int) (m Mark, ok bool, err error) {
	fd, err := unix.Openat(dirfd, MarkFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("its %s is not oltplab's mark (%v)", MarkFile, err)
	}
	f := os.NewFile(uintptr(fd), MarkFile)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || !isReg(&st) {
		return m, false, fmt.Errorf("its %s is not a regular file", MarkFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMarkBytes))
	if err != nil {
		return m, false, fmt.Errorf("read its %s: %w", MarkFile, err)
	}
	var mj markJSON
	if err := json.Unmarshal(b, &mj); err != nil || mj.ID == "" || mj.Kind == "" {
		return m, false, fmt.Errorf("its %s is not oltplab's mark", MarkFile)
	}
	return mj.Mark, true, nil
}
