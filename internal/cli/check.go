package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
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

// check evaluates every consistency condition of clause 3.3.2, records
// the outcome and prints it. It returns a silent error with
// exitCheckFailed when a condition fails.
func (a *app) check(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, asJSON bool) error {
	out, err := a.scenarioEnv(st, scenario.Observer{}).Check(ctx, db, tg)
	if err != nil && !isSaved(err) {
		return err
	}
	// Checked but not stored: the outcome is printed before the error
	// says where it was saved.
	if asJSON {
		if werr := writeJSON(a.out(), map[string]any{"run_id": out.RunID, "result": out}); werr != nil {
			return errors.Join(err, werr)
		}
	} else {
		w := a.out()
		fmt.Fprintf(w, "consistency conditions (TPC-C 3.3.2) on %s, %d warehouse(s):\n", tg, out.Warehouses)
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
		if err == nil {
			fmt.Fprintf(w, "checked in %.1f s; stored as run %d in %s\n", out.Seconds, out.RunID, st.Path())
		}
	}
	if err != nil {
		return err
	}
	if !out.Passed {
		if !asJSON {
			fmt.Fprintln(a.errw(), "oltplab: consistency check failed")
		}
		return errSilent{exitCheckFailed}
	}
	return nil
}
