package latency

import (
	"context"
	"path"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The pass-through runs as root in the layer's process and acts on the
// backing directory on behalf of the server, whose account owns the
// engine's files there and could change them outside the mount. So it
// never resolves a path the ordinary way: every name is looked up from
// the backing directory's descriptor with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS), which the kernel keeps below that directory and
// through no link whatever changes meanwhile, and every operation that
// creates, removes, renames or opens runs with the caller's file-system
// ids (setfsuid/setfsgid on the request's locked thread), so that the
// backing file system checks it as the server's own and what it creates
// is the server's. The mount itself asks the kernel to check permissions
// (default_permissions) before a request reaches the layer.

// backing is the directory below the mount, held open.
type backing struct {
	root int // O_PATH | O_DIRECTORY descriptor of the backing directory
	// writeback: the kernel caches writes (FUSE writeback cache) and may
	// read through a handle the server opened write-only.
	writeback bool
}

const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// open opens rel (relative to the backing directory; "" is itself).
func (b *backing) open(rel string, flags int, mode uint32) (int, error) {
	switch {
	case rel == "":
		rel = "."
	case strings.HasPrefix(rel, orphanPath):
		return -1, unix.ENOENT
	}
	for {
		fd, err := unix.Openat2(b.root, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode & 0o7777), Resolve: resolveBeneath})
		if err != unix.EINTR && err != unix.EAGAIN {
			return fd, err
		}
	}
}

// asCaller runs f with the file-system ids of the request's caller, on
// a locked thread (setfsuid and setfsgid are per thread). A request the
// kernel makes itself (writeback), or one of root's, runs as it is.
func asCaller(ctx context.Context, f func() error) error {
	c, ok := fuse.FromContext(ctx)
	if !ok || (c.Uid == 0 && c.Gid == 0) || unix.Geteuid() != 0 {
		return f()
	}
	runtime.LockOSThread()
	unix.SetfsgidRetGid(int(c.Gid))
	unix.SetfsuidRetUid(int(c.Uid))
	err := f()
	unix.SetfsuidRetUid(0)
	unix.SetfsgidRetGid(0)
	if uid, _ := unix.SetfsuidRetUid(-1); uid != 0 {
		// Not restored (it cannot fail for root): the thread stays
		// locked to this goroutine and ends with it.
		return err
	}
	runtime.UnlockOSThread()
	return err
}

// node is a file, directory or link of the backing directory.
type node struct {
	fs.Inode
	b *backing
}

var (
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeReadlinker     = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeStatfser       = (*node)(nil)
)

// rel is the node's path relative to the backing directory; for a node
// removed from every directory (a file unlinked while open) it names
// nothing there: operations on it by path fail with ENOENT, and those on
// an open file go through its handle.
func (n *node) rel() string {
	if n.orphaned() {
		return orphanPath
	}
	return n.Path(n.Root())
}

// orphanPath stands for the path of a removed node: nothing is looked up.
const orphanPath = "../.oltplab-latency-removed"

func (n *node) orphaned() bool {
	if n.EmbeddedInode() == n.Root() {
		return false
	}
	_, parent := n.Parent()
	return parent == nil
}

// child is the path of name in the directory n.
func (n *node) child(name string) string { return path.Join(n.rel(), name) }

// newChild makes the inode for a backing file with attributes st.
func (n *node) newChild(ctx context.Context, st *unix.Stat_t) *fs.Inode {
	return n.NewInode(ctx, &node{b: n.b}, fs.StableAttr{Mode: st.Mode, Ino: st.Ino, Gen: 1})
}

// toAttr fills out from st.
func toAttr(out *fuse.Attr, st *unix.Stat_t) {
	out.FromStat((*syscall.Stat_t)(unsafe.Pointer(st)))
}

// lstat stats rel without following a link at its end.
func (b *backing) lstat(rel string, st *unix.Stat_t) error {
	fd, err := b.open(rel, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fstatat(fd, "", st, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var st unix.Stat_t
	if err := n.b.lstat(n.child(name), &st); err != nil {
		return nil, fs.ToErrno(err)
	}
	toAttr(&out.Attr, &st)
	return n.newChild(ctx, &st), 0
}

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := f.(*file); ok {
		return h.Getattr(ctx, out)
	}
	var st unix.Stat_t
	if err := n.b.lstat(n.rel(), &st); err != nil {
		return fs.ToErrno(err)
	}
	toAttr(&out.Attr, &st)
	return 0
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	h, _ := f.(*file)
	if h != nil && in.Valid&^(fuse.FATTR_MTIME|fuse.FATTR_ATIME|fuse.FATTR_CTIME|fuse.FATTR_FH|fuse.FATTR_LOCKOWNER|fuse.FATTR_MTIME_NOW|fuse.FATTR_ATIME_NOW) == 0 {
		// The times the kernel keeps itself with the writeback cache,
		// sent at every fsync after a write: set through the open file
		// (opened with the caller's permission), in as few system calls
		// as there can be.
		return h.setTimes(in, out)
	}
	err := asCaller(ctx, func() error {
		var fd int
		if h != nil {
			// The open file itself, even when unlinked meanwhile.
			fd = h.fd
		} else {
			var err error
			if fd, err = n.b.open(n.rel(), unix.O_PATH|unix.O_NOFOLLOW, 0); err != nil {
				return err
			}
			defer unix.Close(fd)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		link := st.Mode&unix.S_IFMT == unix.S_IFLNK
		// Mode, size and times are changed through the descriptor's
		// /proc link (the file itself, by no path anyone could change);
		// a symbolic link has only an owner to change.
		proc := "/proc/self/fd/" + strconv.Itoa(fd)
		if m, ok := in.GetMode(); ok {
			if link {
				return unix.EOPNOTSUPP
			}
			if err := unix.Fchmodat(unix.AT_FDCWD, proc, m&07777, 0); err != nil {
				return err
			}
		}
		uid, uok := in.GetUID()
		gid, gok := in.GetGID()
		if uok || gok {
			u, g := -1, -1
			if uok {
				u = int(uid)
			}
			if gok {
				g = int(gid)
			}
			if err := unix.Fchownat(fd, "", u, g, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return err
			}
		}
		if sz, ok := in.GetSize(); ok {
			if link {
				return unix.EINVAL
			}
			if err := unix.Truncate(proc, int64(sz)); err != nil {
				return err
			}
		}
		mtime, mok := in.GetMTime()
		atime, aok := in.GetATime()
		if mok || aok {
			if link {
				return unix.EOPNOTSUPP
			}
			ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
			if aok {
				ts[0] = unix.NsecToTimespec(atime.UnixNano())
			}
			if mok {
				ts[1] = unix.NsecToTimespec(mtime.UnixNano())
			}
			if err := unix.UtimesNanoAt(unix.AT_FDCWD, proc, ts, 0); err != nil {
				return err
			}
		}
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		toAttr(&out.Attr, &st)
		return nil
	})
	return fs.ToErrno(err)
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	var h *file
	err := asCaller(ctx, func() error {
		var err error
		h, err = n.b.openFile(n.rel(), int(flags), 0)
		return err
	})
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	return h, h.fuseFlags(), 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	var h *file
	err := asCaller(ctx, func() error {
		var err error
		h, err = n.b.openFile(n.child(name), int(flags)|unix.O_CREAT, mode)
		return err
	})
	if err != nil {
		return nil, nil, 0, fs.ToErrno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(h.fd, &st); err != nil {
		h.Release(ctx)
		return nil, nil, 0, fs.ToErrno(err)
	}
	toAttr(&out.Attr, &st)
	return n.newChild(ctx, &st), h, h.fuseFlags(), 0
}

// dirAt runs f on the directory n, opened O_PATH, as the caller.
func (n *node) dirAt(ctx context.Context, f func(dirfd int) error) syscall.Errno {
	return fs.ToErrno(asCaller(ctx, func() error {
		fd, err := n.b.open(n.rel(), unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return f(fd)
	}))
}

// entry looks up what was just made at name in n and fills out.
func (n *node) entry(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var st unix.Stat_t
	if err := n.b.lstat(n.child(name), &st); err != nil {
		return nil, fs.ToErrno(err)
	}
	toAttr(&out.Attr, &st)
	return n.newChild(ctx, &st), 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := n.dirAt(ctx, func(dirfd int) error { return unix.Mkdirat(dirfd, name, mode&0o7777) }); errno != 0 {
		return nil, errno
	}
	return n.entry(ctx, name, out)
}

// Mknod: a database makes no device files, pipes or sockets in its data
// directory; the layer refuses them.
func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EPERM
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.dirAt(ctx, func(dirfd int) error { return unix.Unlinkat(dirfd, name, 0) })
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.dirAt(ctx, func(dirfd int) error { return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR) })
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok || np.b != n.b {
		return syscall.EXDEV
	}
	return n.dirAt(ctx, func(dirfd int) error {
		to, err := n.b.open(np.rel(), unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(to)
		return unix.Renameat2(dirfd, name, to, newName, uint(flags))
	})
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t, ok := target.(*node)
	if !ok || t.b != n.b {
		return nil, syscall.EXDEV
	}
	errno := n.dirAt(ctx, func(dirfd int) error {
		fd, err := n.b.open(t.rel(), unix.O_PATH|unix.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		// Through the descriptor's /proc link: the inode itself, by no
		// path anyone could change.
		return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dirfd, name, unix.AT_SYMLINK_FOLLOW)
	})
	if errno != 0 {
		return nil, errno
	}
	return n.entry(ctx, name, out)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := n.dirAt(ctx, func(dirfd int) error { return unix.Symlinkat(target, dirfd, name) }); errno != 0 {
		return nil, errno
	}
	return n.entry(ctx, name, out)
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	fd, err := n.b.open(n.rel(), unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	defer unix.Close(fd)
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		k, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return nil, fs.ToErrno(err)
		}
		if k < size {
			return buf[:k], 0
		}
	}
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	var fd int
	err := asCaller(ctx, func() error {
		var err error
		fd, err = n.b.open(n.rel(), unix.O_RDONLY|unix.O_DIRECTORY, 0)
		return err
	})
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	ds, errno := fs.NewLoopbackDirStreamFd(fd)
	if errno != 0 {
		unix.Close(fd)
		return nil, 0, errno
	}
	return ds, 0, 0
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var s unix.Statfs_t
	if err := unix.Fstatfs(n.b.root, &s); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStatfsT((*syscall.Statfs_t)(unsafe.Pointer(&s)))
	return 0
}
