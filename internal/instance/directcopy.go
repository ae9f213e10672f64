package instance

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A cgroup v1 write cap (blkio throttle) holds only for the writes a
// process issues itself: direct I/O, and the writeback an fsync forces
// in its own context. What a tool writes through the page cache and the
// kernel writes back first, in its flusher threads (past its dirty
// thresholds, or after 30 s), is in no group: a restore copied with cp
// under write_mbps 30, synced afterwards from inside the group, still
// ran at 36 MB/s.
// cgroup v2 (io.max, with memory on the same hierarchy) charges that
// writeback to the group, and the cap holds.
//
// So where the cap is v1, the copy of a restore is oltplab's own:
// copyDirect writes every file with O_DIRECT from a thread inside the
// group, as the tools' account, and the cap holds for all of it. What
// the engines' own tools write (pg_basebackup, pg_dump, mariadb-backup
// and its --copy-back) goes through the page cache: the result says the
// cap could not hold there, with the rate the phase reached (WriteCap).

// WriteCap is the write cap backups and restores run under.
type WriteCap struct {
	Limit  IOLimit `json:"limit"`
	Method string  `json:"method"` // "cgroup v1 blkio throttle", "cgroup v2 io.max"
	// HoldsBuffered is whether the cap holds for writes through the page
	// cache: the kernel's writeback of them is charged to the group in
	// cgroup v2, to no group in v1.
	HoldsBuffered bool `json:"holds_buffered"`
}

// WriteMBps is the cap on writes in MB/s, 0 when writes are capped by
// IOPS only (or not at all).
func (w *WriteCap) WriteMBps() float64 {
	if w == nil {
		return 0
	}
	return w.Limit.WriteMBps
}

// Note says what the cap did for a phase that wrote bytes in seconds,
// direct telling whether all of it was written with direct I/O from
// inside the group: "" when the cap held.
func (w *WriteCap) Note(bytes int64, seconds float64, direct bool) string {
	if w == nil || w.Limit.WriteMBps == 0 && w.Limit.WriteIOPS == 0 || w.HoldsBuffered || direct {
		return ""
	}
	rate := 0.0
	if seconds > 0 {
		rate = float64(bytes) / 1e6 / seconds
	}
	return fmt.Sprintf("written through the page cache under a %s write cap (%s), which does not hold for what the kernel "+
		"writes back from the page cache: %.1f MB/s achieved", w.Method, w.Limit, rate)
}

// writeCapOf is the write cap l as cg applies it.
func writeCapOf(cg *cgroup, l IOLimit) *WriteCap {
	_, v2, _ := cg.dir(ctlBlkio)
	_, mv2, mok := cg.dir(ctlMemory)
	w := &WriteCap{Limit: l, Method: "cgroup v1 blkio throttle"}
	if v2 {
		w.Method = "cgroup v2 io.max"
		w.HoldsBuffered = mok && mv2
	}
	return w
}

// copyDirectly reports whether a copy into the write cap's group must be
// oltplab's own direct copy for the cap to hold.
func (b *Backupper) copyDirectly() bool {
	w := b.desc.WriteCap
	return w != nil && !w.HoldsBuffered && (w.Limit.WriteMBps > 0 || w.Limit.WriteIOPS > 0)
}

// copyChunk is the size of each read and direct write of copyDirect.
const copyChunk = 1 << 20

// copyDirect copies the tree src into the existing empty directory dst
// (mode bits and times kept, the files the account's), writing with
// O_DIRECT from a thread that joined pl's groups, as acct, so that a
// cgroup v1 write cap holds for every byte. Directories and files are
// opened relative to their parents' descriptors, never through a link;
// a link in src is copied as a link. A file's last partial block is
// written without O_DIRECT; every file is fsynced.
func copyDirect(ctx context.Context, pl placement, acct *osAccount, src, dst string) error {
	done := make(chan error, 1)
	offMainThread(func() {
		if err := pl.enter(); err != nil {
			done <- err
			return
		}
		if acct != nil {
			unix.SetfsgidRetGid(acct.GID)
			unix.SetfsuidRetUid(acct.UID)
		}
		// The thread ends with this goroutine: its groups and ids with it.
		done <- copyTreeDirect(ctx, src, dst)
	})
	if err := <-done; err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

func copyTreeDirect(ctx context.Context, src, dst string) error {
	s, err := unix.Open(src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	d, err := unix.Open(dst, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(d)
	buf := alignedBuf(copyChunk, 4096)
	return copyDirDirect(ctx, s, d, src, buf)
}

// alignedBuf is n bytes at an address aligned to a.
func alignedBuf(n, a int) []byte {
	b := make([]byte, n+a)
	skip := (a - int(uintptr(unsafe.Pointer(&b[0])))%a) % a
	return b[skip : skip+n]
}

func copyDirDirect(ctx context.Context, s, d int, srcPath string, buf []byte) error {
	names, err := dirNames(s)
	if err != nil {
		return fmt.Errorf("%s: %w", srcPath, err)
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := filepath.Join(srcPath, name)
		var st unix.Stat_t
		if err := unix.Fstatat(s, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if err := unix.Mkdirat(d, name, st.Mode&0o7777); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			cs, err := unix.Openat(s, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			cd, err := unix.Openat(d, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				unix.Close(cs)
				return fmt.Errorf("%s: %w", p, err)
			}
			err = copyDirDirect(ctx, cs, cd, p, buf)
			if err == nil {
				err = errors.Join(unix.Fchmod(cd, st.Mode&0o7777), unix.Fsync(cd))
			}
			unix.Close(cs)
			unix.Close(cd)
			if err != nil {
				return err
			}
		case unix.S_IFREG:
			if err := copyFileDirect(s, d, name, &st, buf); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		case unix.S_IFLNK:
			target := make([]byte, unix.PathMax)
			n, err := unix.Readlinkat(s, name, target)
			if err == nil {
				err = unix.Symlinkat(string(target[:n]), d, name)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		default:
			return fmt.Errorf("%s: not a file, directory or link", p)
		}
	}
	return unix.Fsync(d)
}

func dirNames(fd int) ([]string, error) {
	dup, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dup)
	var names []string
	b := make([]byte, 64<<10)
	for {
		n, err := unix.ReadDirent(dup, b)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(b[:n], -1, names)
	}
}

// copyFileDirect copies the regular file name of directory s into d.
func copyFileDirect(s, d int, name string, st *unix.Stat_t, buf []byte) error {
	in, err := unix.Openat(s, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(in)
	out, err := unix.Openat(d, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_DIRECT, st.Mode&0o7777)
	direct := err == nil
	if errors.Is(err, unix.EINVAL) {
		// No O_DIRECT on this file system: the cap cannot hold anyway.
		out, err = unix.Openat(d, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, st.Mode&0o7777)
	}
	if err != nil {
		return err
	}
	defer unix.Close(out)
	var off int64
	for {
		n, err := readFull(in, buf)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		chunk := buf[:n]
		if direct && n%4096 != 0 {
			// The last, partial block: O_DIRECT writes whole blocks.
			flags, err := unix.FcntlInt(uintptr(out), unix.F_GETFL, 0)
			if err == nil {
				_, err = unix.FcntlInt(uintptr(out), unix.F_SETFL, flags&^unix.O_DIRECT)
			}
			if err != nil {
				return err
			}
			direct = false
		}
		for len(chunk) > 0 {
			w, err := unix.Pwrite(out, chunk, off)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			chunk, off = chunk[w:], off+int64(w)
		}
		if n < len(buf) {
			break
		}
	}
	ts := []unix.Timespec{st.Atim, st.Mtim}
	if err := unix.UtimesNanoAt(d, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	return unix.Fsync(out)
}

// readFull reads until buf is full or the file ends.
func readFull(fd int, buf []byte) (int, error) {
	total := 0
	for total < len(buf) {
		n, err := unix.Read(fd, buf[total:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		if n == 0 {
			break
		}
		total += n
	}
	return total, nil
}
