package sysstat

import (
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPUTime is the user plus system CPU time the calling OS thread has
// used (getrusage RUSAGE_THREAD). The caller must hold its thread with
// runtime.LockOSThread for two readings to be of the same thread. ok is
// false where the kernel does not tell.
func ThreadCPUTime() (time.Duration, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
