package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Leftover is something oltplab creates on this host's disks for the time
// of a command and removes when done: a backup cycle's directory, a
// restored copy, fio's test file. It is recorded before it exists, with
// the id of the mark oltplab puts on it, so that what a killed oltplab
// could not remove is known, and removed later (`oltplab clean
// --leftovers`, `experiment resume`) only where it still carries that
// mark.
type Leftover struct {
	ID   int64
	Path string // absolute
	// Kind says what it is ("backup", "restored copy", "fio test file").
	Kind string
	// Mark is the id of oltplab's mark on it (internal/claim).
	Mark         string
	State        LeftoverState
	CreatedAt    time.Time
	EndedAt      time.Time // zero while present
	Note         string    // how it ended, when it did
	ExperimentID int64     // the experiment whose step made it; 0 when none
	Writer       Writer    // the process that made it
}

// LeftoverState is where a recorded leftover stands.
type LeftoverState string

const (
	// LeftoverPresent: created (or about to be) and not removed yet; its
	// writer removes it when done, or oltplab later when the writer is
	// gone.
	LeftoverPresent LeftoverState = "present"
	LeftoverRemoved LeftoverState = "removed" // removed, or found gone
	// LeftoverKept: the user asked to keep it (a backup kept with
	// --keep): no longer oltplab's to remove.
	LeftoverKept LeftoverState = "kept"
	// LeftoverLeft: found without its mark (or not a directory or file
	// of oltplab's) where it was: something else is there now, left
	// alone and no longer looked for.
	LeftoverLeft LeftoverState = "left"
)

// Valid reports whether s is a state this store knows.
func (s LeftoverState) Valid() bool {
	switch s {
	case LeftoverPresent, LeftoverRemoved, LeftoverKept, LeftoverLeft:
		return true
	}
	return false
}

// RecordLeftover records that this process is about to create l.Path
// with the mark l.Mark. The mark must be new.
func (s *Store) RecordLeftover(ctx context.Context, l Leftover) (int64, error) {
	if l.Path == "" || l.Mark == "" || l.Kind == "" {
		return 0, fmt.Errorf("record leftover %q: path, kind and mark are required", l.Path)
	}
	if l.CreatedAt.IsZero() {
		l.CreatedAt = s.now()
	}
	w := s.writer
	var id int64
	err := s.db.QueryRowContext(ctx, `INSERT INTO leftovers (path, kind, mark, state, created_at, experiment_id,
			writer_pid, writer_host, writer_started)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		l.Path, l.Kind, l.Mark, string(LeftoverPresent), formatTime(l.CreatedAt), nullZero(l.ExperimentID),
		nullZero(int64(w.PID)), nullString(w.Host), nullString(w.Started)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record leftover %s: %w", l.Path, s.classify(err))
	}
	return id, nil
}

// EndLeftover records how the leftover with mark ended: removed, kept or
// left alone. A leftover that ended already is not changed (ErrFinished).
func (s *Store) EndLeftover(ctx context.Context, mark string, state LeftoverState, note string) error {
	if !state.Valid() || state == LeftoverPresent {
		return fmt.Errorf("end leftover %s: %q is not a final state", mark, state)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE leftovers SET state = ?, ended_at = ?, note = ? WHERE mark = ? AND state = ?`,
		string(state), formatTime(s.now()), nullString(note), mark, string(LeftoverPresent))
	if err != nil {
		return fmt.Errorf("end leftover %s: %w", mark, s.classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("end leftover %s: %w", mark, err)
	}
	if n == 0 {
		var st string
		err := s.db.QueryRowContext(ctx, `SELECT state FROM leftovers WHERE mark = ?`, mark).Scan(&st)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("end leftover %s: %w", mark, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("end leftover %s: %w", mark, s.classify(err))
		}
		return fmt.Errorf("end leftover %s: %w (%s)", mark, ErrFinished, st)
	}
	return nil
}

// LeftoverFilter selects leftovers; the zero value selects every present
// one.
type LeftoverFilter struct {
	ExperimentID int64 // 0: any
	All          bool  // those that ended too
}

// Leftovers returns recorded leftovers, oldest first.
func (s *Store) Leftovers(ctx context.Context, f LeftoverFilter) ([]Leftover, error) {
	q := `SELECT id, path, kind, mark, state, created_at, ended_at, note, experiment_id, writer_pid, writer_host, writer_started
		FROM leftovers WHERE 1 = 1`
	var args []any
	if !f.All {
		q += ` AND state = ?`
		args = append(args, string(LeftoverPresent))
	}
	if f.ExperimentID != 0 {
		q += ` AND experiment_id = ?`
		args = append(args, f.ExperimentID)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list leftovers: %w", s.classify(err))
	}
	defer rows.Close()
	var out []Leftover
	for rows.Next() {
		var (
			l                                      Leftover
			state, created                         string
			ended, note, writerHost, writerStarted sql.NullString
			expID, writerPID                       sql.NullInt64
		)
		if err := rows.Scan(&l.ID, &l.Path, &l.Kind, &l.Mark, &state, &created, &ended, &note, &expID,
			&writerPID, &writerHost, &writerStarted); err != nil {
			return nil, fmt.Errorf("list leftovers: %w", s.classify(err))
		}
		l.State, l.Note, l.ExperimentID = LeftoverState(state), note.String, expID.Int64
		l.Writer = Writer{PID: int(writerPID.Int64), Host: writerHost.String, Started: writerStarted.String}
		if l.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("leftover %d: %w", l.ID, err)
		}
		if l.EndedAt, err = nullTime(ended); err != nil {
			return nil, fmt.Errorf("leftover %d: %w", l.ID, err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list leftovers: %w", s.classify(err))
	}
	return out, nil
}

// Host is the name of the host this process runs on, as it records
// writers: leftovers of another host are that host's to remove.
func (s *Store) Host() string { return s.writer.Host }
