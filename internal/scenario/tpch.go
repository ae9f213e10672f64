package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpchdriver"
	"github.com/oltplab/oltplab/internal/tpchload"
)

// The analytic workload's scenarios: a TPC-H build (kind tpch-build), a
// check of a TPC-H database (tpch-check) and a run of clause 5's tests
// (tpch: power, throughput or both) with the host and database samplers.

// TPCHBuild builds the TPC-H schema of o on db and records it as a run of
// kind tpch-build. It returns the stored run's id with the build's result.
func (e *Env) TPCHBuild(ctx context.Context, db dialect.Database, tg dialect.Target, o tpchload.Options) (int64, tpchload.Result, error) {
	rc := e.GatherContext(ctx, db, tg, nil)
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{
		Kind: store.KindTPCHBuild, Target: tg.String(), Dialect: db.Name(), ToolVersion: e.ToolVersion,
		ExperimentID: expID, ExperimentSeq: expSeq,
		Params:  JSON(map[string]any{"scale": o.Scale.String(), "workers": o.Workers, "drop": o.Drop}),
		Context: JSON(rc),
	})
	if err != nil {
		return 0, tpchload.Result{}, storeErr("record the TPC-H build", err)
	}
	e.note("building TPC-H SF %s in %s", o.Scale, tg)
	if o.ToolVersion == "" {
		o.ToolVersion = e.ToolVersion
	}
	res, berr := tpchload.Build(ctx, db, o)

	// A build that did not finish stores no summary: what it loaded is
	// not a database to measure.
	status := summary.Status(summary.Facts{Failed: berr != nil})
	var stored json.RawMessage
	errText := ""
	if berr != nil {
		errText = e.scrub(berr.Error())
	} else {
		stored = JSON(TPCHBuildSummary(res))
	}
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: stored, Error: errText}); err != nil {
		return id, res, errors.Join(berr, err)
	}
	if berr != nil {
		return id, res, fmt.Errorf("TPC-H build: %w", berr)
	}
	return id, res, nil
}

// TPCHBuildSummary is a TPC-H build's result as it is stored.
func TPCHBuildSummary(r tpchload.Result) summary.TPCHBuild {
	return summary.TPCHBuild{Dialect: r.Dialect, Scale: r.Scale, Workers: r.Workers, Dropped: r.Dropped, BuiltAt: r.BuiltAt,
		QGenSeed: r.QGenSeed, Rows: r.Rows, TotalRows: r.TotalRows, TextSeconds: r.TextSeconds, LoadSeconds: r.LoadSeconds,
		IndexSeconds: r.IndexSeconds, AnalyzeSeconds: r.AnalyzeSeconds, TotalSeconds: r.TotalSeconds}
}

// TPCHCheckOutcome is a stored check of a TPC-H database.
type TPCHCheckOutcome struct {
	RunID int64 `json:"-"`
	summary.TPCHCheck
}

// TPCHCheck verifies a TPC-H database's rows and relationships
// (tpchload.Check) and records the outcome as a run of kind tpch-check. A
// failed check is not an error: the outcome says Passed false.
func (e *Env) TPCHCheck(ctx context.Context, db dialect.Database, tg dialect.Target) (TPCHCheckOutcome, error) {
	m, err := tpchload.ReadMeta(ctx, db)
	if err != nil {
		return TPCHCheckOutcome{}, err
	}
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{Kind: store.KindTPCHCheck, Target: tg.String(), Dialect: db.Name(), ToolVersion: e.ToolVersion,
		ExperimentID: expID, ExperimentSeq: expSeq,
		Params: JSON(map[string]any{"scale": m.Scale.String()}), Context: JSON(e.GatherContext(ctx, db, tg, nil))})
	if err != nil {
		return TPCHCheckOutcome{}, storeErr("record the TPC-H check", err)
	}
	c, cerr := tpchload.Check(ctx, db)
	out := TPCHCheckOutcome{RunID: id, TPCHCheck: summary.TPCHCheck{Scale: m.Scale.String(), RF1Sets: m.RF1Sets, RF2Sets: m.RF2Sets,
		Passed: c.Passed && cerr == nil, Checks: c.Checks, Seconds: c.Seconds}}
	status := summary.Status(summary.Facts{Measured: cerr == nil, Failed: cerr != nil})
	errText := ""
	if cerr != nil {
		errText = e.scrub(cerr.Error())
	}
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: JSON(out.TPCHCheck), Error: errText}); err != nil {
		return out, errors.Join(cerr, err)
	}
	if cerr != nil {
		return out, fmt.Errorf("check %s: %w", tg, cerr)
	}
	return out, nil
}

// TPCHOptions are the parameters of one run of TPC-H's tests.
type TPCHOptions struct {
	tpchdriver.Options
	Label string
	// Repeat is the repeat number within an experiment step (0: none).
	Repeat int
}

// TPCHOutcome is a stored run of TPC-H's tests.
type TPCHOutcome struct {
	RunID  int64
	Status store.Status
	summary.TPCH
}

// TPCH runs the tests o asks for (tpchdriver.Run) with the host's and
// the database's samplers, and records them as a run of kind tpch: every
// query's and refresh function's time per stream, the figures of clause
// 5.4 or why each is absent, and the samples. A run cut by Ctrl-C is
// stored partial with what it measured, and the error wraps
// context.Canceled; a query cut off by the timeout is stored as such, and
// the run as partial (its figures are absent).
func (e *Env) TPCH(ctx context.Context, db dialect.Database, tg dialect.Target, o TPCHOptions) (TPCHOutcome, error) {
	if err := o.Validate(); err != nil {
		return TPCHOutcome{}, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	if err := e.checkAgent(ctx); err != nil {
		return TPCHOutcome{}, err
	}
	m, err := tpchload.ReadMeta(ctx, db)
	if err != nil {
		return TPCHOutcome{}, err
	}
	rc := e.GatherContext(ctx, db, tg, nil)
	expID, expSeq := e.link()
	seed := o.Seed
	if seed == 0 {
		seed = m.QGenSeed
	}
	params := map[string]any{"scale": m.Scale.String(), "test": o.Test, "streams": o.Streams, "seed": seed,
		"query_timeout_seconds": o.QueryTimeout.Seconds(), "validation_params": o.Validation,
		"rf1_sets_before": m.RF1Sets, "rf2_sets_before": m.RF2Sets}
	id, err := e.Store.CreateRun(ctx, store.Run{Kind: store.KindTPCH, Label: o.Label, Repeat: o.Repeat, Target: tg.String(),
		Dialect: db.Name(), ToolVersion: e.ToolVersion, Seed: &seed, ExperimentID: expID, ExperimentSeq: expSeq,
		VUs: max(o.Streams, 1), Params: JSON(params), Context: JSON(rc)})
	if err != nil {
		return TPCHOutcome{}, storeErr("record the TPC-H tests", err)
	}
	e.note("TPC-H %s on %s at SF %s (seed %d%s)", summary.TPCH{Test: string(o.Test)}.TestName(), tg, m.Scale, seed, streamsNote(o))
	t0 := time.Now()
	o.Origin = t0
	smp := e.StartSampling(ctx, db, tg, rc, time.Second)
	res, rerr := tpchdriver.Run(ctx, db, o.Options)
	mon, samples := StopSampling(smp, time.Since(t0), rc.Placement)

	sum := TPCHSummary(res, mon)
	measured := res.Power != nil || res.Throughput != nil
	status := summary.Status(summary.Facts{Measured: measured, Failed: rerr != nil, Incomplete: measured && !res.Complete()})
	out := TPCHOutcome{RunID: id, Status: status, TPCH: sum}
	errText := ""
	if rerr != nil {
		errText = e.scrub(rerr.Error())
		if errors.Is(rerr, context.Canceled) {
			errText = "interrupted"
		}
	}
	var stored json.RawMessage
	if measured {
		stored = JSON(sum)
	}
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: stored, Error: errText, Samples: samples}); err != nil {
		return out, errors.Join(rerr, err)
	}
	if rerr != nil && measured && !errors.Is(rerr, context.Canceled) {
		return out, &RunError{RunID: id, Status: status, Err: rerr}
	}
	return out, rerr
}

func streamsNote(o TPCHOptions) string {
	if !o.Test.HasThroughput() {
		return ""
	}
	return fmt.Sprintf(", %d query stream(s) in the throughput test", o.Streams)
}

// TPCHSummary is a run of TPC-H's tests as it is stored.
func TPCHSummary(r tpchdriver.Result, m summary.Monitor) summary.TPCH {
	return summary.TPCH{Dialect: r.Dialect, Scale: r.Scale, Test: string(r.Test), Streams: r.Streams, Seed: r.Seed,
		Validation: r.Validation, QueryTimeoutSeconds: r.QueryTimeoutSeconds, Power: r.Power, Throughput: r.Throughput,
		QphH: r.QphH, QphHAbsent: r.QphHAbsent, Notes: r.Notes, Interrupted: r.Interrupted, Monitor: m}
}
