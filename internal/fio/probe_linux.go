package fio

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// probeDirectIO reports whether the file system holding path (an existing,
// empty file) accepts direct I/O: it opens the file with O_DIRECT and
// writes one aligned 4 KiB block, then empties the file again. EINVAL from
// either means no direct I/O (tmpfs before Linux 6.6, some FUSE and
// network file systems).
func probeDirectIO(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT, 0)
	if errors.Is(err, syscall.EINVAL) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	// An anonymous mapping is page aligned, as O_DIRECT buffers must be.
	buf, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return false, fmt.Errorf("aligned buffer: %w", err)
	}
	defer syscall.Munmap(buf)
	if _, err := f.WriteAt(buf, 0); err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return false, nil
		}
		return false, err
	}
	return true, f.Truncate(0)
}

// freeSpace is the space an unprivileged user may still use in dir's file
// system, and the file system's size, in bytes.
func freeSpace(dir string) (avail, total int64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), int64(st.Blocks) * int64(st.Bsize), true
}
