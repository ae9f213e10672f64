package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
)

// Source is who produced a sample.
type Source string

const (
	SourceHost     Source = "host"     // internal/sysstat: CPU, memory, disks, network
	SourceDB       Source = "db"       // the database's own counters and wait events
	SourceWorkload Source = "workload" // the driver: transactions, latency, its own CPU
	// SourceDBHost: the database's host when it is another machine, as
	// `oltplab agent` running there reports it (the metrics of SourceHost).
	SourceDBHost Source = "db_host"
)

// Valid reports whether s is a source this store knows.
func (s Source) Valid() bool {
	switch s {
	case SourceHost, SourceDB, SourceWorkload, SourceDBHost:
		return true
	}
	return false
}

// Sample is one value of one per-second series.
type Sample struct {
	TMillis int64 // milliseconds since the run started
	Source  Source
	Metric  string // e.g. "cpu_iowait_pct", "disk_read_iops"
	Device  string // disk, interface or instance; empty when the metric has none
	Value   float64
}

// AddSamples stores a batch of samples of one run in one transaction.
// NaN and infinite values are refused (SQLite would store NULL).
func (s *Store) AddSamples(ctx context.Context, runID int64, samples []Sample) error {
	if len(samples) == 0 {
		return nil
	}
	if err := validateSamples(samples); err != nil {
		return fmt.Errorf("add samples to run %d: %w", runID, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("add samples to run %d: %w", runID, err)
	}
	defer tx.Rollback()
	if err := insertSamples(ctx, tx, runID, samples); err != nil {
		return fmt.Errorf("add samples to run %d: %w", runID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("add samples to run %d: %w", runID, err)
	}
	return nil
}

// validateSamples refuses samples the store cannot hold faithfully.
func validateSamples(samples []Sample) error {
	for i, sm := range samples {
		if !sm.Source.Valid() {
			return fmt.Errorf("sample %d: unknown source %q", i, sm.Source)
		}
		if sm.Metric == "" {
			return fmt.Errorf("sample %d: no metric name", i)
		}
		if math.IsNaN(sm.Value) || math.IsInf(sm.Value, 0) {
			return fmt.Errorf("%s %s %s at %d ms: value %v is not a number", sm.Source, sm.Metric, sm.Device, sm.TMillis, sm.Value)
		}
	}
	return nil
}

// insertSamples writes samples of a run inside tx.
func insertSamples(ctx context.Context, tx *sql.Tx, runID int64, samples []Sample) error {
	if len(samples) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO samples (run_id, t_ms, source, metric, device, value)
		VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, sm := range samples {
		if _, err := stmt.ExecContext(ctx, runID, sm.TMillis, string(sm.Source), sm.Metric,
			sql.NullString{String: sm.Device, Valid: sm.Device != ""}, sm.Value); err != nil {
			return fmt.Errorf("%s %s: %w", sm.Source, sm.Metric, err)
		}
	}
	return nil
}

// SampleFilter selects samples of a run; empty fields match everything.
type SampleFilter struct {
	Source Source
	Metric string
	Device string
}

// Samples returns a run's samples matching f, ordered by source, metric,
// device and time: each series comes out contiguous and in time order.
func (s *Store) Samples(ctx context.Context, runID int64, f SampleFilter) ([]Sample, error) {
	where := []string{"run_id = ?"}
	args := []any{runID}
	if f.Source != "" {
		where, args = append(where, "source = ?"), append(args, string(f.Source))
	}
	if f.Metric != "" {
		where, args = append(where, "metric = ?"), append(args, f.Metric)
	}
	if f.Device != "" {
		where, args = append(where, "device = ?"), append(args, f.Device)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t_ms, source, metric, device, value FROM samples WHERE `+
		strings.Join(where, " AND ")+` ORDER BY source, metric, device, t_ms`, args...)
	if err != nil {
		return nil, fmt.Errorf("read samples of run %d: %w", runID, classify(err))
	}
	defer rows.Close()
	var out []Sample
	for rows.Next() {
		var (
			sm     Sample
			source string
			device sql.NullString
		)
		if err := rows.Scan(&sm.TMillis, &source, &sm.Metric, &device, &sm.Value); err != nil {
			return nil, fmt.Errorf("read samples of run %d: %w", runID, classify(err))
		}
		sm.Source, sm.Device = Source(source), device.String
		out = append(out, sm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read samples of run %d: %w", runID, classify(err))
	}
	return out, nil
}
