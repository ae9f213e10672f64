package sysstat

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// SectorBytes is the unit of the sector counts in /proc/diskstats: always
// 512 bytes, whatever the device's block size.
const SectorBytes = 512

// DiskStats is one line of /proc/diskstats (Documentation/admin-guide/
// iostats.rst). Counts are cumulative since boot. The millisecond fields
// are 32-bit in the kernel and wrap; see Rate.
type DiskStats struct {
	Major, Minor     uint32
	Name             string
	Reads            uint64 // completed
	ReadsMerged      uint64
	ReadSectors      uint64
	ReadMillis       uint64 // total time of all reads
	Writes           uint64 // completed
	WritesMerged     uint64
	WriteSectors     uint64
	WriteMillis      uint64
	InFlight         uint64 // a gauge, not a counter
	IOMillis         uint64 // time with at least one I/O in flight
	WeightedIOMillis uint64 // sum over I/Os of their time in flight
}

// SkipVirtualDisks is the default filter of ParseDiskstats: it drops loop
// and RAM-disk devices, which are never the storage under test.
func SkipVirtualDisks(name string) bool {
	return !strings.HasPrefix(name, "loop") && !strings.HasPrefix(name, "ram")
}

// ParseDiskstats parses /proc/diskstats, keeping the devices for which
// keep returns true (SkipVirtualDisks when keep is nil).
func ParseDiskstats(r io.Reader, keep func(name string) bool) ([]DiskStats, error) {
	if keep == nil {
		keep = SkipVirtualDisks
	}
	var out []DiskStats
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		// 14 fields up to 4.17, 18 with discards (4.18), 20 with flushes (5.5).
		if len(f) < 14 {
			return out, fmt.Errorf("diskstats line with %d fields, want at least 14", len(f))
		}
		if !keep(f[2]) {
			continue
		}
		d := DiskStats{Name: f[2]}
		maj, err1 := strconv.ParseUint(f[0], 10, 32)
		min, err2 := strconv.ParseUint(f[1], 10, 32)
		if err1 != nil || err2 != nil {
			return out, fmt.Errorf("diskstats %s: bad device number %s:%s", f[2], f[0], f[1])
		}
		d.Major, d.Minor = uint32(maj), uint32(min)
		if err := parseUints(f[3:14], &d.Reads, &d.ReadsMerged, &d.ReadSectors, &d.ReadMillis,
			&d.Writes, &d.WritesMerged, &d.WriteSectors, &d.WriteMillis,
			&d.InFlight, &d.IOMillis, &d.WeightedIOMillis); err != nil {
			return out, fmt.Errorf("diskstats %s: %w", d.Name, err)
		}
		out = append(out, d)
	}
	return out, sc.Err()
}
