package sysstat

// Cores is how a set of CPUs spent an interval between two readings of
// /proc/stat, in cores (CPU-seconds per second of the interval): Used is
// everything but idle, iowait and steal (user, nice, system, irq and
// softirq: every process's and the kernel's work); Steal is the time a
// hypervisor gave to other machines while these CPUs had work; Count is
// the CPUs counted.
type Cores struct {
	Count float64
	Used  float64
	Steal float64
}

// CoresBetween is the use of the CPUs in set between two readings, all
// the online CPUs when set is empty (the totals' line). A CPU of set that
// is not in both readings (offline) is not counted; ok is false when none
// is, or no time passed.
func CoresBetween(prev, cur Stat, set []int) (Cores, bool) {
	if len(set) == 0 {
		n := float64(len(cur.PerCPU))
		u, ok := CPUUsageBetween(prev.Total, cur.Total)
		if !ok || n == 0 {
			return Cores{}, false
		}
		return Cores{Count: n, Used: n * usedPct(u) / 100, Steal: n * u.Steal / 100}, true
	}
	byCPU := func(s Stat) map[int]CPUTimes {
		m := make(map[int]CPUTimes, len(s.PerCPU))
		for _, c := range s.PerCPU {
			m[c.CPU] = c
		}
		return m
	}
	p, c := byCPU(prev), byCPU(cur)
	var out Cores
	for _, cpu := range set {
		a, okA := p[cpu]
		b, okB := c[cpu]
		if !okA || !okB {
			continue
		}
		u, ok := CPUUsageBetween(a, b)
		if !ok {
			continue
		}
		out.Count++
		out.Used += usedPct(u) / 100
		out.Steal += u.Steal / 100
	}
	return out, out.Count > 0
}

// usedPct is the share of an interval the CPU worked for this machine:
// busy less steal.
func usedPct(u CPUUsage) float64 { return u.User + u.Nice + u.System + u.IRQ + u.SoftIRQ }

// Stats returns the last two readings of /proc/stat the sampler took
// (those of the interval its last Sample reported); ok is false before
// the second.
func (h *HostSampler) Stats() (prev, cur Stat, ok bool) {
	return h.prevStat, h.prev.stat, h.have && h.hadTwo
}
