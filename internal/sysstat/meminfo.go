package sysstat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Meminfo is the part of /proc/meminfo the host samplers record.
type Meminfo struct {
	TotalBytes     uint64
	FreeBytes      uint64
	AvailableBytes uint64 // estimate of memory available without swapping (kernel 3.14+)
	CachedBytes    uint64 // page cache
	BuffersBytes   uint64
	DirtyBytes     uint64 // waiting to be written back
}

// ParseMeminfo parses /proc/meminfo.
func ParseMeminfo(r io.Reader) (Meminfo, error) {
	var m Meminfo
	fields := map[string]*uint64{
		"MemTotal": &m.TotalBytes, "MemFree": &m.FreeBytes, "MemAvailable": &m.AvailableBytes,
		"Cached": &m.CachedBytes, "Buffers": &m.BuffersBytes, "Dirty": &m.DirtyBytes,
	}
	seenTotal := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		dst, want := fields[key]
		if !want {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return m, fmt.Errorf("%s: no value", key)
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s: %w", key, err)
		}
		if len(f) > 1 {
			if f[1] != "kB" {
				return m, fmt.Errorf("%s: unknown unit %q", key, f[1])
			}
			v *= 1024 // the kernel's "kB" is KiB
		}
		*dst = v
		seenTotal = seenTotal || key == "MemTotal"
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if !seenTotal {
		return m, errors.New("no MemTotal")
	}
	return m, nil
}
