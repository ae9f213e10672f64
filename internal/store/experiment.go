package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Experiment is one run of a plan file: its schedule of (target, step)
// pairs is stored with it (ExperimentStep), and every run and profile it
// measured carries its id.
type Experiment struct {
	ID        int64
	Name      string
	Status    Status
	CreatedAt time.Time
	EndedAt   time.Time // zero while running or interrupted by a crash
	// PlanFile is the plan's absolute path when it started; Plan its text
	// with secrets removed; PlanSHA256 the digest of the text as read.
	PlanFile   string
	Plan       string
	PlanSHA256 string
	// Params is the plan as oltplab understood it (targets, steps), JSON.
	Params json.RawMessage
	// Owner identifies the process that runs (or ran) the experiment, so
	// that a resume can tell a crashed run from a live one.
	Owner string
	Error string
}

// StepState is where one (target, step) of an experiment stands.
type StepState string

const (
	StepPending     StepState = "pending"
	StepRunning     StepState = "running" // or its process died: see Experiment.Owner
	StepDone        StepState = "done"
	StepFailed      StepState = "failed"
	StepInterrupted StepState = "interrupted" // stopped by the user; resume continues it
)

// Valid reports whether s is a state this store knows.
func (s StepState) Valid() bool {
	switch s {
	case StepPending, StepRunning, StepDone, StepFailed, StepInterrupted:
		return true
	}
	return false
}

// ExperimentStep is one (target, step) of an experiment's schedule.
type ExperimentStep struct {
	ExperimentID int64
	// Seq is the position in the schedule, from 1.
	Seq int
	// StepIndex is the step's position in the plan's steps, from 0.
	StepIndex int
	Kind      string
	// Target is the target's name; empty for a step over all targets.
	Target    string
	State     StepState
	Attempts  int
	StartedAt time.Time
	EndedAt   time.Time
	// Progress is what a running attempt saved to continue from; Outcome
	// what a finished one reported. Both JSON, nil when none.
	Progress json.RawMessage
	Outcome  json.RawMessage
	Error    string
}

// CreateExperiment stores an experiment with status running, owned by
// owner, and its schedule with every step pending, in one transaction.
func (s *Store) CreateExperiment(ctx context.Context, e Experiment, steps []ExperimentStep) (int64, error) {
	params, err := jsonObject("params", e.Params)
	if err != nil {
		return 0, fmt.Errorf("create experiment %q: %w", e.Name, err)
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.now()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("create experiment %q: %w", e.Name, err)
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO experiments (name, status, created_at, plan_file, plan, plan_sha256, params, owner)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, e.Name, string(StatusRunning), formatTime(e.CreatedAt), e.PlanFile, e.Plan,
		e.PlanSHA256, params, e.Owner).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("create experiment %q: %w", e.Name, err)
	}
	for i, st := range steps {
		if st.Seq != i+1 {
			return 0, fmt.Errorf("create experiment %q: step %d has seq %d, want %d", e.Name, i, st.Seq, i+1)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO experiment_steps (experiment_id, seq, step_index, kind, target, state)
			VALUES (?, ?, ?, ?, ?, ?)`, id, st.Seq, st.StepIndex, st.Kind, st.Target, string(StepPending)); err != nil {
			return 0, fmt.Errorf("create experiment %q: step %d: %w", e.Name, st.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("create experiment %q: %w", e.Name, err)
	}
	return id, nil
}

const experimentColumns = `id, name, status, created_at, ended_at, plan_file, plan, plan_sha256, params, owner, error`

// GetExperiment returns one experiment, or an error wrapping ErrNotFound.
func (s *Store) GetExperiment(ctx context.Context, id int64) (Experiment, error) {
	e, err := scanExperiment(s.db.QueryRowContext(ctx, `SELECT `+experimentColumns+` FROM experiments WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Experiment{}, fmt.Errorf("get experiment %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Experiment{}, fmt.Errorf("get experiment %d: %w", id, err)
	}
	return e, nil
}

// ListExperiments returns experiments, newest first; limit 0 lists all.
func (s *Store) ListExperiments(ctx context.Context, limit int) ([]Experiment, error) {
	q := `SELECT ` + experimentColumns + ` FROM experiments ORDER BY id DESC`
	var args []any
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list experiments: %w", err)
	}
	defer rows.Close()
	var out []Experiment
	for rows.Next() {
		e, err := scanExperiment(rows)
		if err != nil {
			return nil, fmt.Errorf("list experiments: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list experiments: %w", err)
	}
	return out, nil
}

// ErrClaimed: another process took the experiment over first.
var ErrClaimed = errors.New("experiment taken over by another process")

// ClaimExperiment makes owner the experiment's owner and its status
// running, provided its owner is still previous (so that two resumes
// cannot both take it).
func (s *Store) ClaimExperiment(ctx context.Context, id int64, previous, owner string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE experiments SET owner = ?, status = ?, ended_at = NULL, error = NULL
		WHERE id = ? AND owner = ?`, owner, string(StatusRunning), id, previous)
	if err != nil {
		return fmt.Errorf("claim experiment %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("claim experiment %d: %w", id, err)
	}
	if n == 0 {
		if _, err := s.GetExperiment(ctx, id); err != nil {
			return fmt.Errorf("claim experiment %d: %w", id, err)
		}
		return fmt.Errorf("claim experiment %d: %w", id, ErrClaimed)
	}
	return nil
}

// FinishExperiment records how an experiment ended.
func (s *Store) FinishExperiment(ctx context.Context, id int64, status Status, errText string) error {
	if !status.Valid() || status == StatusRunning {
		return fmt.Errorf("finish experiment %d: status %q is not a final status", id, status)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE experiments SET status = ?, ended_at = ?, error = ? WHERE id = ?`,
		string(status), formatTime(s.now()), sql.NullString{String: errText, Valid: errText != ""}, id)
	if err != nil {
		return fmt.Errorf("finish experiment %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("finish experiment %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("finish experiment %d: %w", id, ErrNotFound)
	}
	return nil
}

func scanExperiment(sc scanner) (Experiment, error) {
	var (
		e                       Experiment
		status, created, params string
		ended, errText          sql.NullString
	)
	if err := sc.Scan(&e.ID, &e.Name, &status, &created, &ended, &e.PlanFile, &e.Plan, &e.PlanSHA256, &params,
		&e.Owner, &errText); err != nil {
		return Experiment{}, err
	}
	e.Status, e.Params, e.Error = Status(status), json.RawMessage(params), errText.String
	var err error
	if e.CreatedAt, err = parseTime(created); err != nil {
		return Experiment{}, fmt.Errorf("experiment %d: %w", e.ID, err)
	}
	if e.EndedAt, err = nullTime(ended); err != nil {
		return Experiment{}, fmt.Errorf("experiment %d: %w", e.ID, err)
	}
	return e, nil
}

// ExperimentSteps returns the schedule of an experiment in order.
func (s *Store) ExperimentSteps(ctx context.Context, id int64) ([]ExperimentStep, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT experiment_id, seq, step_index, kind, target, state, attempts,
		started_at, ended_at, progress, outcome, error FROM experiment_steps WHERE experiment_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read the steps of experiment %d: %w", id, err)
	}
	defer rows.Close()
	var out []ExperimentStep
	for rows.Next() {
		var (
			st                                  ExperimentStep
			state                               string
			started, ended, prog, outc, errText sql.NullString
		)
		if err := rows.Scan(&st.ExperimentID, &st.Seq, &st.StepIndex, &st.Kind, &st.Target, &state, &st.Attempts,
			&started, &ended, &prog, &outc, &errText); err != nil {
			return nil, fmt.Errorf("read the steps of experiment %d: %w", id, err)
		}
		st.State, st.Error = StepState(state), errText.String
		if st.StartedAt, err = nullTime(started); err != nil {
			return nil, fmt.Errorf("experiment %d step %d: %w", id, st.Seq, err)
		}
		if st.EndedAt, err = nullTime(ended); err != nil {
			return nil, fmt.Errorf("experiment %d step %d: %w", id, st.Seq, err)
		}
		if prog.Valid {
			st.Progress = json.RawMessage(prog.String)
		}
		if outc.Valid {
			st.Outcome = json.RawMessage(outc.String)
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the steps of experiment %d: %w", id, err)
	}
	return out, nil
}

// StartStep marks one step running and counts the attempt; the progress
// an earlier attempt saved is kept. It returns the attempt's number.
func (s *Store) StartStep(ctx context.Context, id int64, seq int) (int, error) {
	var attempts int
	err := s.db.QueryRowContext(ctx, `UPDATE experiment_steps SET state = ?, attempts = attempts + 1, started_at = ?,
			ended_at = NULL, error = NULL
		WHERE experiment_id = ? AND seq = ? RETURNING attempts`,
		string(StepRunning), formatTime(s.now()), id, seq).Scan(&attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("start step %d of experiment %d: %w", seq, id, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("start step %d of experiment %d: %w", seq, id, err)
	}
	return attempts, nil
}

// SaveStepProgress records what a running step has done so far.
func (s *Store) SaveStepProgress(ctx context.Context, id int64, seq int, progress json.RawMessage) error {
	if !json.Valid(progress) {
		return fmt.Errorf("save progress of step %d of experiment %d: not valid JSON", seq, id)
	}
	return s.updateStep(ctx, id, seq, "save progress of", `UPDATE experiment_steps SET progress = ? WHERE experiment_id = ? AND seq = ?`,
		string(progress), id, seq)
}

// FinishStep records how one attempt of a step ended.
func (s *Store) FinishStep(ctx context.Context, id int64, seq int, state StepState, outcome json.RawMessage, errText string) error {
	if !state.Valid() || state == StepRunning || state == StepPending {
		return fmt.Errorf("finish step %d of experiment %d: %q is not a final state", seq, id, state)
	}
	var out sql.NullString
	if outcome != nil {
		if !json.Valid(outcome) {
			return fmt.Errorf("finish step %d of experiment %d: outcome is not valid JSON", seq, id)
		}
		out = sql.NullString{String: string(outcome), Valid: true}
	}
	return s.updateStep(ctx, id, seq, "finish", `UPDATE experiment_steps SET state = ?, ended_at = ?, outcome = ?, error = ?
		WHERE experiment_id = ? AND seq = ?`,
		string(state), formatTime(s.now()), out, sql.NullString{String: errText, Valid: errText != ""}, id, seq)
}

func (s *Store) updateStep(ctx context.Context, id int64, seq int, doing, q string, args ...any) error {
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("%s step %d of experiment %d: %w", doing, seq, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s step %d of experiment %d: %w", doing, seq, id, err)
	}
	if n == 0 {
		return fmt.Errorf("%s step %d of experiment %d: %w", doing, seq, id, ErrNotFound)
	}
	return nil
}
