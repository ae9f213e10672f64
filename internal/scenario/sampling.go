package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// checkAgent refuses to measure when the database host's agent (Agent)
// does not answer: the user asked for that host's figures, and the
// samplers would only warn once the measurement is under way.
func (e *Env) checkAgent(ctx context.Context) error {
	if e.Agent == "" {
		return nil
	}
	if err := agent.Check(ctx, e.Agent); err != nil {
		return fmt.Errorf("--agent: %w", err)
	}
	return nil
}

// MonitorSummary is what the samplers saw during a measured window, stored
// with the run (under "monitor") and shown by run, results show and report.
type MonitorSummary struct {
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
	// target database (allowed for when its counters are cross-checked).
	SamplerDBStatements int64 `json:"sampler_db_statements"`
	// HostRole says whose host the host figures are (Placement.HostRole):
	// the database's, or only the load generator's.
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
}

// StartSampling starts the host sampler (and the database's, when db is
// not nil and its dialect offers wait sampling) for one measurement.
func (e *Env) StartSampling(ctx context.Context, db dialect.Database, tg dialect.Target, rc RunContext, interval time.Duration) *sampler.Sampler {
	dirs := map[string]string{}
	if dir := rc.DataDir(); dir != "" {
		dirs["data"] = dir
	}
	o := sampler.Options{Interval: interval, Dirs: dirs, DB: db, OwnIO: e.OwnIO, Logger: e.logger()}
	if e.Agent != "" {
		o.Agent = e.Agent
		// The data directory as the server reports it: a path on its host.
		for _, k := range []string{"data_directory", "datadir"} {
			if d := rc.Database.Settings[k]; d != "" {
				o.AgentDirs = map[string]string{"data": d}
				break
			}
		}
	}
	return sampler.Start(ctx, o)
}

// StopSampling stops s and summarises the window [0, window] of its
// samples, labelled with whose host they measured (p); the samples of the
// database host's agent, when one streamed, are summarised apart
// (DatabaseHost).
func StopSampling(s *sampler.Sampler, window time.Duration, p Placement) (MonitorSummary, []store.Sample) {
	r := s.Stop()
	var here, dbHost []store.Sample
	for _, x := range r.Samples {
		if x.Source == store.SourceDBHost {
			x.Source = store.SourceHost
			dbHost = append(dbHost, x)
			continue
		}
		here = append(here, x)
	}
	m := MonitorSummary{
		HostRole:             p.HostRole(),
		DatabaseHostMeasured: p.Local,
		DatabaseAddress:      notLocal(p),
		StepSummary:          sampler.Summarize(here, 0, window),
		Dirs:                 r.Dirs,
		DeviceRoles:          r.DeviceRoles,
		WaitSource:           r.WaitSource,
		SamplerCPUSeconds:    r.SamplerCPUSeconds,
		Warnings:             r.Warnings,

		SamplerDBStatements: r.DBStatements,
	}
	m.SamplerCPUPct = r.SamplerCPUPct
	if r.AgentHost != nil {
		sum := sampler.Summarize(dbHost, 0, window)
		m.DatabaseHost, m.AgentHost, m.AgentRoles = &sum, r.AgentHost, r.AgentRoles
		m.Agent = p.Agent
		m.DatabaseHostMeasured = true
		m.HostRole = p.HostRole() + "; the database host was measured by oltplab agent at " + p.Agent
	}
	return m, r.Samples
}

// OwnIO reads a managed instance's own block I/O (its I/O cgroup's
// counters) for the samplers (Env.OwnIO); nil when it cannot be read (an
// embedded engine, no I/O cgroup).
func OwnIO(inst interface {
	IOCounters() (map[string]instance.IOCounters, error)
}) sampler.IOProbe {
	if _, err := inst.IOCounters(); err != nil {
		return nil
	}
	return func() (map[string]sampler.IOCount, error) {
		cs, err := inst.IOCounters()
		if err != nil {
			return nil, err
		}
		out := make(map[string]sampler.IOCount, len(cs))
		for dev, c := range cs {
			out[dev] = sampler.IOCount{ReadIOs: c.ReadIOs, WriteIOs: c.WriteIOs, ReadBytes: c.ReadBytes, WriteBytes: c.WriteBytes}
		}
		return out, nil
	}
}

func notLocal(p Placement) string {
	if p.Local {
		return ""
	}
	return p.Address
}
