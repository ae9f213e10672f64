package sysstat

import (
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPUTime is the user plus system CPU time the calling OS thread has
// used (clock_gettime CLOCK_THREAD_CPUTIME_ID: the scheduler's own count,
// to the nanosecond, including the slice running now, which getrusage
// RUSAGE_THREAD leaves out until the next tick). The caller must hold its
// thread with runtime.LockOSThread for two readings to be of the same
// thread. ok is false where the kernel does not tell.
func ThreadCPUTime() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// ProcessCPUTime is the user plus system CPU time of this whole process,
// every thread included (getrusage RUSAGE_SELF): an embedded database's
// work is in it. ok is false where the kernel does not tell.
func ProcessCPUTime() (time.Duration, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
