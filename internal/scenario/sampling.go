package scenario

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
)

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
}

// StartSampling starts the host sampler (and the database's, when db is
// not nil and its dialect offers wait sampling) for one measurement.
func (e *Env) StartSampling(ctx context.Context, db dialect.Database, tg dialect.Target, rc RunContext, interval time.Duration) *sampler.Sampler {
	dirs := map[string]string{}
	if dir := LocalDataDir(tg, rc.Database.Settings); dir != "" {
		dirs["data"] = dir
	}
	return sampler.Start(ctx, sampler.Options{Interval: interval, Dirs: dirs, DB: db, OwnIO: e.OwnIO, Logger: e.logger()})
}

// StopSampling stops s and summarises the window [0, window] of its samples.
func StopSampling(s *sampler.Sampler, window time.Duration) (MonitorSummary, []store.Sample) {
	r := s.Stop()
	m := MonitorSummary{
		StepSummary:       sampler.Summarize(r.Samples, 0, window),
		Dirs:              r.Dirs,
		DeviceRoles:       r.DeviceRoles,
		WaitSource:        r.WaitSource,
		SamplerCPUSeconds: r.SamplerCPUSeconds,
		Warnings:          r.Warnings,
	}
	m.SamplerCPUPct = r.SamplerCPUPct
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
