package sysstat

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// statDev returns the device number of the file system holding path
// (st_dev), and for a block special file the device it is (st_rdev).
func statDev(path string) (dev, rdev devNum, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return devNum{}, devNum{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return devNum{}, devNum{}, fmt.Errorf("stat %s: no device number", path)
	}
	dev = devNum{unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))}
	if fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0 {
		rdev = devNum{unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))}
	}
	return dev, rdev, nil
}

// FreeBytes is the space available to an unprivileged user on the file
// system holding path (statfs f_bavail).
func FreeBytes(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", path, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
