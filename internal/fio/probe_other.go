//go:build !linux

package fio

// probeDirectIO is not probed outside Linux: fio reports a failure itself.
func probeDirectIO(path string) (bool, error) { return true, nil }

// freeSpace is unknown outside Linux.
func freeSpace(dir string) (avail, total int64, ok bool) { return 0, 0, false }
