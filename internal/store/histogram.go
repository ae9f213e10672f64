package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// PutHistograms stores a run's latency histograms, one per transaction
// name (the driver's merged per-worker histograms), in one transaction.
// A histogram already stored for the same run and name is replaced, so a
// run may checkpoint and then store its final histograms. They are kept in
// the HdrHistogram V2 compressed encoding, which other HdrHistogram
// implementations read too.
func (s *Store) PutHistograms(ctx context.Context, runID int64, hs map[string]*hdrhistogram.Histogram) error {
	if len(hs) == 0 {
		return nil
	}
	enc, err := encodeHistograms(hs)
	if err != nil {
		return fmt.Errorf("store histograms of run %d: %w", runID, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store histograms of run %d: %w", runID, err)
	}
	defer tx.Rollback()
	if err := putHistograms(ctx, tx, runID, enc); err != nil {
		return fmt.Errorf("store histograms of run %d: %w", runID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store histograms of run %d: %w", runID, err)
	}
	return nil
}

// putHistograms writes encoded histograms of a run inside tx, replacing
// those of the same name.
func putHistograms(ctx context.Context, tx *sql.Tx, runID int64, hs map[string][]byte) error {
	if len(hs) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO histograms (run_id, tx, hdr) VALUES (?, ?, ?)
		ON CONFLICT (run_id, tx) DO UPDATE SET hdr = excluded.hdr`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for name, b := range hs {
		if _, err := stmt.ExecContext(ctx, runID, name, b); err != nil {
			return fmt.Errorf("histogram %s: %w", name, err)
		}
	}
	return nil
}

// LoadHistograms returns a run's histograms by transaction name (empty
// when it has none).
func (s *Store) LoadHistograms(ctx context.Context, runID int64) (map[string]*hdrhistogram.Histogram, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT tx, hdr FROM histograms WHERE run_id = ? ORDER BY tx`, runID)
	if err != nil {
		return nil, fmt.Errorf("load histograms of run %d: %w", runID, classify(err))
	}
	defer rows.Close()
	hs := map[string]*hdrhistogram.Histogram{}
	for rows.Next() {
		var (
			name string
			b    []byte
		)
		if err := rows.Scan(&name, &b); err != nil {
			return nil, fmt.Errorf("load histograms of run %d: %w", runID, classify(err))
		}
		h, err := hdrhistogram.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("decode histogram %s of run %d: %w", name, runID, err)
		}
		hs[name] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load histograms of run %d: %w", runID, classify(err))
	}
	return hs, nil
}

// MergeHistograms loads the histograms of several runs (the repeats of a
// profile step, or the shards of one run) and merges them by transaction
// name. HDR merging is exact: the result is what one histogram recording
// every value would hold. Values outside the first histogram's range make
// it an error rather than being silently dropped.
func (s *Store) MergeHistograms(ctx context.Context, runIDs ...int64) (map[string]*hdrhistogram.Histogram, error) {
	merged := map[string]*hdrhistogram.Histogram{}
	for _, id := range runIDs {
		hs, err := s.LoadHistograms(ctx, id)
		if err != nil {
			return nil, err
		}
		for name, h := range hs {
			m, ok := merged[name]
			if !ok {
				merged[name] = h // freshly decoded: ours to modify
				continue
			}
			if dropped := m.Merge(h); dropped > 0 {
				return nil, fmt.Errorf("merge histogram %s of run %d: %d values outside the range [%d, %d]",
					name, id, dropped, m.LowestTrackableValue(), m.HighestTrackableValue())
			}
		}
	}
	return merged, nil
}
