package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Outcome is everything a finished run leaves behind.
type Outcome struct {
	Status     Status
	Summary    json.RawMessage // may be nil
	Error      string          // why it failed; empty otherwise
	Histograms map[string]*hdrhistogram.Histogram
	Samples    []Sample
	// EndedAt is when the run ended; now when zero. A result stored late
	// (the store was busy) keeps the time it ended.
	EndedAt time.Time
}

// validate checks o before anything is written.
func (o Outcome) validate() error {
	if !o.Status.Valid() || o.Status == StatusRunning {
		return fmt.Errorf("status %q is not a final status", o.Status)
	}
	if o.Summary != nil && !json.Valid(o.Summary) {
		return fmt.Errorf("summary is not valid JSON")
	}
	for name, h := range o.Histograms {
		if h == nil {
			return fmt.Errorf("histogram %s: nil histogram", name)
		}
	}
	return validateSamples(o.Samples)
}

// CompleteRun stores a running run's outcome (histograms, samples, status,
// summary, error) in one transaction: either all of it is stored or none.
// Completing a run twice is refused with ErrFinished.
func (s *Store) CompleteRun(ctx context.Context, id int64, o Outcome) error {
	if err := o.validate(); err != nil {
		return fmt.Errorf("complete run %d: %w", id, err)
	}
	if o.EndedAt.IsZero() {
		o.EndedAt = s.now()
	}
	hs, err := encodeHistograms(o.Histograms)
	if err != nil {
		return fmt.Errorf("complete run %d: %w", id, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("complete run %d: %w", id, err)
	}
	defer tx.Rollback()
	if err := completeRun(ctx, tx, id, o, hs, StatusRunning); err != nil {
		return fmt.Errorf("complete run %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("complete run %d: %w", id, err)
	}
	return nil
}

// completeRun writes o for run id inside tx, provided the run's status is
// one of from; otherwise it returns ErrNotFound or ErrFinished.
func completeRun(ctx context.Context, tx *sql.Tx, id int64, o Outcome, hs map[string][]byte, from ...Status) error {
	var status string
	err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&status)
	if err == sql.ErrNoRows {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	ok := false
	for _, f := range from {
		ok = ok || Status(status) == f
	}
	if !ok {
		return fmt.Errorf("%w with status %s", ErrFinished, status)
	}
	if err := putHistograms(ctx, tx, id, hs); err != nil {
		return err
	}
	if err := insertSamples(ctx, tx, id, o.Samples); err != nil {
		return err
	}
	var sum sql.NullString
	if o.Summary != nil {
		sum = sql.NullString{String: string(o.Summary), Valid: true}
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, ended_at = ?, summary = ?, error = ? WHERE id = ?`,
		string(o.Status), formatTime(o.EndedAt), sum, nullString(o.Error), id)
	return err
}

// encodeHistograms encodes histograms in the HdrHistogram V2 compressed
// encoding, which other HdrHistogram implementations read too.
func encodeHistograms(hs map[string]*hdrhistogram.Histogram) (map[string][]byte, error) {
	out := make(map[string][]byte, len(hs))
	for name, h := range hs {
		if h == nil {
			return nil, fmt.Errorf("histogram %s: nil histogram", name)
		}
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return nil, fmt.Errorf("encode histogram %s: %w", name, err)
		}
		out[name] = b
	}
	return out, nil
}
