package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A saved result is a finished run that the store could not take when it
// ended (CompleteDurably), written to a JSON file with everything needed
// to store it later: the run as created, its profile, its outcome, its
// histograms (HdrHistogram V2 compressed encoding) and samples. Import
// loads it into any store, once: the run's UID says whether it is there.

// savedFormat names the file format; Import refuses anything else.
const savedFormat = "oltplab unstored run, version 1"

// maxSavedBytes bounds what Import reads of one file (an hour of samples
// at one per second is a few megabytes).
const maxSavedBytes = 1 << 30

type saved struct {
	Format     string            `json:"format"`
	Store      string            `json:"store"` // where it was meant to go
	Run        Run               `json:"run"`
	Profile    *Profile          `json:"profile,omitempty"`
	Status     Status            `json:"status"`
	Summary    json.RawMessage   `json:"summary,omitempty"`
	Error      string            `json:"error,omitempty"`
	EndedAt    time.Time         `json:"ended_at"`
	Histograms map[string][]byte `json:"histograms,omitempty"`
	Samples    []Sample          `json:"samples,omitempty"`
}

func newSaved(r Run, p *Profile, o Outcome) (saved, error) {
	hs, err := encodeHistograms(o.Histograms)
	if err != nil {
		return saved{}, err
	}
	return saved{Format: savedFormat, Run: r, Profile: p, Status: o.Status, Summary: o.Summary,
		Error: o.Error, EndedAt: o.EndedAt, Histograms: hs, Samples: o.Samples}, nil
}

// writeSaved writes sv to path whole (a temporary sibling, synced, then
// renamed), readable by its owner only.
func writeSaved(path string, sv saved) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".oltplab-unstored-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	enc := json.NewEncoder(f)
	if err := enc.Encode(sv); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ErrNotSaved: a file given to Import is not a saved result of this
// format, or is damaged.
var ErrNotSaved = errors.New("not a saved oltplab result")

// DecodeSaved reads and checks a saved result: everything Import would
// store must be valid, so a damaged file is refused before it is stored.
func decodeSaved(r io.Reader) (saved, error) {
	var sv saved
	dec := json.NewDecoder(io.LimitReader(r, maxSavedBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sv); err != nil {
		return saved{}, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	bad := func(format string, args ...any) (saved, error) {
		return saved{}, fmt.Errorf("%w: %s", ErrNotSaved, fmt.Sprintf(format, args...))
	}
	if sv.Format != savedFormat {
		return bad("format %.60q, want %q", sv.Format, savedFormat)
	}
	if !sv.Run.Kind.Valid() {
		return bad("unknown run kind %.20q", sv.Run.Kind)
	}
	if b, err := hex.DecodeString(sv.Run.UID); err != nil || len(b) != 16 {
		return bad("run identity %.40q is not 32 hex digits", sv.Run.UID)
	}
	if sv.Run.StartedAt.IsZero() || sv.EndedAt.IsZero() {
		return bad("run without start or end time")
	}
	o := Outcome{Status: sv.Status, Summary: sv.Summary, Error: sv.Error, Samples: sv.Samples}
	if err := o.validate(); err != nil {
		return bad("%v", err)
	}
	for _, m := range []json.RawMessage{sv.Run.Params, sv.Run.Context} {
		if len(m) > 0 && !json.Valid(m) {
			return bad("run parameters or context are not valid JSON")
		}
	}
	for name, b := range sv.Histograms {
		if _, err := hdrhistogram.Decode(b); err != nil {
			return bad("histogram %.40q: %v", name, err)
		}
	}
	if p := sv.Profile; p != nil {
		if b, err := hex.DecodeString(p.UID); err != nil || len(b) != 16 {
			return bad("profile identity %.40q is not 32 hex digits", p.UID)
		}
		for _, m := range []json.RawMessage{p.Params, p.Context} {
			if len(m) > 0 && !json.Valid(m) {
				return bad("profile parameters or context are not valid JSON")
			}
		}
	}
	for _, err := range []error{checkNoSecret(sv.Run.Target), checkNoSecretJSON(sv.Run.Params), checkNoSecretJSON(sv.Run.Context)} {
		if err != nil {
			return saved{}, err
		}
	}
	return sv, nil
}

// Imported says what Import did with a saved result.
type Imported struct {
	RunID int64 // the run in this store
	// Already: the run was stored already (an earlier import, or the
	// store took it after all); nothing changed.
	Already bool
}

// Import stores a saved result (the file CompleteDurably wrote) in one
// transaction. Importing the same result again changes nothing. In the
// store it was meant for, it completes the run row that is still running
// (or abandoned); in another store, it adds the run, and its profile
// unless that store has it already.
func (s *Store) Import(ctx context.Context, r io.Reader) (Imported, error) {
	sv, err := decodeSaved(r)
	if err != nil {
		return Imported{}, err
	}
	o := Outcome{Status: sv.Status, Summary: sv.Summary, Error: sv.Error, Samples: sv.Samples, EndedAt: sv.EndedAt}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
	}
	defer tx.Rollback()
	var (
		id     int64
		status string
	)
	err = tx.QueryRowContext(ctx, `SELECT id, status FROM runs WHERE uid = ?`, sv.Run.UID).Scan(&id, &status)
	switch {
	case err == nil && Status(status) != StatusRunning && Status(status) != StatusAbandoned:
		return Imported{RunID: id, Already: true}, nil
	case errors.Is(err, sql.ErrNoRows):
		if id, err = insertSavedRun(ctx, tx, sv); err != nil {
			return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
		}
	case err != nil:
		return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
	}
	if err := completeRun(ctx, tx, id, o, sv.Histograms, StatusRunning, StatusAbandoned); err != nil {
		return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
	}
	if err := tx.Commit(); err != nil {
		return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
	}
	return Imported{RunID: id}, nil
}

// insertSavedRun adds the saved run (and its profile, unless present) to
// a store that never had it, as running, and returns its id.
func insertSavedRun(ctx context.Context, tx *sql.Tx, sv saved) (int64, error) {
	r := sv.Run
	r.ProfileID = 0
	if p := sv.Profile; p != nil {
		err := tx.QueryRowContext(ctx, `SELECT id FROM profiles WHERE uid = ?`, p.UID).Scan(&r.ProfileID)
		if errors.Is(err, sql.ErrNoRows) {
			// The profile's own end is not in the file: its process
			// ended without finishing it here.
			pr := *p
			pr.Status, pr.EndedAt = StatusAbandoned, sv.EndedAt
			pr.Params, _ = jsonObjectRaw(pr.Params)
			pr.Context, _ = jsonObjectRaw(pr.Context)
			r.ProfileID, err = insertProfile(ctx, tx, pr)
		}
		if err != nil {
			return 0, fmt.Errorf("profile %s: %w", p.UID, err)
		}
	}
	r.Status = StatusRunning
	r.Params, _ = jsonObjectRaw(r.Params)
	r.Context, _ = jsonObjectRaw(r.Context)
	return insertRun(ctx, tx, r)
}

// jsonObjectRaw is jsonObject for values already checked.
func jsonObjectRaw(m json.RawMessage) (json.RawMessage, error) {
	s, err := jsonObject("json", m)
	return json.RawMessage(s), err
}
