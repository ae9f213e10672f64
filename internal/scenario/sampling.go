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
	"github.com/oltplab/oltplab/internal/summary"
)

// checkAgent refuses to measure when the database host's agent (Agent)
// does not answer: the user asked for that host's figures, and the
// samplers would only warn once the measurement is under way.
func (e *Env) checkAgent(ctx context.Context) error {
	if e.Agent.Addr == "" {
		return nil
	}
	if err := agent.Check(ctx, e.Agent); err != nil {
		return fmt.Errorf("--agent: %w", err)
	}
	return nil
}

// StartSampling starts the host sampler (and the database's, when db is
// not nil and its dialect offers wait sampling) for one measurement, with
// the CPU account of who used the CPU (the database server's CPU time as
// serverCPUOf finds it).
func (e *Env) StartSampling(ctx context.Context, db dialect.Database, tg dialect.Target, rc RunContext, interval time.Duration) *sampler.Sampler {
	dirs := map[string]string{}
	if dir := rc.DataDir(); dir != "" {
		dirs["data"] = dir
	}
	cpu := e.serverCPUOf(ctx, db, rc.Placement)
	o := sampler.Options{Interval: interval, Dirs: dirs, DB: db, OwnIO: e.OwnIO, Logger: e.logger(),
		ServerCPU: cpu.probe, Helpers: cpu.helpers, ServerElsewhere: cpu.elsewhere, CPUs: cpu.cpus, ServerSource: cpu.source}
	if e.Agent.Addr != "" {
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
func StopSampling(s *sampler.Sampler, window time.Duration, p Placement) (summary.Monitor, []store.Sample) {
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
	m := summary.Monitor{
		HostRole:             p.HostRole(),
		DatabaseHostMeasured: p.Local,
		DatabaseAddress:      notLocal(p),
		StepSummary:          sampler.Summarize(here, 0, window),
		Dirs:                 r.Dirs,
		DeviceRoles:          r.DeviceRoles,
		WaitSource:           r.WaitSource,
		SamplerCPUSeconds:    r.SamplerCPUSeconds,
		Warnings:             r.Warnings,

		SamplerDBStatements: r.DBStatementsIn(window),
	}
	m.SamplerCPUPct = r.SamplerCPUPct
	if m.CPUUse != nil {
		m.CPUUse.ServerSource = r.ServerSource
	}
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
