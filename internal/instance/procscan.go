package instance

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat is what oltplab reads of /proc/PID/stat (proc(5)).
type procStat struct {
	PID, PPID, PGID int
	State           byte   // R, S, D, Z, ...
	UTime, STime    uint64 // clock ticks
	CUTime, CSTime  uint64 // clock ticks of waited-for children
	StartTime       uint64 // clock ticks after boot
}

// parseProcStat parses one /proc/PID/stat line. The command name is in
// parentheses and may itself hold spaces and parentheses.
func parseProcStat(s string) (procStat, error) {
	var p procStat
	open, closeP := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closeP < open {
		return p, fmt.Errorf("proc stat %q: no command name", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return p, fmt.Errorf("proc stat: pid: %w", err)
	}
	f := strings.Fields(s[closeP+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 20 {
		return p, fmt.Errorf("proc stat of %d: %d fields after the name, want at least 20", pid, len(f))
	}
	num := func(field int) uint64 {
		v, _ := strconv.ParseUint(f[field-3], 10, 64)
		return v
	}
	p.PID, p.State = pid, f[0][0]
	p.PPID, p.PGID = int(num(4)), int(num(5))
	p.UTime, p.STime, p.CUTime, p.CSTime = num(14), num(15), num(16), num(17)
	p.StartTime = num(22)
	return p, nil
}

func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(b))
}

// processes lists the live (not zombie) processes for which keep is true.
func processes(keep func(procStat) bool) []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, err := readProcStat(pid)
		if err != nil || p.State == 'Z' || p.State == 'X' {
			continue
		}
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// descendants lists the live process pid and every live process below it
// (by parent pid). PostgreSQL's workers start sessions of their own
// (setsid), so a process group would not find them.
func descendants(pid int) []procStat {
	all := processes(func(procStat) bool { return true })
	children := map[int][]procStat{}
	var out []procStat
	for _, p := range all {
		children[p.PPID] = append(children[p.PPID], p)
		if p.PID == pid {
			out = append(out, p)
		}
	}
	for k := 0; k < len(out); k++ {
		out = append(out, children[out[k].PID]...)
	}
	return out
}

// running reports whether p is still the process it was (same start
// time: a pid may be reused) and not a zombie.
func running(p procStat) bool {
	q, err := readProcStat(p.PID)
	return err == nil && q.StartTime == p.StartTime && q.State != 'Z' && q.State != 'X'
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	p, err := readProcStat(pid)
	return err == nil && p.State != 'Z' && p.State != 'X'
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times; 100 on every
// Linux architecture Go supports.
const clockTicks = 100
