package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Durability says how CompleteDurably treats a store that cannot take a
// finished run right away. The zero value waits DefaultMaxWait.
type Durability struct {
	// MaxWait is how long a busy store (locked by another process) or an
	// unreachable one (its PostgreSQL server is down or the connection was
	// lost) is retried before the result is left in its file for good.
	MaxWait time.Duration
	// AttemptWait bounds the database's own wait for a lock in each
	// attempt (the store's busy timeout otherwise).
	AttemptWait time.Duration
	// Notify receives one-line progress messages for the user; nil drops them.
	Notify func(msg string)
	// Now and Sleep are the clock; nil uses the real one. Sleep returns
	// early with ctx's error.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultMaxWait is how long a finished run waits for a busy store.
const DefaultMaxWait = 10 * time.Minute

// Retry backoff between attempts on a busy store.
const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 5 * time.Second
)

// SavedError says that a finished run could not be stored and where it
// was saved instead: Path holds everything (the run, its histograms and
// samples) and Import loads it, once, into this store or another.
type SavedError struct {
	Path string // empty when even the file could not be written
	Err  error
}

func (e *SavedError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v; the result is saved in %s: load it with `oltplab results import %s`", e.Err, e.Path, e.Path)
}

func (e *SavedError) Unwrap() error { return e.Err }

// CompleteDurably is CompleteRun for a measurement that must not be lost.
// When the store is busy (ErrBusy) or its server cannot be reached
// (ErrUnavailable) it saves the result to a file next to the store, or in
// oltplab's data directory for a PostgreSQL store (so a crash or Ctrl-C
// meanwhile loses nothing), says so through Notify, and retries with
// backoff for up to d.MaxWait; once stored, the file is removed. When the
// store stays busy or unreachable, or fails otherwise (damaged, read only,
// disk full), it returns a *SavedError naming the file. id must be a run
// this Store created.
func (s *Store) CompleteDurably(ctx context.Context, id int64, o Outcome, d Durability) error {
	if d.MaxWait <= 0 {
		d.MaxWait = DefaultMaxWait
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Sleep == nil {
		d.Sleep = sleep
	}
	notify := func(format string, args ...any) {
		if d.Notify != nil {
			d.Notify(fmt.Sprintf(format, args...))
		}
	}
	if err := o.validate(); err != nil {
		return fmt.Errorf("complete run %d: %w", id, err)
	}
	if o.EndedAt.IsZero() {
		o.EndedAt = s.now()
	}
	start := d.Now()
	saved := ""
	for attempt, backoff := 1, firstBackoff; ; attempt++ {
		err := s.completeAttempt(ctx, id, o, d.AttemptWait)
		if err == nil || (saved != "" && errors.Is(err, ErrFinished)) {
			// ErrFinished after saving: the saved file was imported meanwhile.
			if saved != "" {
				os.Remove(saved)
				notify("stored run %d in %s after %d attempts", id, s.Path(), attempt)
			}
			s.mu.Lock()
			delete(s.runs, id)
			s.mu.Unlock()
			return nil
		}
		if errors.Is(err, ErrFinished) || errors.Is(err, ErrNotFound) {
			return err // nothing to save: it is stored, or was never ours
		}
		if saved == "" {
			p, serr := s.saveOutcome(id, o)
			if serr != nil {
				return &SavedError{Err: fmt.Errorf("store run %d: %w; and saving it to a file failed too: %w", id, err, serr)}
			}
			saved = p
		}
		err = s.classify(err)
		unavailable := errors.Is(err, ErrUnavailable)
		if !errors.Is(err, ErrBusy) && !unavailable {
			return &SavedError{Path: saved, Err: fmt.Errorf("store run %d in %s: %w", id, s.Path(), err)}
		}
		state, stayed, cause := "is locked by another process", "stayed locked", ErrBusy
		if unavailable {
			state, stayed, cause = "cannot be reached", "stayed unreachable", ErrUnavailable
		}
		waited := d.Now().Sub(start)
		if attempt == 1 {
			notify("results store %s %s; retrying for up to %s (the result is saved in %s meanwhile)",
				s.Path(), state, d.MaxWait, saved)
		}
		if waited >= d.MaxWait {
			return &SavedError{Path: saved, Err: fmt.Errorf("store run %d: %s %s for %s: %w",
				id, s.Path(), stayed, waited.Round(time.Second), cause)}
		}
		if err := d.Sleep(ctx, min(backoff, d.MaxWait-waited)); err != nil {
			return &SavedError{Path: saved, Err: fmt.Errorf("store run %d: stopped waiting for %s: %w", id, s.Path(), err)}
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// completeAttempt is one CompleteRun whose wait for the lock is bounded
// by wait (0: the store's busy timeout).
func (s *Store) completeAttempt(ctx context.Context, id int64, o Outcome, wait time.Duration) error {
	if wait <= 0 {
		return s.CompleteRun(ctx, id, o)
	}
	// The wait is a setting of the connection: it holds for this attempt,
	// on the connection pinned for it, and is put back after.
	c, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, s.b.setWait(wait)); err != nil {
		return err
	}
	defer c.ExecContext(context.WithoutCancel(ctx), s.b.setWait(busyTimeout))
	hs, err := encodeHistograms(o.Histograms)
	if err != nil {
		return err
	}
	t, err := c.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer t.Rollback()
	if err := completeRun(ctx, t, id, o, hs, StatusRunning); err != nil {
		return err
	}
	return t.Commit()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// saveOutcome writes the run, its profile and o to a new file next to the
// store (the backend says where), or in the temporary directory when that
// fails, and returns its path.
func (s *Store) saveOutcome(id int64, o Outcome) (string, error) {
	s.mu.Lock()
	r, ok := s.runs[id]
	var p *Profile
	if pr, ok := s.profiles[r.ProfileID]; ok && r.ProfileID != 0 {
		p = &pr
	}
	s.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("run %d was not created by this process", id)
	}
	sv, err := newSaved(r, p, o, s.Path())
	if err != nil {
		return "", err
	}
	dirs, prefix := s.b.savedLocation()
	name := fmt.Sprintf("%s.run%d-%.8s.unstored.json", prefix, id, r.UID)
	var errs []error
	for _, dir := range dirs {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := s.writeSaved(path, sv, o.Samples); err != nil {
			errs = append(errs, err)
			continue
		}
		return path, nil
	}
	return "", errors.Join(errs...)
}
