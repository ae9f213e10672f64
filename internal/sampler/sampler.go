// Package sampler owns periodic sampling during a run or a monitor: the
// host every Interval (internal/sysstat), and, when the target database
// offers dialect.WaitSampler, its sessions' wait classes several times a
// second and its cumulative counters every Interval, on a connection of
// its own. It turns them into store.Sample series on the run's time axis
// (milliseconds since Options.Start, the end of each interval, as the
// driver's per-second series) and summarises a window of them (Summarize).
//
// It measures its own CPU time (per-thread, RUSAGE_THREAD, each sampling
// goroutine locked to its thread) and reports it as the host series
// "sampler_cpu_pct" (percent of one core), so its overhead is shown with
// every result.
//
// With an `oltplab agent` on the database's host (Options.Agent) it also
// records that host's samples, with source db_host.
//
// It may import internal/sysstat, internal/agent, internal/dialect and
// internal/store (for the Sample type only); it must not import
// internal/cli, internal/driver or a dialect package.
package sampler

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// Options configure one Sampler.
type Options struct {
	// Start is t = 0 of the samples; zero means the moment Start is called.
	// SetStart may move it later (to the driver's measured window).
	Start time.Time
	// Interval is the host and DB counter period; default 1 s.
	Interval time.Duration
	// WaitInterval is the wait sampling period; default 200 ms. Keep it
	// above 100 ms (MariaDB's INNODB_TRX cache refreshes no faster).
	WaitInterval time.Duration
	// Dirs maps roles to directories ("data" -> PGDATA, "wal" -> pg_wal);
	// the devices under them are marked with series "disk_role_<role>".
	Dirs map[string]string
	// DB is the target database, optional; waits and DB counters are
	// sampled when it implements dialect.WaitSampler.
	DB dialect.Database
	// OwnIO, optional, reads the cumulative I/O of the database's own
	// processes by device (a managed instance's cgroup counters): their
	// rates are sampled as own_read_iops, own_write_iops, own_read_mbps
	// and own_write_mbps, so that a shared device's I/O can be told from
	// the database's.
	OwnIO IOProbe
	// Agent is the HOST:PORT of an `oltplab agent` on the database's
	// host, when that is another machine: its samples are recorded with
	// source db_host. AgentDirs names directories of that host by role
	// ("data" -> the database's data directory) to mark their devices.
	Agent     agent.Client
	AgentDirs map[string]string
	// ServerCPU, optional, reads the cumulative CPU time, in seconds, of
	// the database server's processes on this host (a managed instance's
	// cgroup, a local server's processes): sampled as server_cpu_cores,
	// and the foreign CPU with it.
	ServerCPU func() (float64, error)
	// ServerElsewhere: none of this host's CPU is the server's but what
	// oltplab's own process uses (the server runs on another host, or
	// inside oltplab: an embedded database). The foreign CPU is sampled
	// then too, with the server's taken as 0.
	ServerElsewhere bool
	// Helpers, optional, reads the cumulative CPU time, in seconds, of
	// processes oltplab runs beside the server that are neither the
	// server's nor this process (a managed instance's latency layer): it
	// is counted with oltplab's own CPU (oltplab_cores), not as foreign.
	Helpers func() (float64, error)
	// CPUs, optional, are the CPUs the server is confined to (a managed
	// instance's cpuset): their use, and the foreign CPU on them, are
	// sampled apart (cpuset_*), as interference there is what slows a
	// confined server.
	CPUs []int
	// ServerSource says whose CPU time ServerCPU reads, or why there is
	// none; returned with the result (Result.ServerSource).
	ServerSource string
	// Root is the root of /proc (tests use a captured tree); "" is "/".
	Root string
	// Logger receives warnings; nil is slog.Default().
	Logger *slog.Logger
}

// IOProbe reads cumulative I/O counters by device ("MAJ:MIN").
type IOProbe func() (map[string]IOCount, error)

// IOCount is cumulative block I/O on one device (or, as a rebuild stores
// its server's, on all of them).
type IOCount struct {
	ReadIOs    uint64 `json:"read_ios"`
	WriteIOs   uint64 `json:"write_ios"`
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
}

// Result is what a Sampler collected.
type Result struct {
	Samples []store.Sample `json:"-"`
	// Dirs are the directories asked about, by role (Options.Dirs).
	Dirs map[string]string `json:"dirs,omitempty"`
	// DeviceRoles maps /proc/diskstats device names to roles ("data", "wal").
	DeviceRoles map[string][]string `json:"device_roles,omitempty"`
	// WaitSource says where waits came from and what they cannot show;
	// empty when no wait sampling ran.
	WaitSource string `json:"wait_source,omitempty"`
	// SamplerCPUSeconds is the CPU time of the sampling goroutines' threads
	// over WallSeconds; SamplerCPUPct is it in percent of one core.
	SamplerCPUSeconds float64  `json:"sampler_cpu_seconds"`
	WallSeconds       float64  `json:"wall_seconds"`
	SamplerCPUPct     float64  `json:"sampler_cpu_pct"`
	Warnings          []string `json:"warnings,omitempty"`
	// DBStatements counts the statements the wait probe ran on the target
	// database (each a transaction of its own in the server's counters),
	// so that a cross-check of those counters can allow for them.
	DBStatements int64 `json:"db_statements"`
	// DBStatementMillis is when each of them ended, in milliseconds from
	// Start (SetStart), for counting those inside a window
	// (DBStatementsIn).
	DBStatementMillis []int64 `json:"-"`
	// AgentRoles maps the database host's devices to roles, as its agent
	// reported them; AgentHost describes that host. Both empty without an
	// agent.
	AgentRoles map[string][]string `json:"agent_roles,omitempty"`
	AgentHost  *sysstat.Host       `json:"agent_host,omitempty"`
	// ServerSource is Options.ServerSource.
	ServerSource string `json:"server_source,omitempty"`
}

// Sampler runs until Stop.
type Sampler struct {
	opts   Options
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
	began  time.Time

	mu          sync.Mutex
	start       time.Time
	samples     []timed
	warnings    []string
	cpu         time.Duration // whole run
	cpuInterval time.Duration // since the last sampler_cpu_pct sample
	source      string
	roles       map[string][]string
	statements  int64 // run by the wait probe on the database
	statementAt []time.Time
	agentRoles  map[string][]string
	agentHost   *sysstat.Host
}

// timed is a sample before its time is made relative to Start.
type timed struct {
	at time.Time
	s  store.Sample
}

// Start begins sampling in the background until Stop. Problems that
// leave a part out (a directory on no block device, no wait sampling) are
// logged and returned in Result.Warnings; sampling goes on without them.
func Start(ctx context.Context, opts Options) *Sampler {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.WaitInterval <= 0 {
		opts.WaitInterval = 200 * time.Millisecond
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.Default()
	}
	now := time.Now()
	if opts.Start.IsZero() {
		opts.Start = now
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{opts: opts, log: lg, cancel: cancel, start: opts.Start, began: now}

	fs := sysstat.NewFS("/")
	if opts.Root != "" {
		fs = sysstat.NewFS(opts.Root)
	}
	if len(opts.Dirs) > 0 {
		roles, err := fs.DeviceRoles(opts.Dirs)
		if err != nil {
			s.warn("mark devices of directories", err)
		}
		s.roles = roles
		for dev, rs := range roles {
			for _, r := range rs {
				s.add(now, store.SourceHost, MetricDiskRolePrefix+r, dev, 1)
			}
		}
	}
	s.wg.Add(1)
	go s.hostLoop(ctx, fs.NewHostSampler())
	if ws, ok := opts.DB.(dialect.WaitSampler); ok && opts.DB != nil {
		s.wg.Add(1)
		go s.dbLoop(ctx, ws)
	}
	if opts.Agent.Addr != "" {
		s.wg.Add(1)
		go s.agentLoop(ctx)
	}
	return s
}

// agentLoop records the samples the database host's agent streams, at the
// time they arrive (the two hosts' clocks need not agree), until ctx ends.
func (s *Sampler) agentLoop(ctx context.Context) {
	defer s.wg.Done()
	st, err := agent.Open(ctx, s.opts.Agent, s.opts.Interval, s.opts.AgentDirs)
	if err != nil {
		if ctx.Err() == nil {
			s.warn("database host agent", err)
		}
		return
	}
	stop := context.AfterFunc(ctx, func() { _ = st.Close() })
	defer stop()
	defer st.Close()
	now := time.Now()
	host := st.Hello.Host
	s.mu.Lock()
	s.agentRoles, s.agentHost = st.Hello.Roles, &host
	s.mu.Unlock()
	for _, w := range st.Hello.Warnings {
		s.warn("database host agent", errors.New(w))
	}
	for dev, rs := range st.Hello.Roles {
		for _, r := range rs {
			s.add(now, store.SourceDBHost, "disk_role_"+r, dev, 1)
		}
	}
	for {
		b, err := st.Next()
		if err != nil {
			if ctx.Err() == nil {
				s.warn("database host agent stream", err)
			}
			return
		}
		at := time.Now()
		batch := make([]timed, len(b.Samples))
		for i, x := range b.Samples {
			batch[i] = timed{at: at, s: store.Sample{Source: store.SourceDBHost, Metric: x.Metric, Device: x.Device, Value: x.Value}}
		}
		s.addBatch(batch)
	}
}

// SetStart moves t = 0 of the samples (e.g. to the driver's window start,
// known only once the run has ramped up). Samples before it get negative
// times.
func (s *Sampler) SetStart(t time.Time) {
	s.mu.Lock()
	s.start = t
	s.mu.Unlock()
}

// Stop ends sampling, waits for the goroutines and returns the samples,
// ordered by time.
func (s *Sampler) Stop() Result {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	wall := time.Since(s.began)
	r := Result{
		Dirs:              s.opts.Dirs,
		DeviceRoles:       s.roles,
		WaitSource:        s.source,
		SamplerCPUSeconds: s.cpu.Seconds(),
		WallSeconds:       wall.Seconds(),
		Warnings:          s.warnings,
		DBStatements:      s.statements,
		AgentRoles:        s.agentRoles,
		AgentHost:         s.agentHost,
		ServerSource:      s.opts.ServerSource,
	}
	if wall > 0 {
		r.SamplerCPUPct = 100 * s.cpu.Seconds() / wall.Seconds()
	}
	sort.SliceStable(s.samples, func(i, j int) bool { return s.samples[i].at.Before(s.samples[j].at) })
	r.Samples = make([]store.Sample, len(s.samples))
	for i, t := range s.samples {
		t.s.TMillis = t.at.Sub(s.start).Milliseconds()
		r.Samples[i] = t.s
	}
	r.DBStatementMillis = make([]int64, len(s.statementAt))
	for i, at := range s.statementAt {
		r.DBStatementMillis[i] = at.Sub(s.start).Milliseconds()
	}
	return r
}

// DBStatementsIn counts the statements run on the database that ended in
// [0, window] from Start: those a server's counter read at the window's
// edges holds (up to its publication lag).
func (r Result) DBStatementsIn(window time.Duration) int64 {
	var n int64
	for _, ms := range r.DBStatementMillis {
		if ms >= 0 && ms <= window.Milliseconds() {
			n++
		}
	}
	return n
}

func (s *Sampler) add(at time.Time, src store.Source, metric, device string, v float64) {
	s.mu.Lock()
	s.samples = append(s.samples, timed{at: at, s: store.Sample{Source: src, Metric: metric, Device: device, Value: v}})
	s.mu.Unlock()
}

func (s *Sampler) addBatch(b []timed) {
	s.mu.Lock()
	s.samples = append(s.samples, b...)
	s.mu.Unlock()
}

// countStatements records n statements run on the database.
func (s *Sampler) countStatements(n int64) {
	now := time.Now()
	s.mu.Lock()
	s.statements += n
	for range n {
		s.statementAt = append(s.statementAt, now)
	}
	s.mu.Unlock()
}

func (s *Sampler) warn(doing string, err error) {
	s.log.Warn("sampler: "+doing, "err", err)
	s.mu.Lock()
	s.warnings = append(s.warnings, doing+": "+err.Error())
	s.mu.Unlock()
}

// ownRates turns two readings of the database's own I/O counters into
// per-second rates (never negative: a counter that went back, a restart,
// gives no sample).
func ownRates(at time.Time, prev, cur map[string]IOCount, dt time.Duration) []timed {
	if dt <= 0 {
		return nil
	}
	var out []timed
	sec := dt.Seconds()
	for dev, c := range cur {
		p, ok := prev[dev]
		if !ok || c.ReadIOs < p.ReadIOs || c.WriteIOs < p.WriteIOs || c.ReadBytes < p.ReadBytes || c.WriteBytes < p.WriteBytes {
			continue
		}
		for _, m := range []struct {
			metric string
			v      float64
		}{
			{MetricOwnReadIOPS, float64(c.ReadIOs-p.ReadIOs) / sec},
			{MetricOwnWriteIOPS, float64(c.WriteIOs-p.WriteIOs) / sec},
			{MetricOwnReadMBps, float64(c.ReadBytes-p.ReadBytes) / 1e6 / sec},
			{MetricOwnWriteMBps, float64(c.WriteBytes-p.WriteBytes) / 1e6 / sec},
		} {
			out = append(out, timed{at: at, s: store.Sample{Source: store.SourceHost, Metric: m.metric, Device: dev, Value: m.v}})
		}
	}
	return out
}

// cpuMeter measures the CPU time of the calling goroutine's thread, which
// it locks; its own CPU is reported per interval as sampler_cpu_pct.
type cpuMeter struct {
	last time.Duration
	ok   bool
}

// lockCPUMeter locks the calling goroutine to its OS thread, so that every
// reading is of the same thread, and starts measuring it. The same
// goroutine must call release when done: defer m.release().
func lockCPUMeter() *cpuMeter {
	runtime.LockOSThread()
	m := &cpuMeter{}
	m.last, m.ok = sysstat.ThreadCPUTime()
	return m
}

// release unlocks the thread lockCPUMeter locked.
func (m *cpuMeter) release() { runtime.UnlockOSThread() }

// lap returns the thread's CPU time since the previous lap.
func (m *cpuMeter) lap() time.Duration {
	if !m.ok {
		return 0
	}
	now, ok := sysstat.ThreadCPUTime()
	if !ok || now < m.last {
		return 0
	}
	d := now - m.last
	m.last = now
	return d
}

func (s *Sampler) addCPU(d time.Duration) {
	s.mu.Lock()
	s.cpu += d
	s.cpuInterval += d
	s.mu.Unlock()
}

// hostLoop reads the host every Interval and reports, with each interval,
// the CPU both sampling threads used in it (sampler_cpu_pct).
func (s *Sampler) hostLoop(ctx context.Context, h *sysstat.HostSampler) {
	defer s.wg.Done()
	meter := lockCPUMeter()
	defer meter.release()
	tick := time.NewTicker(s.opts.Interval)
	defer tick.Stop()
	failing := false
	prev := time.Now()
	if _, err := h.Sample(prev); err != nil {
		s.warn("read host counters", err)
		failing = true
	}
	own := s.opts.OwnIO
	var ownPrev map[string]IOCount
	if own != nil {
		var err error
		if ownPrev, err = own(); err != nil {
			s.warn("read the database's own I/O counters", err)
			own = nil
		}
	}
	acct := s.newCPUAccount(prev)
	var batch []timed
	for {
		select {
		case <-ctx.Done():
			s.addCPU(meter.lap())
			return
		case <-tick.C:
		}
		now := time.Now()
		hs, err := h.Sample(now)
		if err != nil && !failing {
			s.warn("read host counters", err) // once, not every second
		}
		failing = err != nil
		batch = batch[:0]
		for _, x := range hs {
			batch = append(batch, timed{at: now, s: store.Sample{Source: store.SourceHost, Metric: x.Metric, Device: x.Device, Value: x.Value}})
		}
		batch = append(batch, acct.sample(now, h)...)
		if own != nil {
			cur, err := own()
			if err != nil {
				s.warn("read the database's own I/O counters", err)
				own = nil
			} else {
				batch = append(batch, ownRates(now, ownPrev, cur, now.Sub(prev))...)
				ownPrev = cur
			}
		}
		s.addCPU(meter.lap())
		s.mu.Lock()
		cpu := s.cpuInterval
		s.cpuInterval = 0
		s.mu.Unlock()
		if dt := now.Sub(prev); dt > 0 && meter.ok {
			batch = append(batch, timed{at: now, s: store.Sample{Source: store.SourceHost, Metric: MetricSamplerCPUPct,
				Value: 100 * cpu.Seconds() / dt.Seconds()}})
		}
		prev = now
		s.addBatch(batch)
	}
}
