//go:build unix

package driver

import "syscall"

// processCPUSeconds is the user plus system CPU time of this process
// (getrusage RUSAGE_SELF), the driver's own cost. With an embedded
// database (SQLite) it includes the database's work.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
