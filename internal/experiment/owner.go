package experiment

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// owner identifies one process on one boot of one host, so that a resume
// can tell an experiment whose process died (even by SIGKILL or a power
// cut) from one still running: the pid alone could have been reused.
type owner struct {
	Host  string
	Boot  string // /proc/sys/kernel/random/boot_id
	PID   int
	Start string // the process's start time in clock ticks since boot
}

func (o owner) String() string {
	return fmt.Sprintf("host=%s boot=%s pid=%d start=%s", o.Host, o.Boot, o.PID, o.Start)
}

// self is the running process.
func self() owner {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return owner{Host: host, Boot: bootID(), PID: pid, Start: processStart(pid)}
}

func parseOwner(s string) (owner, bool) {
	var o owner
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return owner{}, false
		}
		switch k {
		case "host":
			o.Host = v
		case "boot":
			o.Boot = v
		case "pid":
			n, err := strconv.Atoi(v)
			if err != nil {
				return owner{}, false
			}
			o.PID = n
		case "start":
			o.Start = v
		}
	}
	return o, o.PID > 0
}

// liveness says whether the process o still runs: alive, dead, or
// unknown (another host, whose processes oltplab cannot see).
type liveness int

const (
	dead liveness = iota
	alive
	unknown
)

func (o owner) liveness() liveness {
	me := self()
	if o.Host != me.Host {
		return unknown
	}
	if o.Boot != me.Boot {
		return dead // the host rebooted since
	}
	start := processStart(o.PID)
	if start == "" || start != o.Start {
		return dead // gone, or the pid belongs to another process now
	}
	return alive
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// processStart is field 22 of /proc/PID/stat (starttime), "" when the
// process does not exist.
func processStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); starttime is field 22.
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// OwnerAlive reports whether the process an experiment records as its
// owner may still be running it (alive, or on another host).
func OwnerAlive(s string) bool {
	o, ok := parseOwner(s)
	return ok && o.liveness() != dead
}
