package scenario

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
)

// MonitorSummary is what the samplers saw during a measured window, stored
// with the run (under "monitor") and shown by run, results show and report.
type MonitorSummary struct {
	sampler.StepSummary
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
	// DatabaseAddress is the database's host when it was not measured.
	DatabaseAddress string `json:"database_address,omitempty"`
}

// StartSampling starts the host sampler (and the database's, when db is
// not nil and its dialect offers wait sampling) for one measurement.
func (e *Env) StartSampling(ctx context.Context, db dialect.Database, tg dialect.Target, rc RunContext, interval time.Duration) *sampler.Sampler {
	dirs := map[string]string{}
	if dir := LocalDataDir(tg, rc.Placement, rc.Database.Settings); dir != "" {
		dirs["data"] = dir
	}
	return sampler.Start(ctx, sampler.Options{Interval: interval, Dirs: dirs, DB: db, Logger: e.logger()})
}

// StopSampling stops s and summarises the window [0, window] of its
// samples, labelled with whose host they measured (p).
func StopSampling(s *sampler.Sampler, window time.Duration, p Placement) (MonitorSummary, []store.Sample) {
	r := s.Stop()
	m := MonitorSummary{
		HostRole:             p.HostRole(),
		DatabaseHostMeasured: p.Local,
		DatabaseAddress:      notLocal(p),
		StepSummary:          sampler.Summarize(r.Samples, 0, window),
		DeviceRoles:          r.DeviceRoles,
		WaitSource:           r.WaitSource,
		SamplerCPUSeconds:    r.SamplerCPUSeconds,
		Warnings:             r.Warnings,

		SamplerDBStatements: r.DBStatements,
	}
	m.SamplerCPUPct = r.SamplerCPUPct
	return m, r.Samples
}

func notLocal(p Placement) string {
	if p.Local {
		return ""
	}
	return p.Address
}
