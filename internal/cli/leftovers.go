package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/scenario"
)

// leftoverFlags are `clean --leftovers` and the results store the
// leftovers are recorded in.
type leftoverFlags struct {
	on      bool
	results storeFlags
}

func (l *leftoverFlags) register(fs *pflag.FlagSet, env Env) {
	fs.BoolVar(&l.on, "leftovers", false, "instead of a baseline copy: remove what oltplab processes of this host that were killed left on disk "+
		"(a backup cycle's directory, its restored copy, a storage bench's test file), as recorded in the results store, "+
		"where it still carries oltplab's mark; nothing else, and never through a link; and unmount a latency layer a killed oltplab "+
		"left mounted for a process that outlived it")
	l.results.register(fs, env)
}

// cleanLeftovers removes the leftovers recorded in the store whose
// process is gone (scenario.RemoveLeftovers) and says what became of each.
// One that could not be removed is exit 10; one that carries the mark no
// more is left alone and forgotten.
func (a *app) cleanLeftovers(ctx context.Context, l leftoverFlags) error {
	st, err := a.openStore(ctx, l.results)
	if err != nil {
		return err
	}
	defer st.Close()
	rs, err := scenario.RemoveLeftovers(ctx, st, 0)
	w := a.out()
	failed := 0
	for _, r := range rs {
		fmt.Fprintln(w, r.String())
		if r.Outcome == scenario.LeftoverFailed {
			failed++
		}
	}
	if err != nil {
		return err
	}
	// Latency layers' mounts of killed oltplab processes that a process
	// which outlived them still holds (they name the oltplab that made
	// them); the data under them is never touched.
	mounts, merr := latency.RemoveLeftovers()
	if merr != nil {
		a.log.Warn("look for latency layers' leftover mounts", "err", merr)
	}
	for _, m := range mounts {
		if m.Err != nil {
			failed++
			fmt.Fprintln(w, m.String())
			continue
		}
		fmt.Fprintln(w, m.String()+": unmounted")
	}
	if len(rs) == 0 && len(mounts) == 0 {
		fmt.Fprintf(w, "nothing to remove: no leftover of a killed oltplab is recorded in %s\n", st.Path())
	}
	if failed > 0 {
		return withCode(exitDirectory, fmt.Errorf("%d leftover(s) could not be removed: see above", failed))
	}
	return nil
}
