package instance

import (
	"fmt"
	"strings"
)

// Control is how one piece of the spec was put in place, recorded in the
// instance's description (and so with every result measured on it).
type Control struct {
	Name      string `json:"name"`                // cpus, memory, memory_limit, io_limit, cpu_accounting, io_accounting
	Requested string `json:"requested,omitempty"` // as the spec gave it
	Method    string `json:"method"`              // e.g. "cgroup v1 cpuset", "sched_setaffinity", "none"
	Where     string `json:"where,omitempty"`     // the cgroup directory or the server setting
	Note      string `json:"note,omitempty"`      // why a weaker method, or how it binds
}

func method(v2 bool, what string) string {
	if v2 {
		return "cgroup v2 " + what
	}
	return "cgroup v1 " + what
}

// applyControls makes the instance's cgroups and applies the spec's cpus,
// io_limit (on the whole disks given) and memory_limit. cpus fall back to
// the CPU affinity of the server's processes; io_limit and memory_limit
// have no fallback and fail with KindControl.
func (i *Instance) applyControls(disks []string) error {
	s := i.spec
	want := []string{ctlCPUAcct, ctlBlkio}
	if s.CPUs != "" {
		want = append(want, ctlCPUSet)
	}
	if s.MemoryLimit > 0 {
		want = append(want, ctlMemory)
	}
	hs, err := liveHierarchies()
	if err != nil {
		i.notes = append(i.notes, "cgroups: "+err.Error())
	}
	cg, why := newCgroup(hs, i.id, want)
	i.cg = cg

	if s.CPUs != "" {
		cpus, _ := ParseCPUList(s.CPUs) // valid: Validate parsed it
		c := Control{Name: "cpus", Requested: cpus.String()}
		if d, v2, ok := cg.dir(ctlCPUSet); ok {
			if err := cg.setCPUs(cpus); err != nil {
				return errorf(KindControl, "cpus %s: %v", cpus, err)
			}
			c.Method, c.Where = method(v2, "cpuset"), d
		} else {
			i.placement.cpus = cpus
			c.Method = "sched_setaffinity"
			c.Note = "inherited by every server process; " + why[ctlCPUSet]
		}
		i.controls = append(i.controls, c)
	}
	if !s.IOLimit.IsZero() {
		c := Control{Name: "io_limit", Requested: s.IOLimit.String() + " on " + strings.Join(disks, ", ")}
		d, v2, ok := cg.dir(ctlBlkio)
		if !ok {
			return errorf(KindControl, "io_limit needs a writable cgroup blkio (v1) or io (v2) controller: %s", why[ctlBlkio])
		}
		if err := cg.setIOLimit(disks, s.IOLimit); err != nil {
			return errorf(KindControl, "io_limit: %v", err)
		}
		c.Method, c.Where = method(v2, "blkio throttle"), d
		if v2 {
			c.Method = method(v2, "io.max")
		} else {
			c.Note = "v1 throttles direct and synchronous I/O only; " + i.eng.ioLimitNote()
		}
		i.controls = append(i.controls, c)
	}
	if s.MemoryLimit > 0 {
		c := Control{Name: "memory_limit", Requested: s.MemoryLimit.String()}
		d, v2, ok := cg.dir(ctlMemory)
		if !ok {
			return errorf(KindControl, "memory_limit needs a writable cgroup memory controller: %s", why[ctlMemory])
		}
		if err := cg.setMemoryLimit(s.MemoryLimit.Bytes()); err != nil {
			return errorf(KindControl, "memory_limit: %v", err)
		}
		c.Method, c.Where = method(v2, "memory"), d
		c.Note = "server processes and their page cache"
		i.controls = append(i.controls, c)
	}
	i.controls = append(i.controls, i.memoryControl())

	acct := Control{Name: "cpu_accounting", Method: "/proc (the server's process tree)", Note: why[ctlCPUAcct]}
	if d, v2, ok := cg.dir(ctlCPUAcct); ok {
		acct = Control{Name: "cpu_accounting", Method: method(v2, "cpuacct"), Where: d}
		if v2 {
			acct.Method = method(v2, "cpu.stat")
		}
	}
	io := Control{Name: "io_accounting", Method: "none", Note: why[ctlBlkio]}
	if d, v2, ok := cg.dir(ctlBlkio); ok {
		io = Control{Name: "io_accounting", Method: method(v2, "io.stat"), Where: d}
		if !v2 {
			io.Method = method(v2, "blkio.throttle.io_serviced")
			io.Note = "counted once a throttle is set on the device"
		}
	}
	i.controls = append(i.controls, acct, io)

	if err := cg.open(); err != nil {
		return errorf(KindControl, "%v", err)
	}
	pl := cg.placement()
	pl.cpus = i.placement.cpus
	i.placement = pl
	return nil
}

// memoryControl describes how memory was given to the engine.
func (i *Instance) memoryControl() Control {
	c := Control{Name: "memory", Method: "engine setting " + i.eng.memorySetting()}
	if i.spec.Memory > 0 {
		c.Requested = i.spec.Memory.String()
	} else {
		c.Note = "engine default"
	}
	return c
}

func (c Control) String() string {
	s := fmt.Sprintf("%s: %s", c.Name, c.Method)
	if c.Requested != "" {
		s = fmt.Sprintf("%s %s: %s", c.Name, c.Requested, c.Method)
	}
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}
