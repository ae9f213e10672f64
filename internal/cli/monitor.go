package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
)

// monitorSummary is what the samplers saw during a measured window, stored
// with the run (under "monitor") and shown by run, results show and report.
type monitorSummary struct {
	sampler.StepSummary
	DeviceRoles       map[string][]string `json:"device_roles,omitempty"`
	WaitSource        string              `json:"wait_source,omitempty"`
	SamplerCPUSeconds float64             `json:"sampler_cpu_seconds"`
	Warnings          []string            `json:"warnings,omitempty"`
}

// startSampling starts the host sampler (and the database's, when the
// dialect offers wait sampling) for one measurement.
func (a *app) startSampling(ctx context.Context, db dialect.Database, tg dialect.Target, rc runContext, interval time.Duration) *sampler.Sampler {
	dirs := map[string]string{}
	if dir := localDataDir(tg, rc.Database.Settings); dir != "" {
		dirs["data"] = dir
	}
	return sampler.Start(ctx, sampler.Options{Interval: interval, Dirs: dirs, DB: db, Logger: a.log})
}

// stopSampling stops s and summarises the window [0, window] of its samples.
func stopSampling(s *sampler.Sampler, window time.Duration) (monitorSummary, []store.Sample) {
	r := s.Stop()
	m := monitorSummary{
		StepSummary:       sampler.Summarize(r.Samples, 0, window),
		DeviceRoles:       r.DeviceRoles,
		WaitSource:        r.WaitSource,
		SamplerCPUSeconds: r.SamplerCPUSeconds,
		Warnings:          r.Warnings,
	}
	m.SamplerCPUPct = r.SamplerCPUPct
	return m, r.Samples
}

// printMonitorSummary renders what the host and the database did.
func (a *app) printMonitorSummary(m monitorSummary) {
	w := a.out()
	c := m.CPU
	fmt.Fprintf(w, "\nhost during the window (%d s sampled): CPU busy %.1f%% (user %.1f, system %.1f), idle %.1f%%, iowait %.1f%%, steal %.1f%%\n",
		m.Seconds, c.BusyPct, c.UserPct, c.SystemPct, c.IdlePct, c.IOWaitPct, c.StealPct)
	if len(m.Devices) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  device\trole\tread IOPS\twrite IOPS\tread MB/s\twrite MB/s\tlatency ms\tp99 of per-second avg ms\tqueue\tutil %\t")
		for _, d := range m.Devices {
			role := ""
			if len(d.Roles) > 0 {
				role = fmt.Sprint(d.Roles)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%.0f\t%.0f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.1f\t\n", d.Device, role, d.ReadIOPS, d.WriteIOPS,
				d.ReadMBps, d.WriteMBps, d.LatencyMillis, d.LatencyP99Millis, d.QueueDepth, d.UtilPct)
		}
		tw.Flush()
	}
	if len(m.Waits) > 0 {
		fmt.Fprintf(w, "database time (%.1f active sessions on average): ", m.AvgActiveSessions)
		for i, ws := range m.Waits {
			if i > 0 {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprintf(w, "%s %.1f%%", ws.Name, ws.SharePct)
		}
		fmt.Fprintln(w)
	}
	for _, aw := range m.AvgWaits {
		fmt.Fprintf(w, "  %s: %.2f ms average, %.1f per second\n", aw.Label, aw.AvgMillis, aw.EventsPerS)
	}
	if m.WaitSource != "" {
		fmt.Fprintf(w, "  waits from %s\n", m.WaitSource)
	}
	fmt.Fprintf(w, "samplers: %.2f%% of one core\n", m.SamplerCPUPct)
	for _, warn := range m.Warnings {
		fmt.Fprintf(w, "  note: %s\n", warn)
	}
}

const monitorSynopsis = "monitor [--target URL] --duration D [--interval 1s] [--label L] [--json]"

// runMonitor samples the host (and a database, when given) for a while
// and stores the series, for use while something else makes the load.
func runMonitor(ctx context.Context, a *app, args []string) error {
	var (
		target   targetFlags
		results  storeFlags
		duration time.Duration
		interval time.Duration
		label    string
		asJSON   bool
	)
	fs := newFlagSet("monitor")
	target.register(fs, a.env)
	results.register(fs, a.env)
	fs.DurationVar(&duration, "duration", 10*time.Minute, "how long to sample (Ctrl-C stops earlier and keeps what was sampled)")
	fs.DurationVar(&interval, "interval", time.Second, "host sampling interval")
	fs.StringVar(&label, "label", "", "label stored with the samples")
	fs.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	if err := a.parseFlags(fs, monitorSynopsis, args); err != nil {
		return helpOK(err)
	}
	if err := checkLabel("monitor", label); err != nil {
		return err
	}
	if duration < time.Second {
		return usageErrorf("monitor: --duration must be at least 1s, got %s", duration)
	}
	if interval < 100*time.Millisecond || interval > duration {
		return usageErrorf("monitor: --interval must be between 100ms and the duration, got %s", interval)
	}
	st, err := a.openStore(ctx, results)
	if err != nil {
		return err
	}
	defer st.Close()
	var (
		db dialect.Database
		tg dialect.Target
	)
	if target.target != "" {
		if db, tg, err = a.openTarget(ctx, target); err != nil {
			return err
		}
		defer db.Close()
	}
	rc := a.gatherContext(ctx, db, tg, nil)
	dialectName := ""
	if db != nil {
		dialectName = db.Name()
	}
	id, err := st.CreateRun(ctx, store.Run{Kind: store.KindMonitor, Label: label, Target: tg.String(), Dialect: dialectName,
		ToolVersion: version(), Params: mustJSON(map[string]any{"duration_seconds": duration.Seconds(), "interval_seconds": interval.Seconds()}),
		Context: mustJSON(rc)})
	if err != nil {
		return withCode(exitStore, fmt.Errorf("record the monitor: %w", err))
	}
	fmt.Fprintf(a.errw(), "sampling for %s every %s (Ctrl-C stops and keeps what was sampled)\n", duration, interval)
	start := time.Now()
	s := a.startSampling(ctx, db, tg, rc, interval)
	select {
	case <-ctx.Done():
	case <-time.After(duration):
	}
	m, samples := stopSampling(s, time.Since(start))
	fctx := context.WithoutCancel(ctx)
	status := store.StatusOK
	if ctx.Err() != nil {
		status = store.StatusPartial
	}
	if err := a.storeOutcome(fctx, st, id, store.Outcome{Status: status, Samples: samples,
		Summary: mustJSON(map[string]any{"monitor": m, "seconds": time.Since(start).Seconds()})}); err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(a.out(), map[string]any{"run_id": id, "status": status, "monitor": m}); err != nil {
			return err
		}
	} else {
		a.printMonitorSummary(m)
		fmt.Fprintf(a.out(), "stored %d samples as result %d in %s\n", len(samples), id, st.Path())
	}
	if ctx.Err() != nil {
		return withCode(exitInterrupted, errors.New("interrupted: what was sampled is stored, marked partial"))
	}
	return nil
}
