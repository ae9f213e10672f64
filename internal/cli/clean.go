package cli

import (
	"context"
	"fmt"

	"github.com/oltplab/oltplab/internal/dialect"
)

const cleanSynopsis = "clean --target URL | clean --leftovers [--results PATH]"

// runClean removes what --reset-between keeps while a profile runs (a full
// copy of the database) and leaves behind when oltplab was killed; with
// --leftovers, what killed oltplab processes left on disk (leftovers.go).
func runClean(ctx context.Context, a *app, args []string) error {
	var (
		target    targetFlags
		leftovers leftoverFlags
	)
	fs := newFlagSet("clean")
	target.register(fs, a.env)
	leftovers.register(fs, a.env)
	if err := a.parseFlags(fs, cleanSynopsis, args); err != nil {
		return helpOK(err)
	}
	if leftovers.on {
		if target.targetSet.set {
			return usageErrorf("clean: give --target URL or --leftovers, not both")
		}
		return a.cleanLeftovers(ctx, leftovers)
	}
	db, tg, err := a.openTarget(ctx, target)
	if err != nil {
		return err
	}
	defer db.Close()
	r, ok := db.(dialect.Resetter)
	if !ok {
		return usageErrorf("clean: the %s dialect keeps no baseline copy", db.Name())
	}
	if err := r.DropBaseline(ctx); err != nil {
		return fmt.Errorf("remove the baseline copy of %s: %w", tg, err)
	}
	fmt.Fprintf(a.out(), "no baseline copy of %s is left (the copy --reset-between keeps was removed, if there was one)\n", tg)
	return nil
}
