package sampler

// The names of the series the sampler adds to sysstat's host series
// (sysstat.Metric...): the metric names of the results store, defined
// here once. db.go says what each database series holds.
const (
	// MetricSamplerCPUPct is the samplers' own CPU, percent of one core
	// (source host, Device "").
	MetricSamplerCPUPct = "sampler_cpu_pct"
	// MetricDiskRolePrefix + role ("data", ...) marks, once at the start,
	// the device under a directory of Options.Dirs (source host).
	MetricDiskRolePrefix = "disk_role_"
	// The database's own block I/O, from its I/O cgroup's counters
	// (Options.OwnIO; source host, Device: the device).
	MetricOwnReadIOPS  = "own_read_iops"
	MetricOwnWriteIOPS = "own_write_iops"
	MetricOwnReadMBps  = "own_read_mbps"
	MetricOwnWriteMBps = "own_write_mbps"

	// Who used the CPU, in cores (CPU-seconds per second of the interval;
	// source host, Device ""): the host's online CPUs and their used
	// cores (busy less steal: every process's and the kernel's work),
	// this process's (oltplab: the driver and the samplers, and an
	// embedded database) with its helper processes' (Options.Helpers: a
	// managed instance's latency layer), the database server's
	// (Options.ServerCPU), and
	// the foreign CPU, the used cores neither of them used (sampled when
	// the server's CPU is known, or none of it is on this host: Options.
	// ServerElsewhere). Foreign CPU may be a little below 0 in one
	// interval (the kernel's tick counts against the processes' own
	// clocks); a window's average is floored at 0 (Summarize).
	MetricHostCores    = "host_cores"
	MetricUsedCores    = "cpu_used_cores"
	MetricOltplabCores = "oltplab_cpu_cores"
	MetricServerCores  = "server_cpu_cores"
	MetricForeignCores = "foreign_cpu_cores"
	// The same on the server's own CPUs (Options.CPUs; Device: their
	// list, "0" or "2-3").
	MetricCPUSetCores        = "cpuset_cores"
	MetricCPUSetUsedCores    = "cpuset_used_cores"
	MetricCPUSetForeignCores = "cpuset_foreign_cores"

	// Database series (source db).
	MetricDBActiveSessions    = "db_active_sessions"     // Device: wait class
	MetricDBIdleSessions      = "db_idle_sessions"       // Device ""
	MetricDBWaitEventSessions = "db_wait_event_sessions" // Device: engine event
	MetricDBWaitSamples       = "db_wait_samples"        // Device ""
	MetricDBAvgWaitMillis     = "db_avg_wait_ms"         // Device: dialect.AvgWait label
	MetricDBWaitEventsPerS    = "db_wait_events_per_s"   // Device: dialect.AvgWait label
)

// MetricDBCounterPerS is the series of the per-second rate of the
// cumulative database counter name (dialect.WaitProbe.DBCounters).
func MetricDBCounterPerS(name string) string { return "db_" + name + "_per_s" }
