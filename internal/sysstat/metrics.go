package sysstat

// The names of the host series HostSampler reports (HostSample.Metric):
// they are the metric names of the results store, which summaries,
// figures and reports read back, so they are defined here once.
const (
	// CPU, percent of all cores together; Device "".
	MetricCPUBusyPct   = "cpu_busy_pct"   // everything but idle and iowait
	MetricCPUUserPct   = "cpu_user_pct"   // user and nice
	MetricCPUSystemPct = "cpu_system_pct" // system, irq and softirq
	MetricCPUIdlePct   = "cpu_idle_pct"
	MetricCPUIOWaitPct = "cpu_iowait_pct"
	MetricCPUStealPct  = "cpu_steal_pct"

	// Memory, a gauge in bytes; Device "".
	MetricMemUsedBytes      = "mem_used_bytes"
	MetricMemCacheBytes     = "mem_cache_bytes" // page cache and buffers
	MetricMemDirtyBytes     = "mem_dirty_bytes"
	MetricMemFreeBytes      = "mem_free_bytes"
	MetricMemAvailableBytes = "mem_available_bytes"

	// Block devices; Device is the name in /proc/diskstats.
	MetricDiskReadIOPS   = "disk_read_iops"
	MetricDiskWriteIOPS  = "disk_write_iops"
	MetricDiskReadMBps   = "disk_read_mbps"
	MetricDiskWriteMBps  = "disk_write_mbps"
	MetricDiskUtilPct    = "disk_util_pct"
	MetricDiskQueueDepth = "disk_queue_depth"
	// MetricDiskLatencyMillis is the mean time per I/O completed in the
	// interval, reads and writes together; absent when none completed.
	MetricDiskLatencyMillis      = "disk_latency_ms"
	MetricDiskReadLatencyMillis  = "disk_read_latency_ms"
	MetricDiskWriteLatencyMillis = "disk_write_latency_ms"

	// Network interfaces; Device is the name in /proc/net/dev.
	MetricNetRxBytesPerS = "net_rx_bytes_per_s"
	MetricNetTxBytesPerS = "net_tx_bytes_per_s"
)
