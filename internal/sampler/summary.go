package sampler

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// StepSummary is what the host and the database did during one step of a
// run (a window of the time axis), for reports and `oltplab monitor`.
type StepSummary struct {
	FromMillis int64 `json:"from_ms"`
	ToMillis   int64 `json:"to_ms"`
	Seconds    int   `json:"seconds"` // host intervals in the window

	CPU     CPUSummary      `json:"cpu"`
	Memory  MemorySummary   `json:"memory"`
	Devices []DeviceSummary `json:"devices,omitempty"`
	Network []NetSummary    `json:"network,omitempty"`

	// AvgActiveSessions is the average number of non-idle sessions (DB
	// time per second); AvgIdleSessions those waiting for the client's
	// next statement.
	AvgActiveSessions float64 `json:"avg_active_sessions"`
	AvgIdleSessions   float64 `json:"avg_idle_sessions"`
	// Waits are the wait classes by share of sampled non-idle session
	// time, largest first; TopEvents the engine's own events likewise.
	Waits     []WaitShare `json:"waits,omitempty"`
	TopEvents []WaitShare `json:"top_events,omitempty"`
	// AvgWaits are average wait times the engine measures itself
	// (PostgreSQL ms per WAL sync, MariaDB ms per row lock wait).
	AvgWaits []AvgWaitSummary `json:"avg_waits,omitempty"`

	// OwnIO is the database's own I/O (Options.OwnIO) over all devices;
	// nil when it was not sampled.
	OwnIO *OwnIOSummary `json:"own_io,omitempty"`

	// SamplerCPUPct is the sampler's own CPU, percent of one core.
	SamplerCPUPct float64 `json:"sampler_cpu_pct"`

	// CPUUse is who used the CPU: the server, oltplab, and the foreign
	// rest; nil when it was not sampled (results stored before it).
	CPUUse *CPUUse `json:"cpu_use,omitempty"`
}

// OwnIOSummary is the database's own I/O, summed over devices and averaged
// over the window's seconds.
type OwnIOSummary struct {
	ReadIOPS  float64 `json:"read_iops"`
	WriteIOPS float64 `json:"write_iops"`
	ReadMBps  float64 `json:"read_mbps"`
	WriteMBps float64 `json:"write_mbps"`
}

// CPUSummary averages of all cores, percent.
type CPUSummary struct {
	BusyPct   float64 `json:"busy_pct"`
	UserPct   float64 `json:"user_pct"`
	SystemPct float64 `json:"system_pct"`
	IdlePct   float64 `json:"idle_pct"`
	IOWaitPct float64 `json:"iowait_pct"`
	StealPct  float64 `json:"steal_pct"`
}

// MemorySummary averages of the memory gauges.
type MemorySummary struct {
	UsedBytes  float64 `json:"used_bytes"`
	CacheBytes float64 `json:"cache_bytes"`
	DirtyBytes float64 `json:"dirty_bytes"`
	FreeBytes  float64 `json:"free_bytes"`
}

// DeviceSummary is one block device over the window.
type DeviceSummary struct {
	Device     string   `json:"device"`
	Roles      []string `json:"roles,omitempty"` // "data", "wal"
	ReadIOPS   float64  `json:"read_iops"`
	WriteIOPS  float64  `json:"write_iops"`
	ReadMBps   float64  `json:"read_mbps"`
	WriteMBps  float64  `json:"write_mbps"`
	UtilPct    float64  `json:"util_pct"`
	QueueDepth float64  `json:"queue_depth"`
	// LatencyMillis is the mean of the per-second average latencies of
	// the seconds with I/O; LatencyP99Millis is the 99th percentile of
	// those per-second averages, not a per-I/O percentile.
	LatencyMillis    float64 `json:"latency_ms"`
	LatencyP99Millis float64 `json:"latency_p99_of_per_second_avg_ms"`
}

// LatencyP99Label is how reports must label DeviceSummary.LatencyP99Millis.
const LatencyP99Label = "p99 of per-second averages, not a per-I/O percentile"

// NetSummary is one interface over the window.
type NetSummary struct {
	Interface   string  `json:"interface"`
	RxBytesPerS float64 `json:"rx_bytes_per_s"`
	TxBytesPerS float64 `json:"tx_bytes_per_s"`
}

// WaitShare is one wait class (or event) and its share of sampled
// non-idle session time.
type WaitShare struct {
	Name     string  `json:"name"`
	SharePct float64 `json:"share_pct"`
	// AvgSessions is the average number of sessions in it.
	AvgSessions float64 `json:"avg_sessions"`
}

// AvgWaitSummary is an engine-measured average wait over the window,
// weighted by the number of waits.
type AvgWaitSummary struct {
	Label      string  `json:"label"`
	AvgMillis  float64 `json:"avg_ms"`
	EventsPerS float64 `json:"events_per_s"`
}

// Summarize summarises the samples of intervals ending in (from, to].
func Summarize(samples []store.Sample, from, to time.Duration) StepSummary {
	lo, hi := from.Milliseconds(), to.Milliseconds()
	sum := StepSummary{FromMillis: lo, ToMillis: hi}
	type acc struct {
		sum float64
		n   int
		all []float64 // latency only
	}
	accs := map[[2]string]*acc{}
	get := func(metric, dev string) *acc {
		k := [2]string{metric, dev}
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
		}
		return a
	}
	roles := map[string][]string{}
	for _, s := range samples {
		if r, ok := strings.CutPrefix(s.Metric, MetricDiskRolePrefix); ok {
			roles[s.Device] = append(roles[s.Device], r) // recorded once, at the start
			continue
		}
		if s.TMillis <= lo || s.TMillis > hi {
			continue
		}
		a := get(s.Metric, s.Device)
		a.sum += s.Value
		a.n++
		if s.Metric == sysstat.MetricDiskLatencyMillis {
			a.all = append(a.all, s.Value)
		}
	}
	avg := func(metric, dev string) float64 {
		if a := accs[[2]string{metric, dev}]; a != nil && a.n > 0 {
			return a.sum / float64(a.n)
		}
		return 0
	}
	total := func(metric, dev string) float64 {
		if a := accs[[2]string{metric, dev}]; a != nil {
			return a.sum
		}
		return 0
	}
	if a := accs[[2]string{sysstat.MetricCPUBusyPct, ""}]; a != nil {
		sum.Seconds = a.n
	}
	sum.CPU = CPUSummary{BusyPct: avg(sysstat.MetricCPUBusyPct, ""), UserPct: avg(sysstat.MetricCPUUserPct, ""),
		SystemPct: avg(sysstat.MetricCPUSystemPct, ""), IdlePct: avg(sysstat.MetricCPUIdlePct, ""),
		IOWaitPct: avg(sysstat.MetricCPUIOWaitPct, ""), StealPct: avg(sysstat.MetricCPUStealPct, "")}
	sum.Memory = MemorySummary{UsedBytes: avg(sysstat.MetricMemUsedBytes, ""), CacheBytes: avg(sysstat.MetricMemCacheBytes, ""),
		DirtyBytes: avg(sysstat.MetricMemDirtyBytes, ""), FreeBytes: avg(sysstat.MetricMemFreeBytes, "")}
	sum.SamplerCPUPct = avg(MetricSamplerCPUPct, "")
	sum.CPUUse = summarizeCPUUse(samples, lo, hi)
	// The database's own I/O: per device, averaged over its seconds, then
	// summed over devices.
	for k, a := range accs {
		if !strings.HasPrefix(k[0], "own_") || a.n == 0 {
			continue
		}
		if sum.OwnIO == nil {
			sum.OwnIO = &OwnIOSummary{}
		}
		v := a.sum / float64(a.n)
		switch k[0] {
		case MetricOwnReadIOPS:
			sum.OwnIO.ReadIOPS += v
		case MetricOwnWriteIOPS:
			sum.OwnIO.WriteIOPS += v
		case MetricOwnReadMBps:
			sum.OwnIO.ReadMBps += v
		case MetricOwnWriteMBps:
			sum.OwnIO.WriteMBps += v
		}
	}

	// Wait classes: the per-interval averages are summed over the
	// intervals that had wait samples, so shares weigh every interval alike.
	waitSecs := 0.0
	if a := accs[[2]string{MetricDBWaitSamples, ""}]; a != nil {
		waitSecs = float64(a.n)
	}
	weights := map[[2]string]float64{} // (label, t) -> db_wait_events_per_s
	for _, s := range samples {
		if s.Metric == MetricDBWaitEventsPerS && s.TMillis > lo && s.TMillis <= hi {
			weights[[2]string{s.Device, strconv.FormatInt(s.TMillis, 10)}] = s.Value
		}
	}
	var active float64
	var classes, events []WaitShare
	for k, a := range accs {
		switch k[0] {
		case MetricDBActiveSessions:
			active += a.sum
			classes = append(classes, WaitShare{Name: k[1], AvgSessions: a.sum})
		case MetricDBWaitEventSessions:
			events = append(events, WaitShare{Name: k[1], AvgSessions: a.sum})
		case sysstat.MetricDiskReadIOPS:
			d := DeviceSummary{Device: k[1], Roles: roles[k[1]],
				ReadIOPS: avg(sysstat.MetricDiskReadIOPS, k[1]), WriteIOPS: avg(sysstat.MetricDiskWriteIOPS, k[1]),
				ReadMBps: avg(sysstat.MetricDiskReadMBps, k[1]), WriteMBps: avg(sysstat.MetricDiskWriteMBps, k[1]),
				UtilPct: avg(sysstat.MetricDiskUtilPct, k[1]), QueueDepth: avg(sysstat.MetricDiskQueueDepth, k[1]),
				LatencyMillis: avg(sysstat.MetricDiskLatencyMillis, k[1])}
			if l := accs[[2]string{sysstat.MetricDiskLatencyMillis, k[1]}]; l != nil {
				d.LatencyP99Millis = percentile(l.all, 99)
			}
			sum.Devices = append(sum.Devices, d)
		case sysstat.MetricNetRxBytesPerS:
			sum.Network = append(sum.Network, NetSummary{Interface: k[1],
				RxBytesPerS: avg(sysstat.MetricNetRxBytesPerS, k[1]), TxBytesPerS: avg(sysstat.MetricNetTxBytesPerS, k[1])})
		case MetricDBAvgWaitMillis:
			// Weighted by the number of waits per interval: Σ avg·count / Σ count.
			var w, c float64
			for _, s := range samples {
				if s.TMillis <= lo || s.TMillis > hi || s.Device != k[1] {
					continue
				}
				switch s.Metric {
				case MetricDBAvgWaitMillis:
					w += s.Value * weights[[2]string{k[1], strconv.FormatInt(s.TMillis, 10)}]
				case MetricDBWaitEventsPerS:
					c += s.Value
				}
			}
			if c > 0 {
				sum.AvgWaits = append(sum.AvgWaits, AvgWaitSummary{Label: k[1], AvgMillis: w / c,
					EventsPerS: total(MetricDBWaitEventsPerS, k[1]) / math.Max(1, float64(sum.Seconds))})
			}
		}
	}
	if waitSecs > 0 {
		sum.AvgActiveSessions = active / waitSecs
		sum.AvgIdleSessions = total(MetricDBIdleSessions, "") / waitSecs
		for i := range classes {
			classes[i].SharePct = 100 * classes[i].AvgSessions / active
			classes[i].AvgSessions /= waitSecs
		}
		for i := range events {
			events[i].SharePct = 100 * events[i].AvgSessions / active
			events[i].AvgSessions /= waitSecs
		}
	}
	byShare := func(ws []WaitShare) {
		sort.Slice(ws, func(i, j int) bool {
			if ws[i].SharePct != ws[j].SharePct {
				return ws[i].SharePct > ws[j].SharePct
			}
			return ws[i].Name < ws[j].Name
		})
	}
	byShare(classes)
	byShare(events)
	if len(events) > 10 {
		events = events[:10]
	}
	sum.Waits, sum.TopEvents = classes, events
	sort.Slice(sum.Devices, func(i, j int) bool { return sum.Devices[i].Device < sum.Devices[j].Device })
	sort.Slice(sum.Network, func(i, j int) bool { return sum.Network[i].Interface < sum.Network[j].Interface })
	sort.Slice(sum.AvgWaits, func(i, j int) bool { return sum.AvgWaits[i].Label < sum.AvgWaits[j].Label })
	return sum
}

// percentile is the nearest-rank percentile of vs (0 when empty).
func percentile(vs []float64, p float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(0, min(len(s)-1, rank-1))]
}
