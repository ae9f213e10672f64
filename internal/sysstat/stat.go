package sysstat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CPUTimes are the cumulative times of /proc/stat, in USER_HZ ticks
// (jiffies, 1/100 s on practically every kernel). User includes guest
// time, Nice includes guest_nice, as the kernel counts them.
type CPUTimes struct {
	CPU     int // CPU number; -1 for the total of all CPUs
	User    uint64
	Nice    uint64
	System  uint64
	Idle    uint64
	IOWait  uint64
	IRQ     uint64
	SoftIRQ uint64
	Steal   uint64
}

// Total is the sum of the eight times.
func (c CPUTimes) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// Stat is the part of /proc/stat the host samplers record.
type Stat struct {
	Total           CPUTimes
	PerCPU          []CPUTimes // online CPUs, in file order (offline CPUs are absent)
	ContextSwitches uint64
	ProcsRunning    uint64
	ProcsBlocked    uint64 // waiting for I/O
}

// ParseStat parses /proc/stat.
func ParseStat(r io.Reader) (Stat, error) {
	var s Stat
	seenTotal := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024) // the intr line of a big host is long
	for sc.Scan() {
		line := sc.Text()
		key, rest, _ := strings.Cut(line, " ")
		switch {
		case key == "cpu":
			t, err := parseCPULine(rest)
			if err != nil {
				return s, fmt.Errorf("cpu line: %w", err)
			}
			t.CPU = -1
			s.Total, seenTotal = t, true
		case strings.HasPrefix(key, "cpu"):
			n, err := strconv.Atoi(key[3:])
			if err != nil {
				return s, fmt.Errorf("%s line: bad CPU number", key)
			}
			t, err := parseCPULine(rest)
			if err != nil {
				return s, fmt.Errorf("%s line: %w", key, err)
			}
			t.CPU = n
			s.PerCPU = append(s.PerCPU, t)
		case key == "ctxt", key == "procs_running", key == "procs_blocked":
			v, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				return s, fmt.Errorf("%s line: %w", key, err)
			}
			switch key {
			case "ctxt":
				s.ContextSwitches = v
			case "procs_running":
				s.ProcsRunning = v
			default:
				s.ProcsBlocked = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	if !seenTotal {
		return s, errors.New("no cpu line")
	}
	return s, nil
}

// parseCPULine reads user nice system idle [iowait irq softirq steal ...];
// kernels older than 2.6.11 have fewer columns, the missing ones stay 0.
func parseCPULine(rest string) (CPUTimes, error) {
	var t CPUTimes
	f := strings.Fields(rest)
	if len(f) < 4 {
		return t, fmt.Errorf("%d columns, want at least 4", len(f))
	}
	err := parseUints(f, &t.User, &t.Nice, &t.System, &t.Idle, &t.IOWait, &t.IRQ, &t.SoftIRQ, &t.Steal)
	return t, err
}
