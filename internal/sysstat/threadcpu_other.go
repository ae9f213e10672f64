//go:build !linux

package sysstat

import "time"

// ThreadCPUTime is not available on this system: ok is false.
func ThreadCPUTime() (time.Duration, bool) { return 0, false }

// ProcessCPUTime is not available on this system: ok is false.
func ProcessCPUTime() (time.Duration, bool) { return 0, false }
