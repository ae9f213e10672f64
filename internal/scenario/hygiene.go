package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/sysstat"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// hygiene runs the optional per-step preparation of a profile:
// --checkpoint-before and --reset-between. What it did is recorded with
// every run.
type hygiene struct {
	checkpoint dialect.Checkpointer // nil unless asked for
	reset      dialect.Resetter     // nil unless asked for
}

// Preparation is what was done before one step, stored with its run.
type Preparation struct {
	CheckpointSeconds *float64 `json:"checkpoint_seconds,omitempty"`
	ResetSeconds      *float64 `json:"reset_seconds,omitempty"`
}

// hygieneOptions are what a profile asked for before each step.
type hygieneOptions struct {
	checkpoint, reset bool
	// endSessions lets a reset end the database user's other sessions
	// (dialect.SessionEnder); without it none is ended.
	endSessions bool
	// dataDir is the directory of the database files on this machine, for
	// the free-space check of the baseline copy; "" when the database is
	// elsewhere.
	dataDir string
	// resuming: the profile continues an interrupted one, whose baseline
	// may still be there.
	resuming bool
}

// baselineHeadroom is the free space a baseline copy must leave: its own
// size plus a fifth, for the database to keep growing during the steps.
const baselineHeadroom = 1.2

// newHygiene checks the dialect has the asked abilities and, for a reset
// between steps, checks the free space and saves the baseline. The
// database must be in its post-build state then, or repeats would start
// from something else.
//
// When resuming, a baseline left by the interrupted profile is used first:
// the database returns to it, and is then in its post-build state.
func (e *Env) newHygiene(ctx context.Context, db dialect.Database, tg dialect.Target, meta tpcc.Meta, o hygieneOptions) (*hygiene, error) {
	checkpoint, reset := o.checkpoint, o.reset
	h := &hygiene{}
	if checkpoint {
		c, ok := db.(dialect.Checkpointer)
		if !ok {
			return nil, &UnsupportedError{What: "checkpoint before each step", Dialect: db.Name()}
		}
		h.checkpoint = c
	}
	if !reset {
		return h, nil
	}
	r, ok := db.(dialect.Resetter)
	if !ok {
		return nil, &UnsupportedError{What: "reset the database between steps", Dialect: db.Name()}
	}
	if se, ok := db.(dialect.SessionEnder); ok {
		se.EndOtherSessions(o.endSessions)
	}
	if o.resuming {
		err := r.Reset(ctx)
		if err == nil {
			h.reset = r
			return h, nil
		}
		if !errors.Is(err, dialect.ErrNoBaseline) {
			return nil, fmt.Errorf("return %s to the baseline of the interrupted profile: %w", tg, err)
		}
	}
	var fresh bool
	if err := db.Snapshot(ctx, func(q tpcc.Querier) error {
		var err error
		fresh, err = InitialPopulation(ctx, q, meta)
		return err
	}); err != nil {
		return nil, fmt.Errorf("inspect the population of %s: %w", tg, err)
	}
	if !fresh {
		return nil, fmt.Errorf("--reset-between needs %s as it was built, but transactions have run since the build: rebuild it with `oltplab build --drop`: %w", tg, ErrNotPostBuild)
	}
	if err := e.checkBaselineSpace(ctx, db, tg, o.dataDir); err != nil {
		return nil, err
	}
	if err := r.SaveBaseline(ctx); err != nil {
		return nil, fmt.Errorf("save the post-build baseline of %s: %w", tg, err)
	}
	h.reset = r
	return h, nil
}

// checkBaselineSpace makes sure the copy --reset-between keeps fits on
// the database's file system, when that is on this machine; elsewhere it
// says the copy's size and that the space could not be checked.
func (e *Env) checkBaselineSpace(ctx context.Context, db dialect.Database, tg dialect.Target, dataDir string) error {
	bs, ok := db.(dialect.BaselineSizer)
	if !ok {
		return nil
	}
	need, err := bs.BaselineBytes(ctx)
	if err != nil {
		return fmt.Errorf("size the baseline copy of %s: %w", tg, err)
	}
	if dataDir == "" {
		e.note("--reset-between keeps a copy of the database (%s) on its server while the profile runs; "+
			"the server's free space cannot be checked from here", formatBytes(need))
		return nil
	}
	freeBytes := e.FreeBytes
	if freeBytes == nil {
		freeBytes = sysstat.FreeBytes
	}
	free, err := freeBytes(dataDir)
	if err != nil {
		e.note("--reset-between keeps a copy of the database (%s); the free space of %s could not be read: %v",
			formatBytes(need), dataDir, err)
		return nil
	}
	if float64(free) < baselineHeadroom*float64(need) {
		return &SpaceError{What: "the baseline copy --reset-between keeps", Need: int64(baselineHeadroom * float64(need)), Free: free, Where: dataDir}
	}
	e.note("--reset-between keeps a copy of the database (%s) while the profile runs; %s free in %s",
		formatBytes(need), formatBytes(free), dataDir)
	return nil
}

// formatBytes writes a size in binary units: "1.5 GiB".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// before prepares one step: a reset (except before the first, which starts
// from the baseline itself), then a checkpoint.
func (h *hygiene) before(ctx context.Context, notFirst bool) (Preparation, error) {
	var p Preparation
	if h.reset != nil && notFirst {
		start := time.Now()
		if err := h.reset.Reset(ctx); err != nil {
			return p, fmt.Errorf("reset the database before the step: %w", err)
		}
		s := time.Since(start).Seconds()
		p.ResetSeconds = &s
	}
	if h.checkpoint != nil {
		start := time.Now()
		if err := h.checkpoint.Checkpoint(ctx); err != nil {
			return p, fmt.Errorf("checkpoint before the step: %w", err)
		}
		s := time.Since(start).Seconds()
		p.CheckpointSeconds = &s
	}
	return p, nil
}

// finish leaves a reset database as it was built and frees the baseline.
func (h *hygiene) finish(ctx context.Context) error {
	if h.reset == nil {
		return nil
	}
	if err := h.reset.Reset(ctx); err != nil {
		return fmt.Errorf("return the database to its post-build state: %w", err)
	}
	if err := h.reset.DropBaseline(ctx); err != nil {
		return fmt.Errorf("drop the baseline: %w", err)
	}
	return nil
}
