package summary

import (
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// Monitor is what the samplers saw during a measured window, stored with
// every kind that samples (under "monitor") and shown by run, results
// show and report.
type Monitor struct {
	sampler.StepSummary
	// Dirs are the local directories of the database, by role ("data");
	// with no device of that role in DeviceRoles, that data is on no
	// block device (tmpfs): the window has no data-device figures.
	Dirs              map[string]string   `json:"dirs,omitempty"`
	DeviceRoles       map[string][]string `json:"device_roles,omitempty"`
	WaitSource        string              `json:"wait_source,omitempty"`
	SamplerCPUSeconds float64             `json:"sampler_cpu_seconds"`
	Warnings          []string            `json:"warnings,omitempty"`
	// SamplerDBStatements counts the statements the samplers ran on the
	// target database inside the measured window (taken out of the
	// server's transaction counter, or allowed for, when its counters are
	// cross-checked: driver.Result.CheckCounters).
	SamplerDBStatements int64 `json:"sampler_db_statements"`
	// HostRole says whose host the host figures are: the database's, or
	// only the load generator's.
	HostRole string `json:"host_role,omitempty"`
	// DatabaseHostMeasured is false when the database runs on another
	// machine than the one sampled.
	DatabaseHostMeasured bool `json:"database_host_measured"`
	// DatabaseAddress is the database's host when it is not this machine.
	DatabaseAddress string `json:"database_address,omitempty"`
	// DatabaseHost is what `oltplab agent` on the database's host measured
	// there over the same window (CPU, memory, devices, network), when an
	// agent was given; Agent is its address, AgentHost describes that
	// host and AgentRoles marks its devices.
	DatabaseHost *sampler.StepSummary `json:"database_host,omitempty"`
	Agent        string               `json:"agent,omitempty"`
	AgentHost    *sysstat.Host        `json:"agent_host,omitempty"`
	AgentRoles   map[string][]string  `json:"agent_roles,omitempty"`
	// LatencyLayer is what the managed instance's latency layer measured
	// over the window (the I/O as the instance saw it), nil without one.
	LatencyLayer *LatencyLayer `json:"latency_layer,omitempty"`
}

// MonitorRun is what a monitor (kind monitor) stores as its summary: what
// the samplers saw, over how many seconds.
type MonitorRun struct {
	Monitor *Monitor `json:"monitor"`
	Seconds float64  `json:"seconds"`
}

// Headline: a monitor has no one figure that stands for it.
func (s MonitorRun) Headline() string { return "" }

// Sampling is what the samplers saw.
func (s MonitorRun) Sampling() *Monitor { return s.Monitor }
