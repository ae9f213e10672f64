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
