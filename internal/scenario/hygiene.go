package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
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

// newHygiene checks the dialect has the asked abilities and, for a reset
// between steps, saves the baseline. The database must be in its
// post-build state then, or repeats would start from something else.
//
// When resuming, a baseline left by the interrupted profile is used first:
// the database returns to it, and is then in its post-build state.
func newHygiene(ctx context.Context, db dialect.Database, tg dialect.Target, meta tpcc.Meta, checkpoint, reset, resuming bool) (*hygiene, error) {
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
	if resuming {
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
	if err := r.SaveBaseline(ctx); err != nil {
		return nil, fmt.Errorf("save the post-build baseline of %s: %w", tg, err)
	}
	h.reset = r
	return h, nil
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
