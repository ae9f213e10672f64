package scenario

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/fio"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// StorageOutcome is a stored storage benchmark: its summary and where it
// is.
type StorageOutcome struct {
	RunID  int64        `json:"run_id"`
	Status store.Status `json:"status"`
	summary.Storage
}

// spanOf is a fio phase on the axis of samples that start at t0.
func spanOf(t0 time.Time, p fio.Phase) summary.Span { return summary.SpanOf(t0, p.Started, p.Ended) }

// storageProfile is a finished profile as stored, with its span on the
// axis of samples that start at t0 and what the host did in it.
func storageProfile(t0 time.Time, pr fio.ProfileResult, samples []store.Sample) summary.StorageProfile {
	w := spanOf(t0, pr.Phase)
	p := summary.StorageProfile{Profile: pr.Profile, Description: pr.Description, RuntimeSeconds: pr.RuntimeSeconds,
		Command: pr.Command, Started: pr.Started, Ended: pr.Ended,
		FioVersion: pr.FioVersion, Jobs: pr.Jobs, UserCPUPct: pr.UserCPUPct, SystemCPUPct: pr.SystemCPUPct,
		Window: w, Host: sampler.Summarize(samples, w.From(), w.To())}
	if pr.Options != nil {
		p.Options = make([]string, len(pr.Options))
		for i, o := range pr.Options {
			p.Options[i] = o.String()
		}
	}
	if pr.Directions != nil {
		p.Directions = make([]summary.StorageDirection, len(pr.Directions))
		for i, d := range pr.Directions {
			l := d.CompletionLatency
			p.Directions[i] = summary.StorageDirection{Direction: d.Direction, IOPS: d.IOPS, BytesPerSec: d.BytesPerSec,
				MBPerSec: d.MBPerSec, MiBPerSec: d.MiBPerSec, TotalBytes: d.TotalBytes, TotalIOs: d.TotalIOs,
				RuntimeMillis: d.RuntimeMillis, CompletionLatency: summary.StorageLatency{MeanMillis: l.MeanMillis,
					MaxMillis: l.MaxMillis, P50Millis: l.P50Millis, P99Millis: l.P99Millis, P999Millis: l.P999Millis,
					PercentileSource: l.PercentileSource}}
		}
	}
	return p
}

// StorageBench is a prepared storage benchmark: a *fio.Bench here, or
// one an agent runs beside a remote instance's data (agent.RemoteBench).
type StorageBench interface {
	Plan() fio.Plan
	Run(ctx context.Context, h fio.Hooks) (*fio.Result, error)
}

// Storage runs a prepared storage benchmark as one stored run of kind
// storage, sampling the host throughout, and returns what it stored. When
// the plan placed the database on another host (Hosts), the benchmark ran
// there: that host is sampled through its agent (Agent), its test file's
// device marked, and each profile's host figures are that host's. The
// returned error is the benchmark's (wrapping context.Canceled when
// interrupted; a *RunError when fio failed) or the store's (*StoreError);
// RunID is 0 when nothing could be stored.
func (e *Env) Storage(ctx context.Context, b StorageBench, label string) (StorageOutcome, error) {
	plan := b.Plan()
	rc := e.GatherContext(ctx, nil, dialect.Target{}, nil)
	rc.Storage = plan.Device
	st := e.Store
	expID, expSeq := e.link()
	id, err := st.CreateRun(ctx, store.Run{Kind: store.KindStorage, Label: label, Target: plan.Dir, ToolVersion: e.ToolVersion,
		ExperimentID: expID, ExperimentSeq: expSeq, Params: JSON(plan), Context: JSON(rc)})
	if err != nil {
		return StorageOutcome{}, storeErr("record the storage benchmark", err)
	}
	how := "direct I/O"
	if !plan.DirectIO {
		how = "buffered I/O"
	}
	e.note("storage bench of %s with %s, %d profile(s), %s (Ctrl-C stops, keeps what finished and removes the test file)",
		plan.Dir, plan.FioVersion, len(plan.Profiles), how)

	t0 := time.Now()
	so := sampler.Options{Start: t0, Interval: time.Second, Dirs: map[string]string{"test_file": plan.Dir}, Logger: e.logger()}
	remote := e.Hosts != nil && e.Hosts.Database != "here" && e.Agent.Addr != ""
	if remote {
		so.Dirs, so.Agent, so.AgentDirs = nil, e.Agent, so.Dirs
	}
	s := sampler.Start(ctx, so)
	// With a latency layer under the directory (fio runs inside it), the
	// layer's figures over the whole run and over each profile.
	lw := e.watchLayer(ctx, nil)
	lw.begin()
	var current *layerWindow
	byProfile := map[string]*layerWindow{}
	res, runErr := b.Run(ctx, fio.Hooks{
		LayoutStart: func(n int64) {
			e.note("writing the %s test file %s (once, for all profiles)", fio.FormatBytes(n), plan.File)
		},
		ProfileStart: func(i, n int, p fio.PlannedProfile) {
			e.note("[%d/%d] %s: %s", i+1, n, p.Profile, p.Description)
			current = e.watchLayer(ctx, nil)
			current.begin()
		},
		ProfileDone: func(pr fio.ProfileResult) {
			current.stop()
			if current != nil {
				byProfile[pr.Profile] = current
			}
		},
	})
	m, samples := StopSampling(s, time.Since(t0), rc.Placement)
	profileSamples := samples
	if remote {
		profileSamples = dbHostSamples(samples)
	}
	lw.stop()
	lw.record(&m)

	sum := summary.Storage{FioVersion: plan.FioVersion, Dir: plan.Dir, FileSizeBytes: plan.FileSizeBytes, SizeFrom: plan.SizeFrom,
		DirectIO: plan.DirectIO, Notes: plan.Notes, Interrupted: res.Interrupted, Monitor: m}
	if res.Layout != nil {
		w := spanOf(t0, *res.Layout)
		sum.Layout = &w
	}
	for _, pr := range res.Profiles {
		sp := storageProfile(t0, pr, profileSamples)
		if w := byProfile[pr.Profile]; w != nil {
			f, warn := w.figures()
			sp.LatencyLayer = f
			if warn != "" {
				sum.Monitor.Warnings = append(sum.Monitor.Warnings, pr.Profile+": "+warn)
			}
		}
		sum.Profiles = append(sum.Profiles, sp)
	}
	status := summary.Status(summary.Facts{Measured: len(res.Profiles) > 0, Failed: runErr != nil || res.Interrupted})
	errText := ""
	switch {
	case res.Interrupted:
		errText = "interrupted"
	case runErr != nil:
		errText = e.scrub(runErr.Error())
	}
	out := StorageOutcome{RunID: id, Status: status, Storage: sum}
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: JSON(sum), Error: errText, Samples: samples}); err != nil {
		return out, err
	}
	if runErr != nil && !res.Interrupted {
		return out, &RunError{RunID: id, Status: status, Err: runErr}
	}
	return out, runErr
}

// dbHostSamples are the samples of the database host's agent, as the
// host's own: a remote storage benchmark's profiles ran there.
func dbHostSamples(samples []store.Sample) []store.Sample {
	var out []store.Sample
	for _, x := range samples {
		if x.Source == store.SourceDBHost {
			x.Source = store.SourceHost
			out = append(out, x)
		}
	}
	return out
}
