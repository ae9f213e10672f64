package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// CheckOutcome is a stored consistency check: its summary and where it
// is.
type CheckOutcome struct {
	RunID      int64 `json:"-"`
	Warehouses int   `json:"-"`
	summary.Check
}

// Check evaluates every consistency condition of clause 3.3.2, each in one
// snapshot of its own, and records the outcome as a run of kind check. A
// failed condition is not an error: the outcome says Passed false.
func (e *Env) Check(ctx context.Context, db dialect.Database, tg dialect.Target) (CheckOutcome, error) {
	meta, err := ReadSchema(ctx, db, tg)
	if err != nil {
		return CheckOutcome{}, err
	}
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{Kind: store.KindCheck, Target: tg.String(), Dialect: db.Name(), ToolVersion: e.ToolVersion,
		ExperimentID: expID, ExperimentSeq: expSeq,
		Params: JSON(map[string]any{"warehouses": meta.Warehouses}), Context: JSON(e.GatherContext(ctx, db, tg, &meta))})
	if err != nil {
		return CheckOutcome{}, storeErr("record the check", err)
	}
	start := time.Now()
	out, cerr := runConditions(ctx, db, meta)
	out.RunID, out.Warehouses = id, meta.Warehouses
	out.Seconds = time.Since(start).Seconds()
	// Failed conditions are a verdict, not a failure of the check.
	status := summary.Status(summary.Facts{Measured: cerr == nil, Failed: cerr != nil})
	errText := ""
	if cerr != nil {
		errText = e.scrub(cerr.Error())
	}
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: JSON(out.Check), Error: errText}); err != nil {
		return out, errors.Join(cerr, err)
	}
	if cerr != nil {
		return out, fmt.Errorf("check %s: %w", tg, cerr)
	}
	return out, nil
}

// runConditions evaluates each condition in a snapshot of its own.
// Condition 3.3.2.11 holds only for the initial population, so it is
// evaluated only when the database is still in that state (no New-Order
// and no Delivery since the build).
func runConditions(ctx context.Context, db dialect.Database, meta tpcc.Meta) (CheckOutcome, error) {
	var out CheckOutcome
	err := db.Snapshot(ctx, func(q tpcc.Querier) error {
		var err error
		out.AfterBuild, err = InitialPopulation(ctx, q, meta)
		return err
	})
	if err != nil {
		return out, fmt.Errorf("inspect the population: %w", err)
	}
	out.Passed = true
	tol := db.Caps().MoneyTolerance
	for _, c := range tpcc.Conditions {
		var r tpcc.CheckResult
		if c.OnlyAfterBuild && !out.AfterBuild {
			r = tpcc.CheckResult{Clause: c.Clause, Name: c.Name, Skipped: true,
				Detail: "holds only right after the build (transactions have run since)"}
		} else if err := db.Snapshot(ctx, func(q tpcc.Querier) error {
			var err error
			r, err = c.Check(ctx, q, tol)
			return err
		}); err != nil {
			return out, fmt.Errorf("condition %s: %w", c.Clause, err)
		}
		if !r.Passed && !r.Skipped {
			out.Passed = false
		}
		out.Conditions = append(out.Conditions, r)
	}
	return out, nil
}
