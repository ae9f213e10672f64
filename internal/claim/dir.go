package claim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is a directory resolved and checked by Take or Within, held open:
// everything done through it happens in that directory, whatever its
// path names meanwhile. Close releases it.
type Dir struct {
	fd   int
	path string // absolute, without links
	st   unix.Stat_t
}

// Path is the directory's absolute path, without links.
func (d *Dir) Path() string { return d.path }

// Close releases the directory.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// open turns the end of a walk into a Dir (opened for reading).
func (w *walked) open(path string) (*Dir, error) {
	n := len(w.fds) - 1
	var fd int
	var err error
	if n == 0 {
		fd, err = unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else {
		fd, err = unix.Openat(w.fds[n-1], w.names[n], unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, refuse(path, "%s: %v", w.path(), err)
	}
	d := &Dir{fd: fd, path: w.path()}
	if err := unix.Fstat(fd, &d.st); err != nil || d.st.Dev != w.sts[n].Dev || d.st.Ino != w.sts[n].Ino {
		d.Close()
		return nil, refuse(path, "%s changed while oltplab looked at it: try again, and check who else writes there", w.path())
	}
	return d, nil
}

func absolute(path string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", refuse(path, "%s: %v", path, err)
	}
	return p, nil
}

// TakeOptions say what Take accepts.
type TakeOptions struct {
	Trust Trust
	// Reuse are the kinds of oltplab's own directories Take accepts again
	// as they are (a managed instance restarting on its data); none: the
	// directory must be new or empty.
	Reuse []Kind
}

// Take returns the directory at path as oltplab's own, for a role that
// keeps its files there (a managed instance's data_dir or wal_dir, a
// restored copy): created with its missing parents (mode 0755) when it
// does not exist, and marked with m; else taken when it is empty (and
// marked with m), or accepted as it is when oltplab marked it before with
// a kind in o.Reuse. Refused, with nothing changed: a system directory,
// a path through a link or directory others could change, a directory of
// another user or that others may write, one holding anything oltplab did
// not create.
func Take(path string, m Mark, o TakeOptions) (*Dir, error) {
	p, err := absolute(path)
	if err != nil {
		return nil, err
	}
	if system(p, true) {
		return nil, refuseSystem(path, p, true)
	}
	w, _, err := walk(path, p, walkOpts{trust: o.Trust, create: true, perm: 0o755})
	if err != nil {
		return nil, err
	}
	defer w.close()
	if r := w.path(); system(r, true) {
		return nil, refuseSystem(path, r, true)
	}
	d, err := w.open(path)
	if err != nil {
		return nil, err
	}
	if !w.created {
		if err := d.acceptable(path, o); err != nil {
			d.Close()
			return nil, err
		}
		if _, ok, _ := readMark(d.fd); ok {
			return d, nil // reused as it is
		}
	}
	if err := writeMark(d.fd, m); err != nil {
		d.Close()
		return nil, refuse(path, "%s: cannot mark it as oltplab's: %v", d.path, err)
	}
	return d, nil
}

// acceptable checks an existing directory Take is given: a trusted user's,
// only they may write it, and empty or marked as o allows.
func (d *Dir) acceptable(path string, o TakeOptions) error {
	if !o.Trust.owner(d.st.Uid) {
		return refuse(path, "%s belongs to user %s: give a directory of root's or oltplab's user, or a new one", d.path, userName(d.st.Uid))
	}
	if othersWrite(&d.st) {
		return refuse(path, "%s may be written by other users (mode %04o): give a directory only root or oltplab's user may write", d.path, d.st.Mode&0o7777)
	}
	names, err := d.Entries()
	if err != nil {
		return refuse(path, "%s: %v", d.path, err)
	}
	if len(names) == 0 {
		return nil
	}
	m, ok, err := readMark(d.fd)
	if err != nil {
		return refuse(path, "%s holds files oltplab did not create: %v; give an empty or new directory", d.path, err)
	}
	if !ok {
		shown := names
		if len(shown) > 3 {
			shown = append(slices.Clone(shown[:3]), "...")
		}
		return refuse(path, "%s holds files oltplab did not create (%s): give an empty or new directory", d.path, strings.Join(shown, ", "))
	}
	if !slices.Contains(o.Reuse, m.Kind) {
		return refuse(path, "%s is not empty: it holds oltplab's %s of %s; give an empty or new directory", d.path, m.Kind, m.Created.Format("2006-01-02 15:04"))
	}
	return nil
}

// CheckTake tells, creating and writing nothing, whether Take would refuse
// path. It returns the deepest directory of path that exists (path itself
// when it does), for checks of the device and free space under it.
func CheckTake(path string, o TakeOptions) (string, error) {
	p, err := absolute(path)
	if err != nil {
		return "", err
	}
	if system(p, true) {
		return "", refuseSystem(path, p, true)
	}
	w, rest, err := walk(path, p, walkOpts{trust: o.Trust})
	if err != nil {
		return "", err
	}
	defer w.close()
	existing := w.path()
	if len(rest) > 0 {
		return existing, nil
	}
	if system(existing, true) {
		return "", refuseSystem(path, existing, true)
	}
	d, err := w.open(path)
	if err != nil {
		return "", err
	}
	defer d.Close()
	return existing, d.acceptable(path, o)
}

// Within returns the directory at path, in which oltplab creates files and
// directories of its own (backups, a test file) among others' files:
// created with its missing parents (mode 0755) when create is set. Refused:
// a system directory tree, a path through a link or directory others could
// change, a directory of another user, one others may write without the
// sticky bit (with it, what oltplab creates there stays its own).
func Within(path string, tr Trust, create bool) (*Dir, error) {
	p, err := absolute(path)
	if err != nil {
		return nil, err
	}
	if system(p, false) {
		return nil, refuseSystem(path, p, false)
	}
	w, rest, err := walk(path, p, walkOpts{trust: tr, create: create, perm: 0o755})
	if err != nil {
		return nil, err
	}
	defer w.close()
	if len(rest) > 0 {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	if r := w.path(); system(r, false) {
		return nil, refuseSystem(path, r, false)
	}
	d, err := w.open(path)
	if err != nil {
		return nil, err
	}
	if err := d.writable(path, tr); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// writable checks a directory oltplab writes its own files in.
func (d *Dir) writable(path string, tr Trust) error {
	if !tr.owner(d.st.Uid) {
		return refuse(path, "%s belongs to user %s, who could put something else in place of what oltplab creates there: give a directory of root's or oltplab's user", d.path, userName(d.st.Uid))
	}
	if othersWrite(&d.st) && !sticky(&d.st) {
		return refuse(path, "%s may be written by other users (mode %04o), who could put something else in place of what oltplab creates there: give a directory only root may write", d.path, d.st.Mode&0o7777)
	}
	return nil
}

// CheckWithin tells, creating nothing, whether Within would refuse path,
// and returns the deepest directory of path that exists.
func CheckWithin(path string, tr Trust) (string, error) {
	p, err := absolute(path)
	if err != nil {
		return "", err
	}
	if system(p, false) {
		return "", refuseSystem(path, p, false)
	}
	w, rest, err := walk(path, p, walkOpts{trust: tr})
	if err != nil {
		return "", err
	}
	defer w.close()
	existing := w.path()
	if len(rest) > 0 {
		return existing, nil
	}
	if system(existing, false) {
		return "", refuseSystem(path, existing, false)
	}
	d, err := w.open(path)
	if err != nil {
		return "", err
	}
	defer d.Close()
	return existing, d.writable(path, tr)
}

// Entries are the names in the directory.
func (d *Dir) Entries() ([]string, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

// Mark is the directory's mark; ok is false when it has none.
func (d *Dir) Mark() (m Mark, ok bool, err error) { return readMark(d.fd) }

// Mkdir creates the directory name in d (never over anything that
// exists), with exactly mode perm, owned by uid and gid (-1 keeps
// oltplab's), and returns it open.
func (d *Dir) Mkdir(name string, perm os.FileMode, uid, gid int) (*Dir, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := makeDir(d.fd, name, uint32(perm.Perm())); err != nil {
		return nil, &fs.PathError{Op: "mkdir", Path: filepath.Join(d.path, name), Err: err}
	}
	sub, err := d.OpenDir(name)
	if err != nil {
		return nil, err
	}
	if uid >= 0 || gid >= 0 {
		if err := unix.Fchown(sub.fd, uid, gid); err != nil {
			sub.Close()
			return nil, &fs.PathError{Op: "chown", Path: sub.path, Err: err}
		}
	}
	return sub, nil
}

// MkdirMarked creates the directory name in d, as Mkdir with mode 0755
// and oltplab's owner, and marks it with m.
func (d *Dir) MkdirMarked(name string, m Mark) (*Dir, error) {
	sub, err := d.Mkdir(name, 0o755, -1, -1)
	if err != nil {
		return nil, err
	}
	if err := writeMark(sub.fd, m); err != nil {
		sub.Close()
		return nil, fmt.Errorf("%s: %w", sub.path, err)
	}
	return sub, nil
}

// OpenDir opens the directory name in d; a link there is not followed.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	p := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return nil, refuse(p, "%s is not a directory (a symbolic link is not followed)", p)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	sub := &Dir{fd: fd, path: p}
	if err := unix.Fstat(fd, &sub.st); err != nil {
		sub.Close()
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	return sub, nil
}

// CreateFile creates the regular file name in d for writing: never over
// anything that exists, never through a link.
func (d *Dir) CreateFile(name string, perm os.FileMode) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	p := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// AppendFile opens the regular file name in d for appending, creating it
// (mode perm) when missing. It must be a regular file with one link,
// owned by oltplab's user or one of owners: a link, a device, a pipe or a
// hard link to another file there is refused.
func (d *Dir) AppendFile(name string, perm os.FileMode, owners ...int) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	p := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
	if errors.Is(err, unix.ELOOP) {
		return nil, refuse(p, "%s is a symbolic link: oltplab does not write through it; remove it", p)
	}
	if errors.Is(err, unix.ENXIO) {
		return nil, refuse(p, "%s is not a regular file: oltplab does not write to it; remove it", p)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	switch {
	case !isReg(&st):
		unix.Close(fd)
		return nil, refuse(p, "%s is not a regular file: oltplab does not write to it; remove it", p)
	case st.Nlink != 1:
		unix.Close(fd)
		return nil, refuse(p, "%s has %d hard links: it may be another file's; oltplab does not write to it; remove it", p, st.Nlink)
	case !linkOwner(st.Uid) && !slices.Contains(owners, int(st.Uid)):
		unix.Close(fd)
		return nil, refuse(p, "%s belongs to user %s: oltplab does not write to it; remove it", p, userName(st.Uid))
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// Rename renames old to new in d, never over anything that exists.
func (d *Dir) Rename(old, new string) error {
	if err := errors.Join(checkName(old), checkName(new)); err != nil {
		return err
	}
	if err := unix.Renameat2(d.fd, old, d.fd, new, unix.RENAME_NOREPLACE); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, old), New: filepath.Join(d.path, new), Err: err}
	}
	return nil
}

// Sync makes the directory's entries durable.
func (d *Dir) Sync() error { return unix.Fsync(d.fd) }

// checkName refuses a name that is not one entry of a directory.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return fmt.Errorf("%q is not a name in a directory", name)
	}
	return nil
}

// OpenPath returns a new O_PATH descriptor of the directory, for an
// operation that must act on this very directory whatever its path names
// meanwhile (a file system mounted over it, a server below it). The
// caller closes it.
func (d *Dir) OpenPath() (int, error) {
	return unix.Openat(d.fd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}
