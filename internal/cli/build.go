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
	"github.com/oltplab/oltplab/internal/scenario"
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
	fs.IntVar(&o.Workers, "workers", 4, "`N` parallel load connections (by warehouse; SQLite uses 1)")
	fs.BoolVar(&o.Drop, "drop", false, "drop an existing TPC-C schema first (without it an existing schema is an error)")
	fs.Uint64Var(&o.Seed, "seed", 0, "random `SEED` of the population (default: drawn and recorded)")
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

// build runs one build, recording it in the store, and prints its result;
// progress goes to progressTo.
func (a *app) build(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, o buildOptions, progressTo io.Writer) (load.Result, error) {
	pr := newBuildProgress(progressTo, isTerminal(progressTo))
	obs := scenario.Observer{
		Note:          func(msg string) { fmt.Fprintln(progressTo, msg) },
		BuildProgress: pr.Update,
	}
	id, res, err := a.scenarioEnv(st, obs).Build(ctx, db, tg, o.Options)
	pr.Finish()
	if err != nil && !isSaved(err) {
		return res, err
	}
	// Built but not stored: the result is printed before the error says
	// where it was saved.
	if o.json {
		return res, errors.Join(err, writeJSON(a.out(), map[string]any{"run_id": id, "result": res}))
	}
	w := a.out()
	fmt.Fprintf(w, "built %d warehouse(s) in %s: %d rows in %.1f s (%.0f rows/s loading)\n",
		res.Warehouses, tg, res.TotalRows, res.TotalSeconds, res.RowsPerSec)
	fmt.Fprintf(w, "  load %.1f s, indexes %.1f s, procedures %.1f s, analyze %.1f s; seed %d\n",
		res.LoadSeconds, res.IndexSeconds, res.ProceduresSeconds, res.AnalyzeSeconds, res.Seed)
	if err != nil {
		return res, err
	}
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
