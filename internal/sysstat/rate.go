package sysstat

import "time"

// Counters from /proc only go up, until they do not: a 32-bit field wraps
// (the millisecond fields of /proc/diskstats are 32-bit on every kernel),
// a device is detached and re-attached, an interface is re-created, the
// host reboots under a long-running monitor. A decrease cannot tell a wrap
// from a reset, and after a reset the counter has counted for an unknown
// part of the interval. So the choice here is: a counter that went down
// makes the interval unusable, and the helpers report ok == false for it;
// the sampler skips that one sample (a gap in the series) and takes the
// next interval from the new value. A rate is never negative and never a
// spike of 2^32.

// Delta is cur - prev for a cumulative counter; ok is false when the
// counter went down (a wrap or a reset: skip the interval).
func Delta(prev, cur uint64) (d uint64, ok bool) {
	if cur < prev {
		return 0, false
	}
	return cur - prev, true
}

// Rate is the per-second rate of a cumulative counter read twice, dt
// apart; ok is false when the counter went down or dt is not positive.
func Rate(prev, cur uint64, dt time.Duration) (perSecond float64, ok bool) {
	d, ok := Delta(prev, cur)
	if !ok || dt <= 0 {
		return 0, false
	}
	return float64(d) / dt.Seconds(), true
}

// CPUUsage is how a CPU's time was spent over an interval, in percent;
// the eight fields sum to 100.
type CPUUsage struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal float64
}

// BusyPct is the time doing work: everything but idle and iowait.
func (u CPUUsage) BusyPct() float64 { return 100 - u.Idle - u.IOWait }

// CPUUsageBetween is the CPU usage between two readings of the same CPU
// (or of the totals). ok is false when the total went down (a reset) or
// no time passed.
//
// One exception to "a decrease skips the interval": the kernel documents
// that idle and iowait may go backwards on tickless kernels
// (Documentation/filesystems/proc.rst, "iowait ... will decrease in
// certain conditions"). A single field that went down is counted as 0 for
// the interval, and the percentages are taken over the fields' own sum.
func CPUUsageBetween(prev, cur CPUTimes) (CPUUsage, bool) {
	if cur.Total() < prev.Total() {
		return CPUUsage{}, false
	}
	clamped := func(p, c uint64) float64 {
		if c < p {
			return 0
		}
		return float64(c - p)
	}
	d := [8]float64{
		clamped(prev.User, cur.User), clamped(prev.Nice, cur.Nice), clamped(prev.System, cur.System),
		clamped(prev.Idle, cur.Idle), clamped(prev.IOWait, cur.IOWait), clamped(prev.IRQ, cur.IRQ),
		clamped(prev.SoftIRQ, cur.SoftIRQ), clamped(prev.Steal, cur.Steal),
	}
	var sum float64
	for _, v := range d {
		sum += v
	}
	if sum == 0 {
		return CPUUsage{}, false
	}
	pct := func(v float64) float64 { return 100 * v / sum }
	return CPUUsage{
		User: pct(d[0]), Nice: pct(d[1]), System: pct(d[2]), Idle: pct(d[3]),
		IOWait: pct(d[4]), IRQ: pct(d[5]), SoftIRQ: pct(d[6]), Steal: pct(d[7]),
	}, true
}

// DiskRates are iostat's figures for one device over an interval.
type DiskRates struct {
	ReadIOPS, WriteIOPS               float64
	ReadBytesPerSec, WriteBytesPerSec float64
	// ReadAwaitMillis and WriteAwaitMillis are the mean time of the I/Os
	// completed in the interval, queueing included (iostat r_await,
	// w_await); 0 when none completed.
	ReadAwaitMillis, WriteAwaitMillis float64
	UtilPct                           float64 // time with I/O in flight (iostat %util; not saturation on SSDs)
	AvgQueueDepth                     float64 // iostat aqu-sz
	InFlight                          uint64  // at the second reading
}

// DiskRatesBetween computes DiskRates from two readings of one device, dt
// apart. ok is false when the readings are of different devices, dt is
// not positive, or any counter went down (skip the interval).
func DiskRatesBetween(prev, cur DiskStats, dt time.Duration) (DiskRates, bool) {
	if dt <= 0 || prev.Name != cur.Name || prev.Major != cur.Major || prev.Minor != cur.Minor {
		return DiskRates{}, false
	}
	var d [8]uint64
	pairs := [8][2]uint64{
		{prev.Reads, cur.Reads}, {prev.ReadSectors, cur.ReadSectors}, {prev.ReadMillis, cur.ReadMillis},
		{prev.Writes, cur.Writes}, {prev.WriteSectors, cur.WriteSectors}, {prev.WriteMillis, cur.WriteMillis},
		{prev.IOMillis, cur.IOMillis}, {prev.WeightedIOMillis, cur.WeightedIOMillis},
	}
	for i, p := range pairs {
		v, ok := Delta(p[0], p[1])
		if !ok {
			return DiskRates{}, false
		}
		d[i] = v
	}
	sec := dt.Seconds()
	ms := sec * 1000
	r := DiskRates{
		ReadIOPS:         float64(d[0]) / sec,
		ReadBytesPerSec:  float64(d[1]) * SectorBytes / sec,
		WriteIOPS:        float64(d[3]) / sec,
		WriteBytesPerSec: float64(d[4]) * SectorBytes / sec,
		UtilPct:          min(100, 100*float64(d[6])/ms),
		AvgQueueDepth:    float64(d[7]) / ms,
		InFlight:         cur.InFlight,
	}
	if d[0] > 0 {
		r.ReadAwaitMillis = float64(d[2]) / float64(d[0])
	}
	if d[3] > 0 {
		r.WriteAwaitMillis = float64(d[5]) / float64(d[3])
	}
	return r, true
}

// NetRates are one interface's throughput over an interval.
type NetRates struct {
	RxBytesPerSec, TxBytesPerSec     float64
	RxPacketsPerSec, TxPacketsPerSec float64
}

// NetRatesBetween computes NetRates from two readings of one interface,
// dt apart; ok is false as for DiskRatesBetween.
func NetRatesBetween(prev, cur NetDev, dt time.Duration) (NetRates, bool) {
	if prev.Name != cur.Name {
		return NetRates{}, false
	}
	var r NetRates
	var ok [4]bool
	r.RxBytesPerSec, ok[0] = Rate(prev.RxBytes, cur.RxBytes, dt)
	r.TxBytesPerSec, ok[1] = Rate(prev.TxBytes, cur.TxBytes, dt)
	r.RxPacketsPerSec, ok[2] = Rate(prev.RxPackets, cur.RxPackets, dt)
	r.TxPacketsPerSec, ok[3] = Rate(prev.TxPackets, cur.TxPackets, dt)
	if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
		return NetRates{}, false
	}
	return r, true
}
