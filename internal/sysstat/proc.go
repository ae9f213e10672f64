package sysstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is what oltplab reads of one process's /proc/PID/stat (proc(5)).
type Proc struct {
	PID, PPID int
	Comm      string // the command name, without its parentheses
	State     byte   // R, S, D, Z, ...
	// UTime, STime: its own CPU time; CUTime, CSTime: that of the
	// children it waited for. Clock ticks (USER_HZ).
	UTime, STime, CUTime, CSTime uint64
	StartTime                    uint64 // clock ticks after boot
}

// CPUSeconds is the process's CPU time and its waited-for children's.
func (p Proc) CPUSeconds() float64 {
	return float64(p.UTime+p.STime+p.CUTime+p.CSTime) / userHZ
}

// userHZ is the unit of /proc/PID/stat times: 100 on every Linux
// architecture Go supports.
const userHZ = 100

// ParseProc parses one /proc/PID/stat line. The command name is in
// parentheses and may itself hold spaces and parentheses.
func ParseProc(s string) (Proc, error) {
	var p Proc
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
	p.PID, p.Comm, p.State = pid, s[open+1:closeP], f[0][0]
	p.PPID = int(num(4))
	p.UTime, p.STime, p.CUTime, p.CSTime = num(14), num(15), num(16), num(17)
	p.StartTime = num(22)
	return p, nil
}

// ReadProc reads process pid of this host.
func ReadProc(pid int) (Proc, error) { return live.ReadProc(pid) }

// ReadProc reads process pid below the FS root.
func (fs FS) ReadProc(pid int) (Proc, error) {
	b, err := os.ReadFile(filepath.Join(fs.root, "proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Proc{}, err
	}
	return ParseProc(string(b))
}

// TreeCPUSeconds is the CPU time of process root (which must still be
// the process that started at startTime: a pid may be reused) and of
// every live process below it, each with the children it waited for: the
// CPU a server's processes used since it started, those that exited
// included once their parent waited for them.
func TreeCPUSeconds(root int, startTime uint64) (float64, error) {
	return live.TreeCPUSeconds(root, startTime)
}

// TreeCPUSeconds is the package function below the FS root.
func (fs FS) TreeCPUSeconds(root int, startTime uint64) (float64, error) {
	entries, err := os.ReadDir(filepath.Join(fs.root, "proc"))
	if err != nil {
		return 0, err
	}
	children := map[int][]Proc{}
	var top *Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, err := fs.ReadProc(pid)
		if err != nil || p.State == 'Z' || p.State == 'X' {
			continue
		}
		children[p.PPID] = append(children[p.PPID], p)
		if pid == root {
			top = &p
		}
	}
	if top == nil || top.StartTime != startTime {
		return 0, fmt.Errorf("process %d is gone", root)
	}
	total := 0.0
	for queue := []Proc{*top}; len(queue) > 0; queue = queue[1:] {
		total += queue[0].CPUSeconds()
		queue = append(queue, children[queue[0].PID]...)
	}
	return total, nil
}
