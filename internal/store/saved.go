package store

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A saved result is a finished run that the store could not take when it
// ended (CompleteDurably), written to a file with everything needed to
// store it later: the run as created, its profile, its outcome, its
// histograms (HdrHistogram V2 compressed encoding) and samples. Import
// loads it, once, into the store it was saved for (or a copy of that
// store: they share its key).
//
// The file (version 2) is a header of savedHeaderBytes bytes, then the
// content:
//
//	{"format":"oltplab unstored run, version 2","store":...,"key":...,"length":N,"hmac_sha256":...}   (padded with spaces, then \n)
//	{"format":...,"run":{...},"profile":{...},"status":...,"summary":...,"histograms":{...},"samples":COUNT}\n
//	{"TMillis":...,"Source":...,"Metric":...,"Device":...,"Value":...}\n      (COUNT lines, one sample each)
//
// The header's HMAC-SHA256, keyed with the store's key (key.go), covers
// the N bytes of content. Import checks the file's size against
// MaxSavedBytes before reading it, checks the tag over the whole content
// (streamed, in constant memory) before it parses any of it, reads the
// first line (bounded by maxSavedHeadBytes) and streams the samples into
// the store in batches: memory does not grow with the samples.
//
// Files of version 1 (one JSON object, no tag) were written before the
// tag existed; Import takes one only when asked (ImportOptions.Untagged),
// and only to complete a run this store created and never finished.

const (
	savedFormat   = "oltplab unstored run, version 2"
	savedFormatV1 = "oltplab unstored run, version 1"
)

// savedHeaderBytes is the fixed size of a saved file's header: it is
// written last, over the spaces reserved for it, once the content's
// length and tag are known.
const savedHeaderBytes = 1024

// MaxSavedBytes bounds the size of a file Import reads: a larger one is
// refused before anything of it is read. A 20 s run on SQLite stored 789
// host and workload samples (about 40 a second; a server's waits add
// more), some 90 bytes each in the file: about 13 MB an hour, so the bound
// holds days of one run's samples. Samples are streamed: memory does not
// grow with them (a 315 MB file imported in 39 MB).
const MaxSavedBytes = 1 << 30

// maxSavedHeadBytes bounds what Import holds in memory at once: the
// run, its profile, summary and histograms (the first line of a version
// 2 file), or a whole version 1 file. A run's summary grows with its
// per-second series (a 20 s run's was 10 KB).
const maxSavedHeadBytes = 64 << 20

// sampleBatch is how many samples Import inserts at once.
const sampleBatch = 1000

// What Import refuses, and why. All wrap ErrNotSaved or stand beside it;
// nothing is stored when Import returns one.
var (
	// ErrNotSaved: a file given to Import is not a saved result, or is
	// damaged.
	ErrNotSaved = errors.New("not a saved oltplab result")
	// ErrSavedTooLarge: the file is larger than a saved result may be.
	ErrSavedTooLarge = errors.New("too large for a saved oltplab result")
	// ErrSavedAltered: the file's integrity tag does not match its
	// content: it was changed after oltplab saved it.
	ErrSavedAltered = errors.New("changed after oltplab saved it")
	// ErrSavedElsewhere: the file was saved for another results store,
	// whose key tagged it.
	ErrSavedElsewhere = errors.New("saved for another results store")
	// ErrSavedUntagged: a version 1 file (no integrity tag), refused
	// unless ImportOptions.Untagged, and then refused unless it completes
	// a run this store created and never finished.
	ErrSavedUntagged = errors.New("saved by an older oltplab, without an integrity tag")
	// ErrAlreadyImported: the store holds the file's run finished
	// already: a measured run is stored once.
	ErrAlreadyImported = errors.New("already stored")
	// ErrSavedInvalid: the file's result breaks a rule every result
	// obeys when it is measured (ImportOptions.Check).
	ErrSavedInvalid = errors.New("its result breaks the rules of a measured result")
)

// savedHeader is the first savedHeaderBytes of a version 2 file. Store
// and Key are there to say where a file belongs when it is imported
// into another store; only the tag is trusted.
type savedHeader struct {
	Format string `json:"format"`
	Store  string `json:"store"`       // the store's location (Path), for messages
	Key    string `json:"key"`         // savedKeyID of the key that tagged it
	Length int64  `json:"length"`      // bytes of content after the header
	HMAC   string `json:"hmac_sha256"` // hex HMAC-SHA256 of the content
}

// savedRun is the run and its outcome, without samples.
type savedRun struct {
	Format     string            `json:"format"`
	Store      string            `json:"store"` // where it was meant to go
	Run        Run               `json:"run"`
	Profile    *Profile          `json:"profile,omitempty"`
	Status     Status            `json:"status"`
	Summary    json.RawMessage   `json:"summary,omitempty"`
	Error      string            `json:"error,omitempty"`
	EndedAt    time.Time         `json:"ended_at"`
	Histograms map[string][]byte `json:"histograms,omitempty"`
}

// savedHead is the first line of a version 2 file's content.
type savedHead struct {
	savedRun
	Samples int `json:"samples"` // how many sample lines follow
}

// savedV1 is a whole version 1 file.
type savedV1 struct {
	savedRun
	Samples []Sample `json:"samples,omitempty"`
}

func newSaved(r Run, p *Profile, o Outcome, store string) (savedRun, error) {
	hs, err := encodeHistograms(o.Histograms)
	if err != nil {
		return savedRun{}, err
	}
	return savedRun{Format: savedFormat, Store: store, Run: r, Profile: p, Status: o.Status, Summary: o.Summary,
		Error: o.Error, EndedAt: o.EndedAt, Histograms: hs}, nil
}

// writeSaved writes sv and its samples to path whole (a temporary
// sibling, synced, then renamed), readable by its owner only, tagged
// with the store's key.
func (s *Store) writeSaved(path string, sv savedRun, samples []Sample) error {
	if len(s.savedKey) == 0 {
		return fmt.Errorf("write %s: the store's key of saved results was not read", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".oltplab-unstored-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	fail := func(err error) error {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(bytes.Repeat([]byte{' '}, savedHeaderBytes)); err != nil {
		return fail(err)
	}
	mac := s.savedMAC()
	cw := &countWriter{w: io.MultiWriter(f, mac)}
	bw := bufio.NewWriterSize(cw, 64<<10)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(savedHead{savedRun: sv, Samples: len(samples)}); err != nil {
		return fail(err)
	}
	for _, sm := range samples {
		if err := enc.Encode(sm); err != nil {
			return fail(err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	h, err := json.Marshal(savedHeader{Format: savedFormat, Store: cutString(s.Path(), 400), Key: s.savedKeyID(),
		Length: cw.n, HMAC: hex.EncodeToString(mac.Sum(nil))})
	if err != nil {
		return fail(err)
	}
	if len(h) >= savedHeaderBytes {
		return fail(fmt.Errorf("header of %d bytes does not fit in %d", len(h), savedHeaderBytes))
	}
	if _, err := f.WriteAt(append(h, '\n'), 0); err != nil {
		return fail(err)
	}
	if _, err := f.WriteAt([]byte{'\n'}, savedHeaderBytes-1); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// cutString returns s cut to at most n bytes, not splitting a character.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// checkSaved checks what Import would store of a saved run, so that a
// damaged file is refused before anything is stored.
func checkSaved(sv savedRun, format string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrNotSaved, fmt.Sprintf(format, args...))
	}
	if sv.Format != format {
		return bad("format %.60q, want %q", sv.Format, format)
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
	o := Outcome{Status: sv.Status, Summary: sv.Summary, Error: sv.Error}
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
			return err
		}
	}
	return nil
}

// SavedRun is a saved result as Import read it, for ImportOptions.Check:
// its samples are not in Outcome (they are streamed into the store).
type SavedRun struct {
	Run     Run
	Profile *Profile // nil for a run outside any profile
	Outcome Outcome
}

// ImportOptions says what Import accepts.
type ImportOptions struct {
	// Check applies the rules a live run's result obeys (its labels, its
	// status against its figures); its error refuses the file
	// (ErrSavedInvalid). Nil checks nothing beyond the file's format.
	Check func(SavedRun) error
	// Untagged accepts a version 1 file (written before files carried an
	// integrity tag), only to complete a run this store created and never
	// finished.
	Untagged bool
}

// Imported says what Import stored.
type Imported struct {
	RunID int64 // the run in this store
}

// Import stores a saved result (the file CompleteDurably wrote; r holds
// size bytes) in one transaction. It refuses, storing nothing: a file
// larger than MaxSavedBytes (before reading it), one that is not a saved
// result, one whose integrity tag does not match (ErrSavedAltered) or was
// made with another store's key (ErrSavedElsewhere), one whose run the
// store holds finished already (ErrAlreadyImported), and one opt.Check
// refuses (ErrSavedInvalid). In the store it was meant for, it completes
// the run row that is still running (or abandoned); in a copy of that
// store that never had the run, it adds the run, and its profile unless
// present.
func (s *Store) Import(ctx context.Context, r io.ReaderAt, size int64, opt ImportOptions) (Imported, error) {
	if size > MaxSavedBytes {
		return Imported{}, fmt.Errorf("%w: %d bytes, more than the %d a saved result may be", ErrSavedTooLarge, size, MaxSavedBytes)
	}
	first := make([]byte, min(size, savedHeaderBytes))
	if _, err := r.ReadAt(first, 0); err != nil && !errors.Is(err, io.EOF) {
		return Imported{}, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	if isV1(first) {
		if !opt.Untagged {
			return Imported{}, ErrSavedUntagged
		}
		return s.importV1(ctx, io.NewSectionReader(r, 0, size), size, opt)
	}
	var h savedHeader
	if len(first) < savedHeaderBytes || first[savedHeaderBytes-1] != '\n' {
		return Imported{}, fmt.Errorf("%w: no header of %d bytes", ErrNotSaved, savedHeaderBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(first))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return Imported{}, fmt.Errorf("%w: header: %w", ErrNotSaved, err)
	}
	if h.Format != savedFormat {
		return Imported{}, fmt.Errorf("%w: format %.60q, want %q", ErrNotSaved, h.Format, savedFormat)
	}
	if h.Length != size-savedHeaderBytes {
		return Imported{}, fmt.Errorf("%w: its header says %d bytes of content, the file holds %d (cut short or added to)",
			ErrSavedAltered, h.Length, size-savedHeaderBytes)
	}
	if h.Key != s.savedKeyID() {
		return Imported{}, fmt.Errorf("%w (%q): import it into that store, or a copy of it", ErrSavedElsewhere, cutString(h.Store, 400))
	}
	// The tag, over the whole content, before any of it is parsed.
	mac := s.savedMAC()
	if _, err := io.Copy(mac, io.NewSectionReader(r, savedHeaderBytes, h.Length)); err != nil {
		return Imported{}, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	if want, err := hex.DecodeString(h.HMAC); err != nil || !hmac.Equal(mac.Sum(nil), want) {
		return Imported{}, fmt.Errorf("%w: its integrity tag does not match its content", ErrSavedAltered)
	}

	content := io.NewSectionReader(r, savedHeaderBytes, h.Length)
	hd := json.NewDecoder(io.LimitReader(content, maxSavedHeadBytes))
	hd.DisallowUnknownFields()
	var head savedHead
	if err := hd.Decode(&head); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) && h.Length > maxSavedHeadBytes {
			return Imported{}, fmt.Errorf("%w: its run and summary take more than %d bytes", ErrSavedTooLarge, maxSavedHeadBytes)
		}
		return Imported{}, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	if err := checkSaved(head.savedRun, savedFormat); err != nil {
		return Imported{}, err
	}
	if head.Samples < 0 {
		return Imported{}, fmt.Errorf("%w: %d samples", ErrNotSaved, head.Samples)
	}
	o := head.outcome()
	if err := check(opt, head.savedRun, o); err != nil {
		return Imported{}, err
	}
	samplesAt := savedHeaderBytes + hd.InputOffset()
	samples := io.NewSectionReader(r, samplesAt, size-samplesAt)
	return s.store(ctx, head.savedRun, o, false, func(ctx context.Context, tx *dbTx, id int64) error {
		return streamSamples(ctx, tx, id, samples, head.Samples)
	})
}

func (sv savedRun) outcome() Outcome {
	return Outcome{Status: sv.Status, Summary: sv.Summary, Error: sv.Error, EndedAt: sv.EndedAt}
}

// check runs opt.Check on a decoded saved run.
func check(opt ImportOptions, sv savedRun, o Outcome) error {
	if opt.Check == nil {
		return nil
	}
	if err := opt.Check(SavedRun{Run: sv.Run, Profile: sv.Profile, Outcome: o}); err != nil {
		return fmt.Errorf("%w: %w", ErrSavedInvalid, err)
	}
	return nil
}

// isV1 reports whether a file begins as a version 1 file does.
func isV1(b []byte) bool {
	return bytes.HasPrefix(b, []byte(`{"format":"`+savedFormatV1+`"`))
}

// importV1 imports a version 1 file: one JSON object, read whole (so at
// most maxSavedHeadBytes), that may only complete a run of this store.
func (s *Store) importV1(ctx context.Context, r io.Reader, size int64, opt ImportOptions) (Imported, error) {
	if size > maxSavedHeadBytes {
		return Imported{}, fmt.Errorf("%w: %d bytes, more than the %d a file without a tag may be", ErrSavedTooLarge, size, maxSavedHeadBytes)
	}
	var sv savedV1
	dec := json.NewDecoder(io.LimitReader(r, maxSavedHeadBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sv); err != nil {
		return Imported{}, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	if err := checkSaved(sv.savedRun, savedFormatV1); err != nil {
		return Imported{}, err
	}
	if err := validateSamples(sv.Samples); err != nil {
		return Imported{}, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	o := sv.outcome()
	if err := check(opt, sv.savedRun, o); err != nil {
		return Imported{}, err
	}
	return s.store(ctx, sv.savedRun, o, true, func(ctx context.Context, tx *dbTx, id int64) error {
		return insertSamples(ctx, tx, id, sv.Samples)
	})
}

// store stores a checked saved run in one transaction: it completes the
// run of the same identity that is still running (or abandoned), or, for
// a tagged file in a store that never had it (a copy of the store from
// before the run), adds it. addSamples writes the samples inside the
// transaction.
func (s *Store) store(ctx context.Context, sv savedRun, o Outcome, untagged bool,
	addSamples func(ctx context.Context, tx *dbTx, id int64) error) (Imported, error) {
	hs := sv.Histograms
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
	}
	defer tx.Rollback()
	var (
		id     int64
		status string
	)
	err = tx.QueryRowContext(ctx, `SELECT id, status FROM runs WHERE uid = ?`+tx.b.forUpdate(), sv.Run.UID).Scan(&id, &status)
	switch {
	case err == nil && Status(status) != StatusRunning && Status(status) != StatusAbandoned:
		return Imported{RunID: id}, fmt.Errorf("%w: its run (identity %s) is run %d in %s, status %s; a measured run is stored once, nothing changed",
			ErrAlreadyImported, sv.Run.UID, id, s.Path(), status)
	case errors.Is(err, sql.ErrNoRows) && untagged:
		return Imported{}, fmt.Errorf("%w: such a file may only complete a run this store created and never finished, "+
			"and it holds no run of identity %s", ErrSavedUntagged, sv.Run.UID)
	case errors.Is(err, sql.ErrNoRows):
		if id, err = insertSavedRun(ctx, tx, sv); err != nil {
			return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
		}
	case err != nil:
		return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
	}
	if err := completeRun(ctx, tx, id, o, hs, StatusRunning, StatusAbandoned); err != nil {
		return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
	}
	if err := addSamples(ctx, tx, id); err != nil {
		return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
	}
	if err := tx.Commit(); err != nil {
		return Imported{}, fmt.Errorf("import run %s: %w", sv.Run.UID, err)
	}
	return Imported{RunID: id}, nil
}

// streamSamples reads n samples, one JSON object a line, and inserts
// them in batches; anything after them is refused.
func streamSamples(ctx context.Context, tx *dbTx, id int64, r io.Reader, n int) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	dec.DisallowUnknownFields()
	batch := make([]Sample, 0, min(n, sampleBatch))
	for i := 0; i < n; i++ {
		var sm Sample
		if err := dec.Decode(&sm); err != nil {
			return fmt.Errorf("%w: sample %d of %d: %w", ErrNotSaved, i+1, n, err)
		}
		batch = append(batch, sm)
		if len(batch) == cap(batch) || i == n-1 {
			if err := validateSamples(batch); err != nil {
				return fmt.Errorf("%w: %w", ErrNotSaved, err)
			}
			if err := insertSamples(ctx, tx, id, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: more than the %d samples it announces", ErrNotSaved, n)
	}
	return nil
}

// insertSavedRun adds the saved run (and its profile, unless present) to
// a store that never had it, as running, and returns its id.
func insertSavedRun(ctx context.Context, tx *dbTx, sv savedRun) (int64, error) {
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
