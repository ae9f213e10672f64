package store

import (
	"bytes"
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

// savedFiles lists the result files saved for a store.
func savedFiles(t *testing.T, s *Store) []string {
	t.Helper()
	dirs, prefix := s.b.savedLocation()
	m, err := filepath.Glob(filepath.Join(dirs[0], prefix+".run*.unstored.json"))
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

// testCompleteDurablyWaitsForALock: another process holds the store with
// an exclusive transaction for a (simulated) half minute after a run
// ended. The result is saved to a file at once, the user is told, and once
// the lock is gone the run is stored and the file removed.
func testCompleteDurablyWaitsForALock(t *testing.T, b testBackend) {
	ctx := context.Background()
	loc := b.location(t)
	s := openTestAt(t, loc)
	pid, err := s.CreateProfile(ctx, Profile{Label: "p"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.CreateRun(ctx, Run{Kind: KindRun, ProfileID: pid, Label: "p"})
	if err != nil {
		t.Fatal(err)
	}
	release := b.hold(t, loc)

	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	released := false
	clock.onSleep = func(now time.Time) {
		if len(savedFiles(t, s)) != 1 {
			t.Errorf("while waiting: saved files %v, want one", savedFiles(t, s))
		}
		if !released && now.Sub(start) > 30*time.Second {
			release()
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
	if f := savedFiles(t, s); len(f) != 0 {
		t.Errorf("saved file left behind after storing: %v", f)
	}
	storedRun(t, s, id, 10)
}

// testCompleteDurablySavesWhatItCannotStore: the lock outlasts the wait.
// The result is left in a file that Import loads, once, into the store it
// was meant for; another store refuses it (its key did not tag it).
func testCompleteDurablySavesWhatItCannotStore(t *testing.T, b testBackend) {
	ctx := context.Background()
	loc := b.location(t)
	s := openTestAt(t, loc)
	pid, err := s.CreateProfile(ctx, Profile{Label: "sata"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.CreateRun(ctx, Run{Kind: KindRun, ProfileID: pid, Label: "sata", Step: 1, Repeat: 1, VUs: 4})
	if err != nil {
		t.Fatal(err)
	}
	release := b.hold(t, loc)
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
	release()

	// Into the store it was meant for: the running row is completed.
	if imp, err := importFile(t, s, se.Path, ImportOptions{}); err != nil || imp.RunID != id {
		t.Errorf("first import: got %+v, %v; want run %d stored", imp, err, id)
	}
	storedRun(t, s, id, 10)
	if _, err := importFile(t, s, se.Path, ImportOptions{}); !errors.Is(err, ErrAlreadyImported) {
		t.Errorf("second import: got %v, want ErrAlreadyImported", err)
	}
	storedRun(t, s, id, 10) // no duplicate samples

	// Into another store: refused, nothing added.
	other := b.open(t)
	if _, err := importFile(t, other, se.Path, ImportOptions{}); !errors.Is(err, ErrSavedElsewhere) || !strings.Contains(err.Error(), s.Path()) {
		t.Errorf("import into another store: got %v, want ErrSavedElsewhere naming %s", err, s.Path())
	}
	if runs, _ := other.ListRuns(ctx, RunFilter{}); len(runs) != 0 {
		t.Errorf("another store holds %d runs, want 0", len(runs))
	}
}

// importFile imports the file at path into s.
func importFile(t *testing.T, s *Store, path string, opt ImportOptions) (Imported, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return s.Import(context.Background(), f, fi.Size(), opt)
}

// importBytes imports b into s.
func importBytes(s *Store, b []byte, opt ImportOptions) (Imported, error) {
	return s.Import(context.Background(), bytes.NewReader(b), int64(len(b)), opt)
}

// testImportRefusesOtherFiles: a file that is not a saved result, or a
// damaged one, is refused and nothing is stored.
func testImportRefusesOtherFiles(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	for _, in := range []string{"", "{}", `{"format":"something else"}`, "not json",
		`{"format":"` + savedFormat + `","run":{"Kind":"run","UID":"zz"}}`,
		`{"format":"` + savedFormat + `"}` + strings.Repeat(" ", savedHeaderBytes),
		strings.Repeat(" ", savedHeaderBytes-1) + "\n"} {
		if _, err := importBytes(s, []byte(in), ImportOptions{}); !errors.Is(err, ErrNotSaved) && !errors.Is(err, ErrSavedAltered) {
			t.Errorf("Import(%.40q): got %v, want ErrNotSaved", in, err)
		}
	}
	if runs, _ := s.ListRuns(ctx, RunFilter{}); len(runs) != 0 {
		t.Errorf("%d runs stored from bad files", len(runs))
	}
}
