package scenario

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/fio"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
)

// StorageOutcome is a stored storage benchmark: its summary and where it
// is.
type StorageOutcome struct {
	RunID  int64        `json:"run_id"`
	Status store.Status `json:"status"`
	StorageSummary
}

// StorageSummary is what a storage benchmark stores as its summary: the
// plan's facts, each finished profile with its window on the samples' time
// axis and what the host did in it, and the whole run's host summary.
type StorageSummary struct {
	FioVersion    string           `json:"fio_version"`
	Dir           string           `json:"dir"`
	FileSizeBytes int64            `json:"file_size_bytes"`
	SizeFrom      string           `json:"size_from"`
	DirectIO      bool             `json:"direct_io"`
	Notes         []string         `json:"notes,omitempty"`
	Layout        *Window          `json:"layout,omitempty"`
	Profiles      []StorageProfile `json:"profiles"`
	Interrupted   bool             `json:"interrupted,omitempty"`
	Monitor       MonitorSummary   `json:"monitor"`
}

// Window is a span of the run's samples' time axis (ms since the run's
// sampling started), as reports mark it.
type Window struct {
	FromMillis int64 `json:"from_ms"`
	ToMillis   int64 `json:"to_ms"`
}

func windowOf(t0 time.Time, p fio.Phase) Window {
	return Window{FromMillis: p.Started.Sub(t0).Milliseconds(), ToMillis: p.Ended.Sub(t0).Milliseconds()}
}

type StorageProfile struct {
	fio.ProfileResult
	Window Window `json:"window"`
	// Host is what the host sampler saw during the profile (the kernel's
	// view of the device, next to fio's).
	Host sampler.StepSummary `json:"host"`
}

// Storage runs a prepared storage benchmark as one stored run of kind
// storage, sampling the host throughout, and returns what it stored. The
// returned error is the benchmark's (wrapping context.Canceled when
// interrupted; a *RunError when fio failed) or the store's (*StoreError);
// RunID is 0 when nothing could be stored.
func (e *Env) Storage(ctx context.Context, b *fio.Bench, label string) (StorageOutcome, error) {
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
	s := sampler.Start(ctx, sampler.Options{Start: t0, Interval: time.Second, Dirs: map[string]string{"test_file": plan.Dir}, Logger: e.logger()})
	res, runErr := b.Run(ctx, fio.Hooks{
		LayoutStart: func(n int64) {
			e.note("writing the %s test file %s (once, for all profiles)", fio.FormatBytes(n), plan.File)
		},
		ProfileStart: func(i, n int, p fio.PlannedProfile) {
			e.note("[%d/%d] %s: %s", i+1, n, p.Profile, p.Description)
		},
	})
	m, samples := StopSampling(s, time.Since(t0), rc.Placement)

	sum := StorageSummary{FioVersion: plan.FioVersion, Dir: plan.Dir, FileSizeBytes: plan.FileSizeBytes, SizeFrom: plan.SizeFrom,
		DirectIO: plan.DirectIO, Notes: plan.Notes, Interrupted: res.Interrupted, Monitor: m}
	if res.Layout != nil {
		w := windowOf(t0, *res.Layout)
		sum.Layout = &w
	}
	for _, pr := range res.Profiles {
		w := windowOf(t0, pr.Phase)
		sum.Profiles = append(sum.Profiles, StorageProfile{ProfileResult: pr, Window: w,
			Host: sampler.Summarize(samples, time.Duration(w.FromMillis)*time.Millisecond, time.Duration(w.ToMillis)*time.Millisecond)})
	}
	status, errText := store.StatusOK, ""
	switch {
	case res.Interrupted:
		status, errText = store.StatusPartial, "interrupted"
	case runErr != nil && len(res.Profiles) > 0:
		status, errText = store.StatusPartial, e.scrub(runErr.Error())
	case runErr != nil:
		status, errText = store.StatusFailed, e.scrub(runErr.Error())
	}
	out := StorageOutcome{RunID: id, Status: status, StorageSummary: sum}
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: JSON(sum), Error: errText, Samples: samples}); err != nil {
		return out, err
	}
	if runErr != nil && !res.Interrupted {
		return out, &RunError{RunID: id, Status: status, Err: runErr}
	}
	return out, runErr
}
