package sampler

import (
	"math"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// cpuAccount samples who used the CPU in each host interval: the host's
// used cores, oltplab's own process and helpers, the server's processes
// and the foreign rest. It reads the processes' CPU times right after
// each reading of /proc/stat, so that all of them cover the same interval.
type cpuAccount struct {
	s         *Sampler
	at        time.Time
	own       time.Duration // this process's CPU time at at
	ownOK     bool
	helpers   func() (float64, error) // nil: none (or no longer read)
	helpersAt float64
	server    func() (float64, error) // nil: not read (or no longer)
	serverAt  float64
	serverOK  bool
	elsewhere bool
	cpus      []int
	cpuList   string
}

// newCPUAccount starts the account at now, the time of the host
// sampler's first reading.
func (s *Sampler) newCPUAccount(now time.Time) *cpuAccount {
	a := &cpuAccount{s: s, at: now, server: s.opts.ServerCPU, helpers: s.opts.Helpers, elsewhere: s.opts.ServerElsewhere, cpus: s.opts.CPUs}
	if len(a.cpus) > 0 {
		a.cpuList = cpuList(a.cpus)
	}
	a.own, a.ownOK = sysstat.ProcessCPUTime()
	a.readHelpers()
	a.readServer()
	return a
}

// readHelpers reads oltplab's helper processes' CPU time into helpersAt
// and returns how much it grew; a probe that fails is given up, with a
// warning, and the CPU its process uses from then on is foreign.
func (a *cpuAccount) readHelpers() float64 {
	if a.helpers == nil {
		return 0
	}
	v, err := a.helpers()
	if err != nil {
		a.s.warn("read the CPU time of oltplab's helper process (a latency layer)", err)
		a.helpers = nil
		return 0
	}
	grew := max(v-a.helpersAt, 0)
	a.helpersAt = v
	return grew
}

// readServer reads the server's CPU time into serverAt; a probe that
// fails is given up, with a warning.
func (a *cpuAccount) readServer() {
	a.serverOK = false
	if a.server == nil {
		return
	}
	v, err := a.server()
	if err != nil {
		a.s.warn("read the database server's CPU time", err)
		a.server = nil
		return
	}
	a.serverAt, a.serverOK = v, true
}

// sample returns the account of the interval that ended at now, when the
// host sampler h has just read /proc/stat.
func (a *cpuAccount) sample(now time.Time, h *sysstat.HostSampler) []timed {
	dt := now.Sub(a.at).Seconds()
	own, ownOK := sysstat.ProcessCPUTime()
	helpers := a.readHelpers()
	prevServer, prevServerOK := a.serverAt, a.serverOK
	a.readServer()
	prevOwn, prevOwnOK := a.own, a.ownOK
	a.at, a.own, a.ownOK = now, own, ownOK

	prev, cur, ok := h.Stats()
	if !ok || dt <= 0 || !ownOK || !prevOwnOK || own < prevOwn {
		return nil
	}
	host, ok := sysstat.CoresBetween(prev, cur, nil)
	if !ok {
		return nil
	}
	var out []timed
	add := func(metric, device string, v float64) {
		out = append(out, timed{at: now, s: store.Sample{Source: store.SourceHost, Metric: metric, Device: device, Value: v}})
	}
	oltplab := ((own - prevOwn).Seconds() + helpers) / dt
	add(MetricHostCores, "", host.Count)
	add(MetricUsedCores, "", host.Used)
	add(MetricOltplabCores, "", oltplab)
	known := a.elsewhere
	server := 0.0
	if a.serverOK && prevServerOK && a.serverAt >= prevServer {
		server = (a.serverAt - prevServer) / dt
		add(MetricServerCores, "", server)
		known = true
	}
	if known {
		add(MetricForeignCores, "", host.Used-server-oltplab)
	}
	if len(a.cpus) > 0 {
		if set, ok := sysstat.CoresBetween(prev, cur, a.cpus); ok {
			add(MetricCPUSetCores, a.cpuList, set.Count)
			add(MetricCPUSetUsedCores, a.cpuList, set.Used)
			if known {
				// All of oltplab's CPU is taken off, though it is not
				// confined and some of it ran elsewhere: the foreign CPU
				// on the set is never overstated.
				add(MetricCPUSetForeignCores, a.cpuList, set.Used-server-oltplab)
			}
		}
	}
	return out
}

// CPUUse is who used the CPU over a window, in cores (CPU-seconds per
// second), averaged over its host intervals.
type CPUUse struct {
	// HostCores are the host's online CPUs; UsedCores what they worked
	// (busy less steal: every process's and the kernel's); StealCores
	// what a hypervisor gave to other machines meanwhile.
	HostCores  float64 `json:"host_cores"`
	UsedCores  float64 `json:"used_cores"`
	StealCores float64 `json:"steal_cores"`
	StealPct   float64 `json:"steal_pct"`
	// OltplabCores is oltplab's own process: the driver, the samplers,
	// and an embedded database; and its helper processes (Options.Helpers:
	// a managed instance's latency layer).
	OltplabCores float64 `json:"oltplab_cores"`
	// ServerCores is the database server's processes; nil when not
	// measured (ServerSource says why).
	ServerCores *float64 `json:"server_cores,omitempty"`
	// ForeignCores is the used cores that neither the server nor oltplab
	// used: other processes, and the kernel's work on behalf of none of
	// them; ForeignPct is it in percent of HostCores. Nil when it cannot
	// be told (the server runs here and its CPU was not measured).
	ForeignCores *float64 `json:"foreign_cores,omitempty"`
	ForeignPct   *float64 `json:"foreign_pct,omitempty"`
	// CPUSet is the server's own CPUs (a cpuset), when it was confined:
	// their count, their used cores and the foreign CPU on them (all of
	// oltplab's CPU taken off, though some of it ran elsewhere), in
	// cores and in percent of CPUSetCores.
	CPUSet             string   `json:"cpuset,omitempty"`
	CPUSetCores        float64  `json:"cpuset_cores,omitempty"`
	CPUSetUsedCores    float64  `json:"cpuset_used_cores,omitempty"`
	CPUSetForeignCores *float64 `json:"cpuset_foreign_cores,omitempty"`
	CPUSetForeignPct   *float64 `json:"cpuset_foreign_pct,omitempty"`

	// Set by the caller, who knows the server and the run:
	// ServerSource says whose CPU time ServerCores is, or why there is
	// none; ServerCPUSeconds is the server's CPU over the window and
	// ServerCPUMicrosPerTx that per database transaction;
	// MaxForeignPct and MaxStealPct are the limits the window was judged
	// against (0: not judged).
	ServerSource         string   `json:"server_source,omitempty"`
	ServerCPUSeconds     *float64 `json:"server_cpu_seconds,omitempty"`
	ServerCPUMicrosPerTx *float64 `json:"server_cpu_micros_per_tx,omitempty"`
	MaxForeignPct        float64  `json:"max_foreign_pct,omitempty"`
	MaxStealPct          float64  `json:"max_steal_pct,omitempty"`
}

// summarizeCPUUse is the CPU account of the intervals ending in (lo, hi];
// nil when none was sampled.
func summarizeCPUUse(samples []store.Sample, lo, hi int64) *CPUUse {
	type acc struct {
		sum float64
		n   int
	}
	accs := map[string]*acc{}
	cpuset := ""
	for _, s := range samples {
		if s.Source != store.SourceHost || s.TMillis <= lo || s.TMillis > hi {
			continue
		}
		switch s.Metric {
		case MetricHostCores, MetricUsedCores, MetricOltplabCores, MetricServerCores, MetricForeignCores,
			MetricCPUSetCores, MetricCPUSetUsedCores, MetricCPUSetForeignCores, sysstat.MetricCPUStealPct:
		default:
			continue
		}
		if s.Device != "" {
			cpuset = s.Device
		}
		a := accs[s.Metric]
		if a == nil {
			a = &acc{}
			accs[s.Metric] = a
		}
		a.sum += s.Value
		a.n++
	}
	avg := func(m string) (float64, bool) {
		if a := accs[m]; a != nil && a.n > 0 {
			return a.sum / float64(a.n), true
		}
		return 0, false
	}
	used, ok := avg(MetricUsedCores)
	if !ok {
		return nil
	}
	u := &CPUUse{UsedCores: used}
	u.HostCores, _ = avg(MetricHostCores)
	u.OltplabCores, _ = avg(MetricOltplabCores)
	u.StealPct, _ = avg(sysstat.MetricCPUStealPct)
	u.StealCores = u.StealPct / 100 * u.HostCores
	if v, ok := avg(MetricServerCores); ok {
		u.ServerCores = &v
	}
	pct := func(part, of float64) *float64 {
		if of <= 0 {
			return nil
		}
		p := 100 * part / of
		return &p
	}
	if v, ok := avg(MetricForeignCores); ok {
		v = math.Max(0, v)
		u.ForeignCores, u.ForeignPct = &v, pct(v, u.HostCores)
	}
	if n, ok := avg(MetricCPUSetCores); ok {
		u.CPUSet, u.CPUSetCores = cpuset, n
		u.CPUSetUsedCores, _ = avg(MetricCPUSetUsedCores)
		if v, ok := avg(MetricCPUSetForeignCores); ok {
			v = math.Max(0, v)
			u.CPUSetForeignCores, u.CPUSetForeignPct = &v, pct(v, n)
		}
	}
	return u
}

// cpuList writes CPUs (sorted) as a Linux CPU list ("0", "0-1", "0,2").
func cpuList(cpus []int) string {
	var b []byte
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(cpus[i]), 10)
		if j > i {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(cpus[j]), 10)
		}
		i = j + 1
	}
	return string(b)
}
