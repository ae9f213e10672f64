package latency

import (
	"context"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// file is an open backing file. The layer reads it with O_DIRECT
// wherever the backing file system and the request allow: the server's
// page cache is the mount's, and a second cache below the layer (the
// backing file's, in the layer's process and in no instance's memory
// limit) would answer reads the server meant for the device. It writes
// as the server does: with O_DIRECT what the server wrote with O_DIRECT
// (InnoDB's data files, fio), through the backing file's page cache what
// the kernel writes back from the server's (its buffered writes), which
// the backing file system then writes out at the next fsync or in the
// background, as below a bare directory. (Writing those with O_DIRECT
// too made every page of a checkpoint a synchronous device write, and a
// commit's WAL pages queue behind them in the kernel's FUSE background
// queue: TPC-C on PostgreSQL lost a third of its NOPM.) A request that is
// not aligned as O_DIRECT needs (the end of a file, a partial page) goes
// through the buffered descriptor; the kernel keeps the two coherent.
type file struct {
	fd  int // buffered, opened as the server asked (without O_DIRECT)
	dfd int // O_DIRECT, or -1 when the backing file system has none
	// directWrites: the server opened the file with O_DIRECT.
	directWrites bool
	// memAlign and offAlign are what O_DIRECT needs of a buffer's
	// address and of offsets and lengths.
	memAlign, offAlign int64
}

var (
	_ fs.FileReader    = (*file)(nil)
	_ fs.FileWriter    = (*file)(nil)
	_ fs.FileWritever  = (*file)(nil)
	_ fs.FileFsyncer   = (*file)(nil)
	_ fs.FileFlusher   = (*file)(nil)
	_ fs.FileReleaser  = (*file)(nil)
	_ fs.FileGetattrer = (*file)(nil)
	_ fs.FileAllocater = (*file)(nil)
	_ fs.FileLseeker   = (*file)(nil)
)

// openFile opens rel as a request's flags ask (see file).
func (b *backing) openFile(rel string, flags int, mode uint32) (*file, error) {
	directWrites := flags&unix.O_DIRECT != 0
	flags &^= unix.O_APPEND | fuse.FMODE_EXEC | unix.O_DIRECT
	if b.writeback && flags&unix.O_ACCMODE == unix.O_WRONLY {
		// The kernel reads around what it writes back into its cache.
		flags = flags&^unix.O_ACCMODE | unix.O_RDWR
	}
	fd, err := b.open(rel, flags|unix.O_NOFOLLOW, mode)
	if err != nil {
		return nil, err
	}
	h := &file{fd: fd, dfd: -1, directWrites: directWrites}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return h, nil
	}
	again := flags &^ (unix.O_CREAT | unix.O_EXCL | unix.O_TRUNC)
	dfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), again|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return h, nil // no O_DIRECT on this file system (tmpfs): buffered only
	}
	h.dfd, h.memAlign, h.offAlign = dfd, 4096, 4096
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &stx) == nil &&
		stx.Mask&unix.STATX_DIOALIGN != 0 && stx.Dio_mem_align > 0 && stx.Dio_offset_align > 0 {
		h.memAlign, h.offAlign = int64(stx.Dio_mem_align), int64(stx.Dio_offset_align)
	}
	return h, nil
}

// fuseFlags are the open flags the layer gives the kernel: keep the
// page cache across opens (only the server changes its files, and
// through the mount), and let direct writes to one file run in parallel,
// as they do on a block device.
func (h *file) fuseFlags() uint32 {
	return fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_PARALLEL_DIRECT_WRITES
}

// direct returns the descriptor to use for n bytes at off from or into
// buf: the O_DIRECT one when everything is aligned for it.
func (h *file) direct(buf []byte, off int64) (int, bool) {
	if h.dfd < 0 || len(buf) == 0 || off%h.offAlign != 0 || int64(len(buf))%h.offAlign != 0 {
		return h.fd, false
	}
	return h.dfd, int64(uintptr(unsafe.Pointer(&buf[0])))%h.memAlign == 0
}

// alignedBuffer is a buffer of n bytes at an address aligned to a.
func alignedBuffer(n int, a int64) []byte {
	b := make([]byte, n+int(a))
	skip := int((a - int64(uintptr(unsafe.Pointer(&b[0])))%a) % a)
	return b[skip : skip+n]
}

func (h *file) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if len(dest) == 0 {
		return fuse.ReadResultData(nil), 0
	}
	fd, memOK := h.direct(dest, off)
	buf := dest
	if fd == h.dfd && !memOK {
		buf = alignedBuffer(len(dest), h.memAlign)
	}
	n, err := pread(fd, buf, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	if &buf[0] != &dest[0] {
		copy(dest, buf[:n])
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func pread(fd int, buf []byte, off int64) (int, error) {
	total := 0
	for total < len(buf) {
		n, err := rawPread(fd, buf[total:], off+int64(total))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		if n == 0 {
			break // end of file
		}
		total += n
	}
	return total, nil
}

func (h *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	fd, memOK := h.fd, false
	if h.directWrites {
		fd, memOK = h.direct(data, off)
	}
	buf := data
	if fd == h.dfd && !memOK {
		buf = alignedBuffer(len(data), h.memAlign)
		copy(buf, data)
	}
	total := 0
	for total < len(buf) {
		n, err := rawPwrite(fd, buf[total:], off+int64(total))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if total > 0 {
				break
			}
			return 0, fs.ToErrno(err)
		}
		total += n
	}
	return uint32(total), 0
}

func (h *file) Writev(ctx context.Context, data [][]byte, off int64) (uint32, syscall.Errno) {
	if len(data) == 1 {
		return h.Write(ctx, data[0], off)
	}
	n := 0
	for _, d := range data {
		n += len(d)
	}
	buf := alignedBuffer(n, max(h.memAlign, 8))
	n = 0
	for _, d := range data {
		n += copy(buf[n:], d)
	}
	return h.Write(ctx, buf, off)
}

// fsyncDataOnly is FUSE_FSYNC_FDATASYNC: the caller asked for fdatasync.
const fsyncDataOnly = 1

func (h *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if flags&fsyncDataOnly != 0 {
		return fs.ToErrno(unix.Fdatasync(h.fd))
	}
	return fs.ToErrno(unix.Fsync(h.fd))
}

// Flush is called at every close of a descriptor of the server's: the
// layer holds nothing to flush (no locks are kept here either: the
// kernel keeps POSIX locks of a mount whose server does not).
func (h *file) Flush(ctx context.Context) syscall.Errno { return 0 }

func (h *file) Release(ctx context.Context) syscall.Errno {
	if h.dfd >= 0 {
		unix.Close(h.dfd)
		h.dfd = -1
	}
	if h.fd >= 0 {
		err := unix.Close(h.fd)
		h.fd = -1
		return fs.ToErrno(err)
	}
	return 0
}

func (h *file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	var st unix.Stat_t
	if err := unix.Fstat(h.fd, &st); err != nil {
		return fs.ToErrno(err)
	}
	toAttr(&out.Attr, &st)
	return 0
}

func (h *file) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	return fs.ToErrno(unix.Fallocate(h.fd, mode, int64(off), int64(size)))
}

func (h *file) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	n, err := unix.Seek(h.fd, int64(off), int(whence))
	return uint64(n), fs.ToErrno(err)
}

// rawPread and rawPwrite read and write without telling the Go scheduler
// (RawSyscall): a device I/O of a few dozen microseconds would otherwise
// make the runtime hand this thread's processor to another thread and
// take it back, several context switches per request, which doubled
// the layer's added latency and CPU per I/O as measured
// (scripts/bench.sh). The daemon has many more processors than the host
// has CPUs (daemonProcs), so requests blocked here leave others enough.
func rawPread(fd int, b []byte, off int64) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawPwrite(fd int, b []byte, off int64) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_PWRITE64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// setTimes sets the times in (only times: see node.Setattr) through the
// open file and fills out.
func (h *file) setTimes(in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
	if t, ok := in.GetATime(); ok {
		ts[0] = unix.NsecToTimespec(t.UnixNano())
	}
	if t, ok := in.GetMTime(); ok {
		ts[1] = unix.NsecToTimespec(t.UnixNano())
	}
	if ts[0].Nsec != unix.UTIME_OMIT || ts[1].Nsec != unix.UTIME_OMIT {
		if err := unix.UtimesNanoAt(h.fd, "", ts, unix.AT_EMPTY_PATH); err != nil {
			return fs.ToErrno(err)
		}
	}
	return h.Getattr(context.Background(), out)
}
