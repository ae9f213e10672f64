package latency

import (
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// delayed wraps the pass-through's FUSE file system: each request of a
// kind the layer delays waits its drawn delay first (the request's
// goroutine sleeps; other requests go on meanwhile, as on a device that
// serves many I/Os at once), then goes through, and the time from the
// moment the layer took it to its answer is recorded. Written once, as a
// wrapper around every operation, not inside each of them.
type delayed struct {
	fuse.RawFileSystem
	draw *drawer
	rec  *recorder
}

// do runs one request of kind k through f, after its delay, and
// records it. The delay is not cut short when the caller gets a signal
// (the kernel then asks the layer to interrupt the request): a device's
// I/O is not, and a database does not expect an fsync to fail with EINTR
// (MariaDB's threads are signalled while they wait; a test saw it).
// Delays are bounded by MaxDelay.
func (l *delayed) do(k Kind, f func() fuse.Status) fuse.Status {
	start := time.Now()
	d := l.draw.draw(k)
	if d > 0 {
		time.Sleep(d)
	}
	st := f()
	l.rec.record(k, time.Since(start), d, !st.Ok())
	return st
}

func (l *delayed) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	var res fuse.ReadResult
	st := l.do(Read, func() fuse.Status {
		var st fuse.Status
		res, st = l.RawFileSystem.Read(cancel, in, buf)
		return st
	})
	return res, st
}

func (l *delayed) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	var n uint32
	st := l.do(Write, func() fuse.Status {
		var st fuse.Status
		n, st = l.RawFileSystem.Write(cancel, in, data)
		return st
	})
	return n, st
}

func (l *delayed) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	var n uint32
	st := l.do(Write, func() fuse.Status {
		var st fuse.Status
		n, st = l.RawFileSystem.Writev(cancel, in, data)
		return st
	})
	return n, st
}

func (l *delayed) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	return l.do(Fsync, func() fuse.Status { return l.RawFileSystem.Fsync(cancel, in) })
}

func (l *delayed) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	return l.do(Fsync, func() fuse.Status { return l.RawFileSystem.FsyncDir(cancel, in) })
}

func (l *delayed) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.Create(cancel, in, name, out) })
}

func (l *delayed) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.Mknod(cancel, in, name, out) })
}

func (l *delayed) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.Mkdir(cancel, in, name, out) })
}

func (l *delayed) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.Unlink(cancel, h, name) })
}

func (l *delayed) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.Rmdir(cancel, h, name) })
}

func (l *delayed) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.Rename(cancel, in, oldName, newName) })
}

func (l *delayed) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.Link(cancel, in, name, out) })
}

func (l *delayed) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.Symlink(cancel, h, target, name, out) })
}

func (l *delayed) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.SetAttr(cancel, in, out) })
}

func (l *delayed) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	return l.do(Meta, func() fuse.Status { return l.RawFileSystem.Fallocate(cancel, in) })
}
