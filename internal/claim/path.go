package claim

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Error is a refusal: oltplab will not use the path for the reason given.
// Its message is one line, what is wrong and what to do; the caller names
// the role ("data_dir /srv/x: ...").
type Error struct {
	Path string // as given
	Why  string
}

func (e *Error) Error() string { return e.Why }

func refuse(path, format string, args ...any) error {
	return &Error{Path: path, Why: fmt.Sprintf(format, args...)}
}

// ErrNotMarked: Remove found something without the mark it was given (or
// a link): it is not what oltplab created, and stays.
var ErrNotMarked = errors.New("does not carry oltplab's mark")

// Trust lists the users, besides root and oltplab's own, whose directories
// a path may go through and who may own a directory oltplab takes or
// writes in: the account a managed server runs as, whose files they are
// anyway. Links are trusted only when they are root's or oltplab's own.
type Trust []int

func (tr Trust) owner(uid uint32) bool {
	return uid == 0 || int(uid) == os.Geteuid() || slices.Contains(tr, int(uid))
}

// linkOwner reports whether a link's owner is one whose links are followed.
func linkOwner(uid uint32) bool { return uid == 0 || int(uid) == os.Geteuid() }

// othersWrite reports whether users other than root and oltplab's own may
// write the directory st describes.
func othersWrite(st *unix.Stat_t) bool {
	return st.Mode&0o002 != 0 || (st.Mode&0o020 != 0 && st.Gid != 0 && int(st.Gid) != os.Getegid())
}

func sticky(st *unix.Stat_t) bool { return st.Mode&unix.S_ISVTX != 0 }

func isDir(st *unix.Stat_t) bool  { return st.Mode&unix.S_IFMT == unix.S_IFDIR }
func isLink(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFLNK }
func isReg(st *unix.Stat_t) bool  { return st.Mode&unix.S_IFMT == unix.S_IFREG }

// systemTrees hold the operating system's and the kernel's files: oltplab
// writes nothing below them, except below openBelow.
var systemTrees = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin", "/sys", "/usr"}

var openBelow = []string{"/dev/shm", "/usr/local"}

// systemDirs hold other programs' and users' files: oltplab never takes
// one as its own directory (it may create its own directories in some of
// them: backups in /var/tmp, a test file in /tmp).
var systemDirs = []string{"/", "/dev/shm", "/home", "/lost+found", "/media", "/mnt", "/opt", "/root", "/run", "/run/lock",
	"/run/shm", "/run/user", "/snap", "/srv", "/tmp", "/usr/local", "/var", "/var/backups", "/var/cache", "/var/lib",
	"/var/local", "/var/lock", "/var/log", "/var/mail", "/var/opt", "/var/run", "/var/spool", "/var/tmp"}

func below(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// system says whether oltplab must not use the absolute, clean path p:
// take it as its own directory (take) or write in it.
func system(p string, take bool) bool {
	if take && slices.Contains(systemDirs, p) {
		return true
	}
	if !take && p == "/" {
		return true
	}
	for _, ob := range openBelow {
		if below(p, ob) {
			return false
		}
	}
	for _, t := range systemTrees {
		if below(p, t) {
			return true
		}
	}
	return false
}

func refuseSystem(path, p string, take bool) error {
	if take {
		return refuse(path, "%s is a system directory (or below one): oltplab never takes it as its own; give a directory of its own, e.g. /srv/oltplab/NAME", p)
	}
	return refuse(path, "%s is a system directory (or below one): oltplab writes nothing there; give another directory", p)
}

// walked is a directory path resolved by walk: the open (O_PATH)
// descriptors from / down to it, with their names and states.
type walked struct {
	fds   []int
	names []string // names[0] is "" (the root)
	sts   []unix.Stat_t
	// created: the last directory was created by this walk.
	created bool
}

func (w *walked) path() string {
	if len(w.names) == 1 {
		return "/"
	}
	return strings.Join(w.names, "/")
}

func (w *walked) top() (int, *unix.Stat_t) { return w.fds[len(w.fds)-1], &w.sts[len(w.sts)-1] }

func (w *walked) push(fd int, name string, st unix.Stat_t) {
	w.fds, w.names, w.sts = append(w.fds, fd), append(w.names, name), append(w.sts, st)
}

func (w *walked) pop() {
	n := len(w.fds) - 1
	unix.Close(w.fds[n])
	w.fds, w.names, w.sts = w.fds[:n], w.names[:n], w.sts[:n]
}

func (w *walked) close() {
	for len(w.fds) > 0 {
		w.pop()
	}
}

// walkOpts say how a path is walked.
type walkOpts struct {
	trust Trust
	// create makes missing directories (mode perm, oltplab's) on the way.
	create bool
	perm   uint32
	// anyOwner lets the walk go through directories of any user (removal:
	// everything it does there is relative to a descriptor, and only what
	// carries the mark goes); links are still followed only when trusted.
	anyOwner bool
}

const maxLinks = 40

// walk resolves the absolute path p to a directory, one component at a
// time from /. Without create, the components from the first missing one
// on are returned as rest (the walk then ends in the deepest existing
// directory, checked as a place to create them in).
func walk(path, p string, o walkOpts) (w *walked, rest []string, err error) {
	if !filepath.IsAbs(p) {
		return nil, nil, refuse(path, "%s is not an absolute path", p)
	}
	w = &walked{}
	defer func() {
		if err != nil {
			w.close()
			w = nil
		}
	}()
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return w, nil, fmt.Errorf("open /: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return w, nil, fmt.Errorf("stat /: %w", err)
	}
	w.push(fd, "", st)
	comps := strings.Split(p, "/")
	links := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(w.fds) > 1 {
				w.pop()
			}
			w.created = false
			continue
		}
		parent := w.path()
		child := filepath.Join(parent, c)
		pfd, pst := w.top()
		var cst unix.Stat_t
		err := unix.Fstatat(pfd, c, &cst, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) {
			if err := o.through(path, parent, pst, child, nil); err != nil {
				return w, nil, err
			}
			if !o.create {
				return w, append([]string{c}, comps...), nil
			}
			if err := makeDir(pfd, c, o.perm); err != nil && !errors.Is(err, unix.EEXIST) {
				return w, nil, refuse(path, "cannot create %s: %v", child, err)
			} else if err == nil {
				comps = append([]string{c}, comps...)
				w.created = true
				continue
			}
			// Created meanwhile by someone else: looked at as it is.
			comps = append([]string{c}, comps...)
			continue
		}
		if err != nil {
			return w, nil, refuse(path, "%s: %v", child, err)
		}
		if err := o.through(path, parent, pst, child, &cst); err != nil {
			return w, nil, err
		}
		if isLink(&cst) {
			if !linkOwner(cst.Uid) {
				return w, nil, refuse(path, "%s is a symbolic link of user %s: oltplab follows only root's and its own; give a path without it", child, userName(cst.Uid))
			}
			if links++; links > maxLinks {
				return w, nil, refuse(path, "%s: too many symbolic links", child)
			}
			target, err := readLink(pfd, c)
			if err != nil {
				return w, nil, refuse(path, "%s: %v", child, err)
			}
			if filepath.IsAbs(target) {
				for len(w.fds) > 1 {
					w.pop()
				}
			}
			comps = append(strings.Split(target, "/"), comps...)
			w.created = false
			continue
		}
		if !isDir(&cst) {
			return w, nil, refuse(path, "%s is not a directory", child)
		}
		created := w.created && len(comps) == 0
		cfd, err := unix.Openat(pfd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return w, nil, refuse(path, "%s: %v", child, err)
		}
		var got unix.Stat_t
		if err := unix.Fstat(cfd, &got); err != nil || got.Dev != cst.Dev || got.Ino != cst.Ino {
			unix.Close(cfd)
			return w, nil, refuse(path, "%s changed while oltplab looked at it: try again, and check who else writes there", child)
		}
		w.push(cfd, c, got)
		w.created = created
	}
	return w, nil, nil
}

// through checks that the walk may look up child in parent: parent is a
// trusted user's, and when others may write it, it has the sticky bit and
// child (when it exists) is a trusted user's directory, not a link.
func (o walkOpts) through(path, parent string, pst *unix.Stat_t, child string, cst *unix.Stat_t) error {
	if !o.anyOwner && !o.trust.owner(pst.Uid) {
		return refuse(path, "%s belongs to user %s, who could put something else in place of %s: give a path through directories of root's or oltplab's user", parent, userName(pst.Uid), child)
	}
	if !othersWrite(pst) {
		return nil
	}
	if !sticky(pst) {
		return refuse(path, "%s may be written by other users (mode %04o), who could put something else in place of %s: give a path through directories only root may write", parent, pst.Mode&0o7777, child)
	}
	if cst == nil {
		return nil
	}
	if isLink(cst) {
		return refuse(path, "%s is a symbolic link in %s, which other users may write: oltplab does not follow it; give a path without it", child, parent)
	}
	if !o.anyOwner && !o.trust.owner(cst.Uid) {
		return refuse(path, "%s belongs to user %s, in %s, which everyone may write: give a directory of root's or oltplab's user", child, userName(cst.Uid), parent)
	}
	return nil
}

// makeDir creates name in the directory dirfd with exactly mode perm (no
// umask), as oltplab's user.
func makeDir(dirfd int, name string, perm uint32) error {
	if err := unix.Mkdirat(dirfd, name, 0o700); err != nil {
		return err
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, perm)
}

func readLink(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size > 1<<16 {
			return "", errors.New("link target too long")
		}
	}
}

// userName is a user id for a message: "65534 (nobody)".
func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return id + " (" + u.Username + ")"
	}
	return id
}
