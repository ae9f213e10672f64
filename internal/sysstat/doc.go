// Package sysstat is the host side of oltplab's measurements: the host
// context recorded with every result (CPU, memory, kernel, OS,
// virtualization, the storage device under a data directory) and the
// parsers and rate arithmetic behind the per-second host samplers (CPU
// time, memory, disk and network counters from /proc).
//
// Reading is kept apart from parsing: every parser is a pure function over
// an io.Reader, tested on files captured from real hosts (testdata/), and
// the readers go through an FS rooted at "/" on a live host or at a
// captured tree in tests, as github.com/prometheus/procfs does.
//
// It must not import internal/cli, internal/store, internal/driver or any
// dialect package: it knows the host, not what runs on it.
package sysstat
