package scenario

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/fio"
	"github.com/oltplab/oltplab/internal/store"
)

// What a scenario creates on disk for the time of a command (a backup
// cycle's directory, its restored copy, fio's test file) is recorded in
// the store before it exists, with the mark oltplab puts on it
// (internal/claim), and recorded again once removed (or kept). What a
// killed oltplab leaves is then known: RemoveLeftovers removes it, from
// `oltplab clean --leftovers` and `experiment resume`.

// Leftovers records what this Env's scenarios create on disk in the
// results store (fio.Tracker, for a storage benchmark's test file).
func (e *Env) Leftovers() fio.Tracker { return e.leftovers() }

func (e *Env) leftovers() leftovers { return leftovers{e} }

type leftovers struct{ e *Env }

var _ fio.Tracker = leftovers{}

// Track records that path is about to be created with mark m.
func (l leftovers) Track(ctx context.Context, path string, m claim.Mark) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	expID, _ := l.e.link()
	if _, err := l.e.Store.RecordLeftover(ctx, store.Leftover{Path: abs, Kind: string(m.Kind), Mark: m.ID, ExperimentID: expID}); err != nil {
		return storeErr("record "+abs+" before creating it", err)
	}
	return nil
}

// Removed records that what carries m was removed.
func (l leftovers) Removed(ctx context.Context, path string, m claim.Mark) {
	l.end(ctx, path, m, store.LeftoverRemoved, "")
}

// kept records that what carries m stays, as the user asked.
func (l leftovers) kept(ctx context.Context, path string, m claim.Mark) {
	l.end(ctx, path, m, store.LeftoverKept, "kept as asked")
}

func (l leftovers) end(ctx context.Context, path string, m claim.Mark, state store.LeftoverState, note string) {
	if err := l.e.Store.EndLeftover(context.WithoutCancel(ctx), m.ID, state, note); err != nil {
		l.e.logger().Warn("record what became of "+path, "err", err)
	}
}

// removeMarked removes what oltplab created at path with mark m and
// records it: a failure is a warning (the record stays, for a later
// `oltplab clean --leftovers`).
func (e *Env) removeMarked(ctx context.Context, path string, m claim.Mark) {
	if err := claim.Remove(path, m); err != nil {
		e.logger().Warn("remove "+path, "err", err)
		return
	}
	e.leftovers().Removed(ctx, path, m)
}

// LeftoverRemoval is what became of one recorded leftover.
type LeftoverRemoval struct {
	store.Leftover
	Outcome LeftoverOutcome
	Err     error // why it was not removed (Failed, Left)
}

// LeftoverOutcome is what RemoveLeftovers did with one leftover.
type LeftoverOutcome string

const (
	LeftoverRemoved LeftoverOutcome = "removed"
	LeftoverGone    LeftoverOutcome = "gone already"
	// LeftoverLeft: something without its mark is in its place now: left
	// alone, and no longer looked for.
	LeftoverLeft LeftoverOutcome = "left alone"
	// LeftoverInUse: the process that made it still runs.
	LeftoverInUse LeftoverOutcome = "in use"
	// LeftoverElsewhere: made on another host, whose oltplab removes it.
	LeftoverElsewhere LeftoverOutcome = "on another host"
	// LeftoverFailed: it could not be removed (Err says why); it stays
	// recorded.
	LeftoverFailed LeftoverOutcome = "not removed"
)

// RemoveLeftovers removes what oltplab processes of this host that ended
// without removing it left on disk: every leftover recorded present (of
// experiment experimentID, when not 0) whose process has ended, where it
// still carries the mark it was made with (claim.Remove: through no link,
// only what carries the mark). Leftovers of running processes and of
// other hosts are listed and left. The error is the store's.
func RemoveLeftovers(ctx context.Context, st *store.Store, experimentID int64) ([]LeftoverRemoval, error) {
	ls, err := st.Leftovers(ctx, store.LeftoverFilter{ExperimentID: experimentID})
	if err != nil {
		return nil, storeErr("read the recorded leftovers", err)
	}
	var out []LeftoverRemoval
	for _, l := range ls {
		r := LeftoverRemoval{Leftover: l}
		switch {
		case l.Writer.Host != st.Host():
			r.Outcome = LeftoverElsewhere
		case !st.WriterGone(l.Writer):
			r.Outcome = LeftoverInUse
		default:
			r.Outcome, r.Err = removeLeftover(l)
			state, note := store.LeftoverRemoved, "removed by a later oltplab"
			switch r.Outcome {
			case LeftoverGone:
				note = "gone already"
			case LeftoverLeft:
				state, note = store.LeftoverLeft, r.Err.Error()
			case LeftoverFailed:
				out = append(out, r)
				continue
			}
			if err := st.EndLeftover(ctx, l.Mark, state, note); err != nil {
				return out, storeErr("record what became of "+l.Path, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// removeLeftover removes one leftover where it carries its mark.
func removeLeftover(l store.Leftover) (LeftoverOutcome, error) {
	_, statErr := os.Lstat(l.Path)
	err := claim.Remove(l.Path, claim.Mark{Kind: claim.Kind(l.Kind), ID: l.Mark})
	switch {
	case errors.Is(err, claim.ErrNotMarked):
		return LeftoverLeft, err
	case err != nil:
		return LeftoverFailed, err
	case errors.Is(statErr, fs.ErrNotExist):
		return LeftoverGone, nil
	}
	return LeftoverRemoved, nil
}

// String is one line about a removal, for the user.
func (r LeftoverRemoval) String() string {
	s := fmt.Sprintf("%s %s: %s", r.Kind, r.Path, r.Outcome)
	switch r.Outcome {
	case LeftoverInUse:
		s += fmt.Sprintf(" (by oltplab process %d)", r.Writer.PID)
	case LeftoverElsewhere:
		s += fmt.Sprintf(" (%s: run oltplab clean --leftovers there)", r.Writer.Host)
	}
	if r.Err != nil {
		s += ": " + r.Err.Error()
	}
	return s
}
