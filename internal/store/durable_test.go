package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is the clock of CompleteDurably in tests: sleeping advances
// it at once, and onSleep sees the time after each sleep.
type fakeClock struct {
	mu      sync.Mutex
	t       time.Time
	onSleep func(now time.Time)
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.t = c.t.Add(d)
	now := c.t
	c.mu.Unlock()
	if c.onSleep != nil {
		c.onSleep(now)
	}
	return ctx.Err()
}

// savedFiles lists the result files saved next to a store.
func savedFiles(t *testing.T, storePath string) []string {
	t.Helper()
	m, err := filepath.Glob(storePath + ".run*.unstored.json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// storedRun checks that run id is stored with status ok, its histogram
// and n samples.
func storedRun(t *testing.T, s *Store, id int64, n int) {
	t.Helper()
	ctx := context.Background()
	r, err := s.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusOK || string(r.Summary) != `{"nopm":1}` {
		t.Errorf("run %d: status %s, summary %s; want ok and the summary", id, r.Status, r.Summary)
	}
	hs, err := s.LoadHistograms(ctx, id)
	if err != nil || hs["new_order"] == nil || hs["new_order"].TotalCount() != 100 {
		t.Errorf("run %d: histograms %v (%v), want new_order with 100 values", id, hs, err)
	}
	sm, err := s.Samples(ctx, id, SampleFilter{})
	if err != nil || len(sm) != n {
		t.Errorf("run %d: %d samples (%v), want %d", id, len(sm), err, n)
	}
}

// TestCompleteDurablyWaitsForALock: another process holds the store with
// an exclusive transaction for a (simulated) half minute after a run
// ended. The result is saved to a file at once, the user is told, and once
// the lock is gone the run is stored and the file removed.
func TestCompleteDurablyWaitsForALock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pid, err := s.CreateProfile(ctx, Profile{Label: "p"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.CreateRun(ctx, Run{Kind: KindRun, ProfileID: pid, Label: "p"})
	if err != nil {
		t.Fatal(err)
	}
	lock := startChild(t, "lock "+path)
	lock.expect(t, "locked")

	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	released := false
	clock.onSleep = func(now time.Time) {
		if len(savedFiles(t, path)) != 1 {
			t.Errorf("while waiting: saved files %v, want one", savedFiles(t, path))
		}
		if !released && now.Sub(start) > 30*time.Second {
			lock.stdin.Close()
			lock.expect(t, "released")
			released = true
		}
	}
	var notes []string
	err = s.CompleteDurably(ctx, id, testOutcome(10), Durability{
		MaxWait: time.Minute, AttemptWait: 20 * time.Millisecond,
		Now: clock.Now, Sleep: clock.Sleep, Notify: func(m string) { notes = append(notes, m) },
	})
	if err != nil {
		t.Fatalf("CompleteDurably: %v", err)
	}
	if !released {
		t.Fatalf("stored while the lock was held")
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "locked by another process") {
		t.Errorf("user not told about the wait: %q", notes)
	}
	if f := savedFiles(t, path); len(f) != 0 {
		t.Errorf("saved file left behind after storing: %v", f)
	}
	storedRun(t, s, id, 10)
}

// TestCompleteDurablySavesWhatItCannotStore: the lock outlasts the wait.
// The result is left in a file that Import loads, once, into the store it
// was meant for or into another.
func TestCompleteDurablySavesWhatItCannotStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pid, err := s.CreateProfile(ctx, Profile{Label: "sata"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.CreateRun(ctx, Run{Kind: KindRun, ProfileID: pid, Label: "sata", Step: 1, Repeat: 1, VUs: 4})
	if err != nil {
		t.Fatal(err)
	}
	lock := startChild(t, "lock "+path)
	lock.expect(t, "locked")
	clock := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	err = s.CompleteDurably(ctx, id, testOutcome(10), Durability{
		MaxWait: time.Minute, AttemptWait: 20 * time.Millisecond, Now: clock.Now, Sleep: clock.Sleep,
	})
	var se *SavedError
	if !errors.As(err, &se) || se.Path == "" || !errors.Is(err, ErrBusy) {
		t.Fatalf("CompleteDurably: got %v, want a SavedError for a busy store", err)
	}
	if !strings.Contains(err.Error(), "oltplab results import "+se.Path) {
		t.Errorf("error does not say how to load the file: %v", err)
	}
	lock.stdin.Close()
	lock.expect(t, "released")

	importFile := func(s *Store) Imported {
		t.Helper()
		f, err := os.Open(se.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		imp, err := s.Import(ctx, f)
		if err != nil {
			t.Fatalf("Import: %v", err)
		}
		return imp
	}
	// Into the store it was meant for: the running row is completed.
	if imp := importFile(s); imp.RunID != id || imp.Already {
		t.Errorf("first import: got %+v, want run %d stored", imp, id)
	}
	storedRun(t, s, id, 10)
	if imp := importFile(s); imp.RunID != id || !imp.Already {
		t.Errorf("second import: got %+v, want run %d already stored", imp, id)
	}
	storedRun(t, s, id, 10) // no duplicate samples

	// Into another store: the run and its profile are added, once.
	other, err := Open(ctx, filepath.Join(dir, "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	imp := importFile(other)
	if imp.Already {
		t.Errorf("import into another store: already there?")
	}
	storedRun(t, other, imp.RunID, 10)
	r, err := other.GetRun(ctx, imp.RunID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := other.GetProfile(ctx, r.ProfileID)
	if err != nil || p.Label != "sata" || r.Step != 1 || r.VUs != 4 {
		t.Errorf("imported run %+v, profile %+v (%v): want it in profile sata, step 1, 4 VUs", r, p, err)
	}
	if again := importFile(other); !again.Already || again.RunID != imp.RunID {
		t.Errorf("second import into another store: got %+v", again)
	}
	if runs, _ := other.ListRuns(ctx, RunFilter{}); len(runs) != 1 {
		t.Errorf("another store holds %d runs, want 1", len(runs))
	}
}

// TestImportRefusesOtherFiles: a file that is not a saved result, or a
// damaged one, is refused and nothing is stored.
func TestImportRefusesOtherFiles(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	for _, in := range []string{"", "{}", `{"format":"something else"}`, "not json",
		`{"format":"` + savedFormat + `","run":{"Kind":"run","UID":"zz"}}`} {
		if _, err := s.Import(ctx, strings.NewReader(in)); !errors.Is(err, ErrNotSaved) {
			t.Errorf("Import(%q): got %v, want ErrNotSaved", in, err)
		}
	}
	if runs, _ := s.ListRuns(ctx, RunFilter{}); len(runs) != 0 {
		t.Errorf("%d runs stored from bad files", len(runs))
	}
}
