package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/tpcc"
)

const checkSynopsis = "check --target URL [--json]"

func runCheck(ctx context.Context, a *app, args []string) error {
	var (
		target  targetFlags
		results storeFlags
		asJSON  bool
	)
	fs := newFlagSet("check")
	target.register(fs, a.env)
	results.register(fs, a.env)
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON")
	if err := a.parseFlags(fs, checkSynopsis, args); err != nil {
		return helpOK(err)
	}
	return a.withTarget(ctx, results, target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
		return a.check(ctx, st, db, tg, asJSON)
	})
}

// checkOutcome is what `check` stores and prints.
type checkOutcome struct {
	AfterBuild bool               `json:"after_build"`
	Passed     bool               `json:"passed"`
	Conditions []tpcc.CheckResult `json:"conditions"`
	Seconds    float64            `json:"seconds"`
}

// check evaluates every consistency condition of clause 3.3.2, each in one
// snapshot of its own, records the outcome and prints it. It returns a
// silent error with exitCheckFailed when a condition fails.
func (a *app) check(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, asJSON bool) error {
	meta, err := readSchema(ctx, db, tg)
	if err != nil {
		return err
	}
	id, err := st.CreateRun(ctx, store.Run{Kind: store.KindCheck, Target: tg.String(), Dialect: db.Name(), ToolVersion: version(),
		Params: mustJSON(map[string]any{"warehouses": meta.Warehouses}), Context: mustJSON(a.gatherContext(ctx, db, tg, &meta))})
	if err != nil {
		return withCode(exitStore, fmt.Errorf("record the check: %w", err))
	}
	start := time.Now()
	out, cerr := runConditions(ctx, db, meta)
	out.Seconds = time.Since(start).Seconds()
	status, errText := store.StatusOK, ""
	if cerr != nil {
		status, errText = store.StatusFailed, a.scrub(cerr.Error())
	}
	if err := a.storeOutcome(ctx, st, id, store.Outcome{Status: status, Summary: mustJSON(out), Error: errText}); err != nil {
		return withCode(exitStore, errors.Join(cerr, err))
	}
	if cerr != nil {
		return fmt.Errorf("check %s: %w", tg, cerr)
	}
	if asJSON {
		if err := writeJSON(a.out(), map[string]any{"run_id": id, "result": out}); err != nil {
			return err
		}
	} else {
		w := a.out()
		fmt.Fprintf(w, "consistency conditions (TPC-C 3.3.2) on %s, %d warehouse(s):\n", tg, meta.Warehouses)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range out.Conditions {
			verdict := "pass"
			switch {
			case c.Skipped:
				verdict = "skipped: " + c.Detail
			case !c.Passed:
				verdict = fmt.Sprintf("FAIL: %d violation(s), first: %s", c.Violations, c.Detail)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Clause, c.Name, verdict)
		}
		tw.Flush()
		fmt.Fprintf(w, "checked in %.1f s; stored as run %d in %s\n", out.Seconds, id, st.Path())
	}
	if !out.Passed {
		if !asJSON {
			fmt.Fprintln(a.errw(), "oltplab: consistency check failed")
		}
		return errSilent{exitCheckFailed}
	}
	return nil
}

// runConditions evaluates each condition in a snapshot of its own.
// Condition 3.3.2.11 holds only for the initial population, so it is
// evaluated only when the database is still in that state (no New-Order
// and no Delivery since the build).
func runConditions(ctx context.Context, db dialect.Database, meta tpcc.Meta) (checkOutcome, error) {
	var out checkOutcome
	err := db.Snapshot(ctx, func(q tpcc.Querier) error {
		var err error
		out.AfterBuild, err = initialPopulation(ctx, q, meta)
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

// initialPopulation reports whether the database still holds exactly the
// initial population's orders: D_NEXT_O_ID at 3001 everywhere (clause
// 4.3.3.1) and all 900 undelivered orders per district.
func initialPopulation(ctx context.Context, q tpcc.Querier, meta tpcc.Meta) (bool, error) {
	var next, newOrders int64
	if err := q.QueryRow(ctx, "SELECT SUM(d_next_o_id) FROM district").Scan(&next); err != nil {
		return false, err
	}
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM new_order").Scan(&newOrders); err != nil {
		return false, err
	}
	districts := int64(meta.Warehouses * tpcc.DistrictsPerWarehouse)
	return next == districts*(tpcc.OrdersPerDistrict+1) &&
		newOrders == districts*tpcc.NewOrdersPerDistrict, nil
}
