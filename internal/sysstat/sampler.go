package sysstat

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// HostSample is one value of one host series over an interval: the
// metric names are those of the results store (MetricCPUIOWaitPct,
// MetricDiskReadIOPS, ...); Device names the disk or interface, "" for CPU
// and memory.
type HostSample struct {
	Metric string
	Device string
	Value  float64
}

// hostReading is one reading of the four /proc files.
type hostReading struct {
	at    time.Time
	stat  Stat
	mem   Meminfo
	disks []DiskStats
	nets  []NetDev
}

// HostSampler turns consecutive readings of /proc/stat, /proc/meminfo,
// /proc/diskstats and /proc/net/dev into per-interval samples. One
// goroutine owns it.
type HostSampler struct {
	fs   FS
	prev hostReading
	have bool
	// prevStat is the reading of /proc/stat before prev's (Stats).
	prevStat Stat
	hadTwo   bool
}

// NewHostSampler returns a sampler of the host below the FS root.
func (fs FS) NewHostSampler() *HostSampler { return &HostSampler{fs: fs} }

// Sample reads the counters at now and returns the samples of the interval
// since the previous call: none on the first call. A counter that went
// down (wrap, reset, device re-attached) leaves out that series for this
// interval (see Delta); nothing is ever negative. Memory is a gauge and is
// reported at every call but the first.
func (h *HostSampler) Sample(now time.Time) ([]HostSample, error) {
	cur, err := h.read(now)
	if err != nil {
		return nil, err
	}
	prev, had := h.prev, h.have
	h.prev, h.have = cur, true
	h.prevStat, h.hadTwo = prev.stat, had
	if !had {
		return nil, nil
	}
	return hostSamples(prev, cur), nil
}

func (h *HostSampler) read(now time.Time) (hostReading, error) {
	r := hostReading{at: now}
	var errs []error
	if f, err := h.fs.open("proc", "stat"); err != nil {
		errs = append(errs, err)
	} else {
		r.stat, err = ParseStat(f)
		f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("parse proc/stat: %w", err))
		}
	}
	if m, err := h.fs.meminfo(); err != nil {
		errs = append(errs, err)
	} else {
		r.mem = m
	}
	if f, err := h.fs.open("proc", "diskstats"); err != nil {
		errs = append(errs, err)
	} else {
		r.disks, err = ParseDiskstats(f, nil)
		f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("parse proc/diskstats: %w", err))
		}
	}
	if f, err := h.fs.open("proc", "net", "dev"); err != nil {
		errs = append(errs, err)
	} else {
		r.nets, err = ParseNetDev(f)
		f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("parse proc/net/dev: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return r, fmt.Errorf("read host counters: %w", err)
	}
	return r, nil
}

// hostSamples computes the samples between two readings.
func hostSamples(prev, cur hostReading) []HostSample {
	dt := cur.at.Sub(prev.at)
	out := make([]HostSample, 0, 16+10*len(cur.disks)+2*len(cur.nets))
	add := func(metric, device string, v float64) {
		out = append(out, HostSample{Metric: metric, Device: device, Value: v})
	}

	// CPU: percent of all cores together. user includes nice, system
	// includes irq and softirq; busy is everything but idle and iowait.
	if u, ok := CPUUsageBetween(prev.stat.Total, cur.stat.Total); ok {
		add(MetricCPUBusyPct, "", u.BusyPct())
		add(MetricCPUUserPct, "", u.User+u.Nice)
		add(MetricCPUSystemPct, "", u.System+u.IRQ+u.SoftIRQ)
		add(MetricCPUIdlePct, "", u.Idle)
		add(MetricCPUIOWaitPct, "", u.IOWait)
		add(MetricCPUStealPct, "", u.Steal)
	}

	m := cur.mem
	if m.TotalBytes > 0 {
		cache := m.CachedBytes + m.BuffersBytes
		used := uint64(0)
		if m.TotalBytes > m.FreeBytes+cache {
			used = m.TotalBytes - m.FreeBytes - cache
		}
		add(MetricMemUsedBytes, "", float64(used))
		add(MetricMemCacheBytes, "", float64(cache))
		add(MetricMemDirtyBytes, "", float64(m.DirtyBytes))
		add(MetricMemFreeBytes, "", float64(m.FreeBytes))
		add(MetricMemAvailableBytes, "", float64(m.AvailableBytes))
	}

	prevDisks := make(map[string]DiskStats, len(prev.disks))
	for _, d := range prev.disks {
		prevDisks[d.Name] = d
	}
	for _, d := range cur.disks {
		p, ok := prevDisks[d.Name]
		if !ok {
			continue // appeared in this interval
		}
		r, ok := DiskRatesBetween(p, d, dt)
		if !ok {
			continue // a counter went down: skip this interval
		}
		add(MetricDiskReadIOPS, d.Name, r.ReadIOPS)
		add(MetricDiskWriteIOPS, d.Name, r.WriteIOPS)
		add(MetricDiskReadMBps, d.Name, r.ReadBytesPerSec/1e6)
		add(MetricDiskWriteMBps, d.Name, r.WriteBytesPerSec/1e6)
		add(MetricDiskUtilPct, d.Name, r.UtilPct)
		add(MetricDiskQueueDepth, d.Name, r.AvgQueueDepth)
		// Mean time per I/O completed in the interval (read and write ms
		// over read and write count); absent when none completed, so that
		// quiet seconds do not pull the latency series towards 0.
		if ios := r.ReadIOPS + r.WriteIOPS; ios > 0 {
			add(MetricDiskLatencyMillis, d.Name, (r.ReadAwaitMillis*r.ReadIOPS+r.WriteAwaitMillis*r.WriteIOPS)/ios)
		}
		if r.ReadIOPS > 0 {
			add(MetricDiskReadLatencyMillis, d.Name, r.ReadAwaitMillis)
		}
		if r.WriteIOPS > 0 {
			add(MetricDiskWriteLatencyMillis, d.Name, r.WriteAwaitMillis)
		}
	}

	prevNets := make(map[string]NetDev, len(prev.nets))
	for _, n := range prev.nets {
		prevNets[n.Name] = n
	}
	for _, n := range cur.nets {
		p, ok := prevNets[n.Name]
		if !ok {
			continue
		}
		r, ok := NetRatesBetween(p, n, dt)
		if !ok {
			continue
		}
		add(MetricNetRxBytesPerS, n.Name, r.RxBytesPerSec)
		add(MetricNetTxBytesPerS, n.Name, r.TxBytesPerSec)
	}
	return out
}

// DeviceRoles maps the block devices holding the given directories, on
// the host below the FS root, to their roles: {"data": "/var/lib/pg",
// "wal": "/wal"} gives {"nvme0n1p2": ["data"], "nvme1n1": ["wal"]} (one
// device may have several roles). The device name is as /proc/diskstats
// spells it. Directories on no block device (tmpfs, overlay, network) are
// left out and reported in err, as are directories that cannot be
// resolved.
func (fs FS) DeviceRoles(dirs map[string]string) (map[string][]string, error) {
	out := map[string][]string{}
	var errs []error
	roles := make([]string, 0, len(dirs))
	for role := range dirs {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	for _, role := range roles {
		d, err := fs.DeviceOf(dirs[role])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s directory: %w", role, err))
			continue
		}
		if d.Name == "" {
			errs = append(errs, fmt.Errorf("%s directory %s is on %s (%s), not a block device",
				role, d.Path, d.MountSource, d.FSType))
			continue
		}
		out[d.Name] = append(out[d.Name], role)
	}
	return out, errors.Join(errs...)
}
