package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/store"
)

const buildSynopsis = "build --target URL --warehouses W [--workers N] [--drop] [--seed S] [--json]"

// buildOptions are the flags of `oltplab build`.
type buildOptions struct {
	target  targetFlags
	results storeFlags
	load.Options
	json bool
}

func runBuild(ctx context.Context, a *app, args []string) error {
	var o buildOptions
	fs := newFlagSet("build")
	o.target.register(fs, a.env)
	o.results.register(fs, a.env)
	fs.IntVar(&o.Warehouses, "warehouses", 1, "number of `W`arehouses to build (scale; ~100 MB each)")
	fs.IntVar(&o.Workers, "workers", 4, "parallel load connections (by warehouse; SQLite uses 1)")
	fs.BoolVar(&o.Drop, "drop", false, "drop an existing TPC-C schema first (without it an existing schema is an error)")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed of the population (default: drawn and recorded)")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
	if err := a.parseFlags(fs, buildSynopsis, args); err != nil {
		return helpOK(err)
	}
	if o.Seed == 0 {
		o.Seed = drawSeed()
	}
	o.ToolVersion = version()
	if err := o.Validate(); err != nil {
		return usageErrorf("build: %v", err)
	}
	return a.withTarget(ctx, o.results, o.target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
		_, err := a.build(ctx, st, db, tg, o, a.errw())
		return err
	})
}

// build runs one build, recording it in the store, and prints its result.
func (a *app) build(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, o buildOptions, progressTo io.Writer) (load.Result, error) {
	rc := a.gatherContext(ctx, db, tg, nil)
	seed := int64(o.Seed)
	id, err := st.CreateRun(ctx, store.Run{
		Kind: store.KindBuild, Target: tg.String(), Dialect: db.Name(), ToolVersion: version(), Seed: &seed,
		Params:  mustJSON(map[string]any{"warehouses": o.Warehouses, "workers": o.EffectiveWorkers(db.Caps()), "drop": o.Drop, "seed": o.Seed}),
		Context: mustJSON(rc),
	})
	if err != nil {
		return load.Result{}, withCode(exitStore, fmt.Errorf("record the build: %w", err))
	}
	fmt.Fprintf(progressTo, "building %d warehouse(s) in %s with %d worker(s)\n", o.Warehouses, tg, o.EffectiveWorkers(db.Caps()))
	pr := newBuildProgress(progressTo, isTerminal(progressTo))
	res, berr := load.Build(ctx, db, o.Options, pr.Update)
	pr.Finish()

	fctx := context.WithoutCancel(ctx)
	status := store.StatusOK
	errText := ""
	if berr != nil {
		status = store.StatusFailed
		errText = a.scrub(berr.Error())
	}
	var summary json.RawMessage
	if berr == nil {
		summary = mustJSON(res)
	}
	if err := a.storeOutcome(fctx, st, id, store.Outcome{Status: status, Summary: summary, Error: errText}); err != nil {
		return res, withCode(exitStore, errors.Join(berr, err))
	}
	if berr != nil {
		if errors.Is(berr, context.Canceled) {
			return res, fmt.Errorf("build interrupted; the target holds a half-built schema (rebuild with --drop): %w", berr)
		}
		return res, fmt.Errorf("build: %w", berr)
	}
	if o.json {
		return res, writeJSON(a.out(), map[string]any{"run_id": id, "result": res})
	}
	w := a.out()
	fmt.Fprintf(w, "built %d warehouse(s) in %s: %d rows in %.1f s (%.0f rows/s loading)\n",
		res.Warehouses, tg, res.TotalRows, res.TotalSeconds, res.RowsPerSec)
	fmt.Fprintf(w, "  load %.1f s, indexes %.1f s, procedures %.1f s, analyze %.1f s; seed %d\n",
		res.LoadSeconds, res.IndexSeconds, res.ProceduresSeconds, res.AnalyzeSeconds, res.Seed)
	fmt.Fprintf(w, "stored as run %d in %s\n", id, st.Path())
	return res, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// drawSeed draws a seed for a run or build that was not given one; it is
// recorded with the result so the run can be reproduced.
func drawSeed() uint64 {
	s := uint64(time.Now().UnixNano())
	s ^= s >> 33
	s *= 0xff51afd7ed558ccd
	s ^= s >> 33
	s &= 1<<53 - 1 // exact in JSON and in the store's INTEGER
	if s == 0 {
		s = 1
	}
	return s
}
