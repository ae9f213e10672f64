package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// ErrBuildInterrupted: a build stopped by Ctrl-C leaves a half-built
// schema that run and check refuse.
var ErrBuildInterrupted = errors.New("build interrupted; the target holds a half-built schema (rebuild with --drop)")

// Build builds the TPC-C schema of o on db and records it as a run of kind
// build. It returns the stored run's id with the load's result.
func (e *Env) Build(ctx context.Context, db dialect.Database, tg dialect.Target, o load.Options) (int64, load.Result, error) {
	rc := e.GatherContext(ctx, db, tg, nil)
	freeBytes := e.FreeBytes
	if freeBytes == nil {
		freeBytes = sysstat.FreeBytes
	}
	// Before anything is dropped or written: a database on this machine
	// must have room for the build (one elsewhere cannot be checked).
	if err := CheckBuildSpace(rc.DataDir(), db.Name(), o.Warehouses, freeBytes); err != nil {
		var se *BuildSpaceError
		if errors.As(err, &se) && o.Drop {
			return 0, load.Result{}, fmt.Errorf("%w (the space the dropped schema would free is not counted)", err)
		}
		return 0, load.Result{}, err
	}
	seed := int64(o.Seed)
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{
		Kind: store.KindBuild, Target: tg.String(), Dialect: db.Name(), ToolVersion: e.ToolVersion, Seed: &seed,
		ExperimentID: expID, ExperimentSeq: expSeq,
		Params:  JSON(map[string]any{"warehouses": o.Warehouses, "workers": o.EffectiveWorkers(db.Caps()), "drop": o.Drop, "seed": o.Seed}),
		Context: JSON(rc),
	})
	if err != nil {
		return 0, load.Result{}, storeErr("record the build", err)
	}
	e.note("building %d warehouse(s) in %s with %d worker(s)", o.Warehouses, tg, o.EffectiveWorkers(db.Caps()))
	progress := e.Observer.BuildProgress
	if progress == nil {
		progress = func(load.Progress) {}
	}
	res, berr := load.Build(ctx, db, o, progress)

	// A build that did not finish stores no summary: what it loaded is
	// not a database to measure.
	status := summary.Status(summary.Facts{Failed: berr != nil})
	var stored json.RawMessage
	errText := ""
	if berr != nil {
		errText = e.scrub(berr.Error())
	} else {
		stored = JSON(BuildSummary(res))
	}
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: stored, Error: errText}); err != nil {
		return id, res, errors.Join(berr, err)
	}
	if berr != nil {
		if errors.Is(berr, context.Canceled) {
			return id, res, fmt.Errorf("%w: %w", ErrBuildInterrupted, berr)
		}
		return id, res, fmt.Errorf("build: %w", berr)
	}
	return id, res, nil
}

// BuildSummary is a build's result as it is stored.
func BuildSummary(r load.Result) summary.Build {
	return summary.Build{Dialect: r.Dialect, Warehouses: r.Warehouses, Workers: r.Workers, Seed: r.Seed,
		LoadConstants: r.LoadConstants, Procedures: r.Procedures, BuiltAt: r.BuiltAt, Rows: r.Rows, TotalRows: r.TotalRows,
		LoadSeconds: r.LoadSeconds, IndexSeconds: r.IndexSeconds, ProceduresSeconds: r.ProceduresSeconds,
		AnalyzeSeconds: r.AnalyzeSeconds, TotalSeconds: r.TotalSeconds, RowsPerSec: r.RowsPerSec}
}
