package scenario

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// MonitorOutcome is what a monitor stored.
type MonitorOutcome struct {
	RunID   int64
	Status  store.Status
	Summary summary.Monitor
	Samples int
}

// Monitor samples the host (and db's waits and counters, when db is not
// nil) every interval for duration, and stores the series as a run of kind
// monitor. Canceling ctx stops it early; what was sampled is stored as
// partial and the error wraps context.Canceled.
func (e *Env) Monitor(ctx context.Context, db dialect.Database, tg dialect.Target, label string, duration, interval time.Duration) (MonitorOutcome, error) {
	if err := e.checkAgent(ctx); err != nil {
		return MonitorOutcome{}, err
	}
	rc := e.GatherContext(ctx, db, tg, nil)
	dialectName := ""
	if db != nil {
		dialectName = db.Name()
	}
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{Kind: store.KindMonitor, Label: label, Target: tg.String(), Dialect: dialectName,
		ToolVersion: e.ToolVersion, ExperimentID: expID, ExperimentSeq: expSeq, Params: JSON(map[string]any{"duration_seconds": duration.Seconds(), "interval_seconds": interval.Seconds()}),
		Context: JSON(rc)})
	if err != nil {
		return MonitorOutcome{}, storeErr("record the monitor", err)
	}
	e.note("sampling for %s every %s (Ctrl-C stops and keeps what was sampled)", duration, interval)
	start := time.Now()
	s := e.StartSampling(ctx, db, tg, rc, interval)
	timer := time.NewTimer(duration)
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	timer.Stop()
	m, samples := StopSampling(s, time.Since(start), rc.Placement)
	fctx := context.WithoutCancel(ctx)
	// A monitor measures from its start; stopped early, it measured less.
	out := MonitorOutcome{RunID: id, Status: summary.Status(summary.Facts{Measured: true, Incomplete: ctx.Err() != nil}),
		Summary: m, Samples: len(samples)}
	if err := e.complete(fctx, id, store.Outcome{Status: out.Status, Samples: samples,
		Summary: JSON(summary.MonitorRun{Monitor: &m, Seconds: time.Since(start).Seconds()})}); err != nil {
		return out, err
	}
	return out, ctx.Err()
}
