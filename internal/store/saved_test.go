package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// savedFor creates a run in s (in a profile) and saves its outcome with
// n samples to a file, as CompleteDurably does when the store cannot take
// it; it returns the run and the file's bytes.
func savedFor(t *testing.T, s *Store, label string, n int) (Run, []byte) {
	t.Helper()
	ctx := context.Background()
	pid, err := s.CreateProfile(ctx, Profile{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.CreateRun(ctx, Run{Kind: KindRun, ProfileID: pid, Label: label, Step: 1, Repeat: 1, VUs: 4})
	if err != nil {
		t.Fatal(err)
	}
	o := testOutcome(n)
	o.EndedAt = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	path, err := s.saveOutcome(id, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

// testImportTrustsOnlyItsOwnFiles: Import takes a saved file as this
// store's oltplab wrote it, once; a copy given a new run identity, an
// edited figure, a file cut short or added to, one whose header names
// another key, one larger than MaxSavedBytes and one the caller's check
// refuses are refused, and nothing of them is stored.
func testImportTrustsOnlyItsOwnFiles(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	r, good := savedFor(t, s, "sata", 2*sampleBatch+7)
	if !bytes.Contains(good, []byte(r.UID)) {
		t.Fatalf("the saved file does not hold the run's identity %s", r.UID)
	}

	newID := strings.Repeat("ab", 16)
	edits := []struct {
		name string
		edit func([]byte) []byte
		want error
	}{
		{"a copy with a new run identity", func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(r.UID), []byte(newID)) }, ErrSavedAltered},
		{"a figure edited", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"summary":{"nopm":1}`), []byte(`"summary":{"nopm":9}`), 1)
		}, ErrSavedAltered},
		{"a negative figure", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"summary":{"nopm":1}`), []byte(`"summary":{"nopm":-1}`), 1)
		}, ErrSavedAltered},
		{"a label with markup", func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`"Label":"sata"`), []byte(`"Label":"<b>s</b>"`))
		}, ErrSavedAltered},
		{"cut short", func(b []byte) []byte { return b[:len(b)-1] }, ErrSavedAltered},
		{"added to", func(b []byte) []byte {
			return append(b, []byte(`{"TMillis":1,"Source":"host","Metric":"x","Device":"","Value":1}`+"\n")...)
		}, ErrSavedAltered},
		{"another store's key", func(b []byte) []byte {
			var h savedHeader
			if err := json.NewDecoder(bytes.NewReader(b)).Decode(&h); err != nil {
				t.Fatal(err)
			}
			return bytes.Replace(b, []byte(`"key":"`+h.Key+`"`), []byte(`"key":"`+strings.Repeat("0", len(h.Key))+`"`), 1)
		}, ErrSavedElsewhere},
	}
	for _, e := range edits {
		b := e.edit(bytes.Clone(good))
		if bytes.Equal(b, good) {
			t.Fatalf("%s: the edit changed nothing", e.name)
		}
		if _, err := importBytes(s, b, ImportOptions{}); !errors.Is(err, e.want) {
			t.Errorf("%s: got %v, want %v", e.name, err, e.want)
		}
	}

	// Larger than MaxSavedBytes: refused before a byte of it is read.
	if _, err := s.Import(ctx, unreadable{}, MaxSavedBytes+1, ImportOptions{}); !errors.Is(err, ErrSavedTooLarge) {
		t.Errorf("a file of %d bytes: got %v, want ErrSavedTooLarge", MaxSavedBytes+1, err)
	}

	// The caller's check sees the decoded run and refuses it.
	var seen SavedRun
	refuse := ImportOptions{Check: func(sr SavedRun) error { seen = sr; return errors.New("the label is not one word") }}
	if _, err := importBytes(s, good, refuse); !errors.Is(err, ErrSavedInvalid) || !strings.Contains(err.Error(), "not one word") {
		t.Errorf("refused by the check: got %v, want ErrSavedInvalid with its reason", err)
	}
	if seen.Run.UID != r.UID || seen.Profile == nil || seen.Profile.Label != "sata" || string(seen.Outcome.Summary) != `{"nopm":1}` {
		t.Errorf("the check saw %+v", seen)
	}

	if got, err := s.GetRun(ctx, r.ID); err != nil || got.Status != StatusRunning {
		t.Fatalf("after the refused files the run is %s (%v), want still running", got.Status, err)
	}
	if runs, _ := s.ListRuns(ctx, RunFilter{}); len(runs) != 1 {
		t.Errorf("%d runs after the refused files, want 1", len(runs))
	}

	// The file as written: stored once, with every sample.
	if imp, err := importBytes(s, good, ImportOptions{Check: func(SavedRun) error { return nil }}); err != nil || imp.RunID != r.ID {
		t.Fatalf("import: got %+v, %v; want run %d", imp, err, r.ID)
	}
	storedRun(t, s, r.ID, 2*sampleBatch+7)
	if _, err := importBytes(s, good, ImportOptions{}); !errors.Is(err, ErrAlreadyImported) {
		t.Errorf("second import: got %v, want ErrAlreadyImported", err)
	}
	storedRun(t, s, r.ID, 2*sampleBatch+7)
}

// unreadable is a ReaderAt that fails the test's expectations by failing
// every read.
type unreadable struct{}

func (unreadable) ReadAt([]byte, int64) (int, error) {
	return 0, errors.New("read a file it should have refused unread")
}

// testImportUntagged: a file of version 1 (no tag) is refused unless asked
// for, and then only completes a run this store created and never
// finished.
func testImportUntagged(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	r, good := savedFor(t, s, "old", 5)
	// The same run as the previous version wrote it.
	head, err := savedHeadOf(good)
	if err != nil {
		t.Fatal(err)
	}
	head.Format = savedFormatV1
	v1 := func(uid string) []byte {
		sv := savedV1{savedRun: head.savedRun, Samples: testOutcome(5).Samples}
		sv.Run.UID = uid
		b, err := json.Marshal(sv)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	if _, err := importBytes(s, v1(r.UID), ImportOptions{}); !errors.Is(err, ErrSavedUntagged) {
		t.Errorf("untagged without asking: got %v, want ErrSavedUntagged", err)
	}
	if _, err := importBytes(s, v1(strings.Repeat("cd", 16)), ImportOptions{Untagged: true}); !errors.Is(err, ErrSavedUntagged) {
		t.Errorf("untagged, a run this store never had: got %v, want ErrSavedUntagged", err)
	}
	if imp, err := importBytes(s, v1(r.UID), ImportOptions{Untagged: true}); err != nil || imp.RunID != r.ID {
		t.Fatalf("untagged, completing its run: got %+v, %v", imp, err)
	}
	storedRun(t, s, r.ID, 5)
	if _, err := importBytes(s, v1(r.UID), ImportOptions{Untagged: true}); !errors.Is(err, ErrAlreadyImported) {
		t.Errorf("untagged, again: got %v, want ErrAlreadyImported", err)
	}
	if runs, _ := s.ListRuns(ctx, RunFilter{}); len(runs) != 1 {
		t.Errorf("%d runs, want 1", len(runs))
	}
}

// savedHeadOf decodes the first line of a version 2 file's content.
func savedHeadOf(b []byte) (savedHead, error) {
	var h savedHead
	err := json.NewDecoder(bytes.NewReader(b[savedHeaderBytes:])).Decode(&h)
	return h, err
}

// TestSavedKey: a store keeps its key across openings; another store has
// another key.
func TestSavedKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := openTestAt(t, dir+"/a.db")
	id := a.savedKeyID()
	a.Close()
	again := openTestAt(t, dir+"/a.db")
	if got := again.savedKeyID(); got != id || len(again.savedKey) != savedKeyBytes {
		t.Errorf("reopened: key %s, want %s", got, id)
	}
	if other := openTestAt(t, dir+"/b.db"); other.savedKeyID() == id {
		t.Errorf("two stores share the key %s", id)
	}
	// A store opened to read has no use for the key and does not read it.
	ro, err := OpenToRead(ctx, dir+"/a.db")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if ro.savedKey != nil {
		t.Errorf("a store opened to read holds the key")
	}
}
