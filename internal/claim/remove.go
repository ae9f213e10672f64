package claim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Remove removes what oltplab created at path and marked with m: a
// directory whose mark file holds m's id, with everything in it, or a
// regular file of oltplab's user whose name holds m's id. It follows no
// link and descends into no other mount; anything else there (a link, a
// directory without the mark or with another one) is left alone and the
// error wraps ErrNotMarked. A path that no longer exists is no error.
func Remove(path string, m Mark) error {
	p, err := absolute(path)
	if err != nil {
		return err
	}
	if system(p, false) {
		return refuseSystem(path, p, false)
	}
	w, rest, err := walk(path, filepath.Dir(p), walkOpts{anyOwner: true})
	if err != nil {
		return err
	}
	defer w.close()
	if len(rest) > 0 {
		return nil // its directory is gone, and it with it
	}
	d, err := w.open(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Remove(filepath.Base(p), m)
}

// Remove removes the entry name of d as the package's Remove does.
func (d *Dir) Remove(name string, m Mark) error {
	if err := checkName(name); err != nil {
		return err
	}
	if m.ID == "" {
		return fmt.Errorf("remove %s: no mark to check", name)
	}
	p := filepath.Join(d.path, name)
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	switch {
	case isDir(&st):
		sub, err := d.OpenDir(name)
		if err != nil {
			return fmt.Errorf("%w: %w", err, ErrNotMarked)
		}
		defer sub.Close()
		if sub.st.Dev != d.st.Dev {
			return fmt.Errorf("%s is a mount point, not removed: %w", p, ErrNotMarked)
		}
		got, ok, err := sub.Mark()
		if err != nil || !ok || got.ID != m.ID {
			return fmt.Errorf("%s has no mark %s of oltplab's, not removed: %w", p, m.ID, ErrNotMarked)
		}
		if err := removeContents(sub, true); err != nil {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		if err := unix.Unlinkat(sub.fd, MarkFile, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("remove %s: %w", filepath.Join(p, MarkFile), err)
		}
		if err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		return nil
	case isReg(&st):
		if !strings.Contains(name, m.ID) || !linkOwner(st.Uid) {
			return fmt.Errorf("%s is not the file oltplab marked %s, not removed: %w", p, m.ID, ErrNotMarked)
		}
		if err := unix.Unlinkat(d.fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		return nil
	}
	return fmt.Errorf("%s is neither a directory nor a regular file (a symbolic link is not followed), not removed: %w", p, ErrNotMarked)
}

// removeContents removes everything in d, through no link and into no
// other mount; the mark file of the top directory goes last, with it.
func removeContents(d *Dir, top bool) error {
	names, err := d.Entries()
	if err != nil {
		return err
	}
	for _, name := range names {
		if top && name == MarkFile {
			continue
		}
		var st unix.Stat_t
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return err
		}
		if isDir(&st) {
			sub, err := d.OpenDir(name)
			if err != nil {
				return err
			}
			if sub.st.Dev != d.st.Dev {
				sub.Close()
				return fmt.Errorf("%s is a mount point: oltplab does not remove what is mounted there", sub.path)
			}
			err = removeContents(sub, false)
			sub.Close()
			if err != nil {
				return err
			}
			err = unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR)
		} else {
			err = unix.Unlinkat(d.fd, name, 0)
		}
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
		}
	}
	return nil
}
