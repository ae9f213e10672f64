package report

// HostFigures are the host and database figures of one step, averaged over
// its complete repeats (issue "see why"): what the machine and the engine
// were doing while the step was measured.
type HostFigures struct {
	CPUBusyPct   float64 `json:"cpu_busy_pct"`
	CPUIdlePct   float64 `json:"cpu_idle_pct"`
	CPUIOWaitPct float64 `json:"cpu_iowait_pct"`
	// LoadGeneratorOnly: the database ran on another machine than
	// oltplab. CPU and disk figures are then the load generator's (the
	// machine oltplab ran on) and the database host was not measured;
	// wait classes and average waits still come from the database itself.
	LoadGeneratorOnly bool `json:"load_generator_only,omitempty"`
	// DatabaseHost is the database's address when it is not on this
	// machine.
	DatabaseHost string `json:"database_host,omitempty"`
	// Agent is the address of the `oltplab agent` that measured the CPU
	// and disk figures on the database's host, when the database ran on
	// another machine and one did.
	Agent string `json:"agent,omitempty"`
	// Data device (the one under the database's data directory; the
	// busiest device when that is unknown, and always the load
	// generator's busiest device when LoadGeneratorOnly).
	DataDevice        string  `json:"data_device,omitempty"`
	DiskIOPS          float64 `json:"disk_iops"`
	DiskReadIOPS      float64 `json:"disk_read_iops"`
	DiskWriteIOPS     float64 `json:"disk_write_iops"`
	DiskMBps          float64 `json:"disk_mbps"`
	DiskReadMBps      float64 `json:"disk_read_mbps"`
	DiskWriteMBps     float64 `json:"disk_write_mbps"`
	DiskLatencyMillis float64 `json:"disk_latency_ms"`
	// DiskLatencyP99Millis is the 99th percentile of per-second average
	// latencies, not a per-I/O percentile; label it so.
	DiskLatencyP99Millis float64 `json:"disk_latency_p99_of_per_second_avg_ms"`
	// OwnIO says whether the database's own I/O was sampled (a managed
	// instance's cgroup counters): OwnReadIOPS and OwnWriteIOPS are then
	// its operations per second, summed over devices, whatever else
	// used the data device.
	OwnIO        bool    `json:"own_io,omitempty"`
	OwnReadIOPS  float64 `json:"own_read_iops,omitempty"`
	OwnWriteIOPS float64 `json:"own_write_iops,omitempty"`
	// WaitSharePct: share of sampled database session time per wait class
	// (cpu, data_io, log_io, lock, latch, client, other), percent.
	WaitSharePct map[string]float64 `json:"wait_share_pct,omitempty"`
	// AvgWaitMillis: average wait times the engine measures itself, by
	// label (e.g. "WAL sync", "row lock wait"), milliseconds.
	AvgWaitMillis map[string]float64 `json:"avg_wait_ms,omitempty"`
	// Layer is what the managed instance's latency layer measured: its
	// I/O as it saw it, the delay included (nil without a layer).
	Layer *LayerFigures `json:"latency_layer,omitempty"`
}

// LayerFigures are a latency layer's figures over a step, averaged over
// its complete repeats (percentiles too: a mean of each repeat's).
type LayerFigures struct {
	// Settings are the delays, in the text form ("read=5ms,fsync=5ms";
	// "0": the layer with zero delays).
	Settings string `json:"settings"`
	// Kinds: "read", "write", "fsync", "meta"; kinds with no operation
	// in any repeat are left out.
	Kinds map[string]LayerKindFigures `json:"kinds"`
	// CPUMicrosPerOp is the layer process's CPU time per operation.
	CPUMicrosPerOp float64 `json:"cpu_us_per_op,omitempty"`
}

// LayerKindFigures are one kind of operation through the layer.
type LayerKindFigures struct {
	PerSecond       float64 `json:"per_s"`
	MeanMillis      float64 `json:"mean_ms"`
	P50Millis       float64 `json:"p50_ms"`
	P99Millis       float64 `json:"p99_ms"`
	P999Millis      float64 `json:"p99_9_ms"`
	DelayMeanMillis float64 `json:"delay_mean_ms"`
	OwnMeanMicros   float64 `json:"own_mean_us"`
}

// SeriesPoint is one second of a measured window.
type SeriesPoint struct {
	TSeconds          float64 `json:"t_s"`
	TPM               float64 `json:"tpm"`
	NOPM              float64 `json:"nopm"`
	P99Millis         float64 `json:"p99_ms"`
	CPUBusyPct        float64 `json:"cpu_busy_pct"`
	CPUIOWaitPct      float64 `json:"cpu_iowait_pct"`
	DiskIOPS          float64 `json:"disk_iops"`
	DiskLatencyMillis float64 `json:"disk_latency_ms"`
}

// StepSeries is the per-second time series of one run of a profile (the
// chosen step), so dips in throughput can be matched to host events.
type StepSeries struct {
	VUs    int           `json:"vus"`
	RunID  int64         `json:"run_id"`
	Points []SeriesPoint `json:"points"`
	// Faults are the run's outages and stalls (SpanFault), shaded on its
	// per-second charts.
	Faults []Span `json:"faults,omitempty"`
}
