package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Profile is a virtual-user sweep: it groups many runs, one per step and
// repeat (Run.ProfileID, Run.Step, Run.Repeat).
type Profile struct {
	ID        int64
	Label     string
	Status    Status
	CreatedAt time.Time
	EndedAt   time.Time       // zero while running
	Params    json.RawMessage // the sweep's parameters (steps, repeats, windows); "{}" when none
	Context   json.RawMessage // "{}" when none
	// ExperimentID and ExperimentSeq tie the profile to an experiment and
	// to the (target, step) of its schedule; 0 when none.
	ExperimentID  int64
	ExperimentSeq int
}

// CreateProfile stores a new profile with status running and returns its
// id. CreatedAt defaults to now. Labels may be reused.
func (s *Store) CreateProfile(ctx context.Context, p Profile) (int64, error) {
	params, err := jsonObject("params", p.Params)
	if err != nil {
		return 0, fmt.Errorf("create profile %q: %w", p.Label, err)
	}
	pctx, err := jsonObject("context", p.Context)
	if err != nil {
		return 0, fmt.Errorf("create profile %q: %w", p.Label, err)
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = s.now()
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO profiles (label, status, created_at, params, context, experiment_id, experiment_seq)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, p.Label, string(StatusRunning), formatTime(p.CreatedAt), params, pctx,
		nullZero(p.ExperimentID), nullZero(int64(p.ExperimentSeq)))
	if err != nil {
		return 0, fmt.Errorf("create profile %q: %w", p.Label, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("create profile %q: %w", p.Label, err)
	}
	return id, nil
}

// FinishProfile records how a running profile ended; finishing twice is
// refused with ErrFinished.
func (s *Store) FinishProfile(ctx context.Context, id int64, status Status) error {
	if !status.Valid() || status == StatusRunning {
		return fmt.Errorf("finish profile %d: status %q is not a final status", id, status)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE profiles SET status = ?, ended_at = ? WHERE id = ? AND status = ?`,
		string(status), formatTime(s.now()), id, string(StatusRunning))
	if err != nil {
		return fmt.Errorf("finish profile %d: %w", id, err)
	}
	return s.checkUpdated(ctx, res, "profiles", id, "finish profile")
}

// ReopenProfile marks a finished profile as running again, for a resumed
// experiment that continues it.
func (s *Store) ReopenProfile(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, `UPDATE profiles SET status = ?, ended_at = NULL WHERE id = ?`, string(StatusRunning), id)
	if err != nil {
		return fmt.Errorf("reopen profile %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("reopen profile %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("reopen profile %d: %w", id, ErrNotFound)
	}
	return nil
}

const profileColumns = `id, label, status, created_at, ended_at, params, context, experiment_id, experiment_seq`

// GetProfile returns one profile, or an error wrapping ErrNotFound.
func (s *Store) GetProfile(ctx context.Context, id int64) (Profile, error) {
	p, err := scanProfile(s.db.QueryRowContext(ctx, `SELECT `+profileColumns+` FROM profiles WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Profile{}, fmt.Errorf("get profile %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Profile{}, fmt.Errorf("get profile %d: %w", id, err)
	}
	return p, nil
}

// ProfileFilter selects profiles; zero fields match everything.
type ProfileFilter struct {
	Label        string
	ExperimentID int64
	Limit        int // 0: no limit
}

// ListProfiles returns the profiles matching f, newest first.
func (s *Store) ListProfiles(ctx context.Context, f ProfileFilter) ([]Profile, error) {
	q := `SELECT ` + profileColumns + ` FROM profiles`
	var (
		args  []any
		where []string
	)
	if f.Label != "" {
		where, args = append(where, "label = ?"), append(args, f.Label)
	}
	if f.ExperimentID != 0 {
		where, args = append(where, "experiment_id = ?"), append(args, f.ExperimentID)
	}
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	defer rows.Close()
	var ps []Profile
	for rows.Next() {
		p, err := scanProfile(rows)
		if err != nil {
			return nil, fmt.Errorf("list profiles: %w", err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	return ps, nil
}

// ProfileByLabelOrID finds the profile a user named on the command line:
// a number is an id (when a profile has that id; otherwise it is tried as
// a label), anything else a label, and a reused label means its newest
// profile.
func (s *Store) ProfileByLabelOrID(ctx context.Context, ref string) (Profile, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return Profile{}, errors.New("find profile: empty label or id")
	}
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		p, err := s.GetProfile(ctx, id)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return p, err
		}
	}
	ps, err := s.ListProfiles(ctx, ProfileFilter{Label: ref, Limit: 1})
	if err != nil {
		return Profile{}, err
	}
	if len(ps) == 0 {
		return Profile{}, fmt.Errorf("find profile %q: no profile with that label or id: %w", ref, ErrNotFound)
	}
	return ps[0], nil
}

func scanProfile(sc scanner) (Profile, error) {
	var (
		p                             Profile
		status, created, params, pctx string
		ended                         sql.NullString
		expID, expSeq                 sql.NullInt64
	)
	if err := sc.Scan(&p.ID, &p.Label, &status, &created, &ended, &params, &pctx, &expID, &expSeq); err != nil {
		return Profile{}, err
	}
	p.ExperimentID, p.ExperimentSeq = expID.Int64, int(expSeq.Int64)
	p.Status = Status(status)
	var err error
	if p.CreatedAt, err = parseTime(created); err != nil {
		return Profile{}, fmt.Errorf("profile %d: %w", p.ID, err)
	}
	if p.EndedAt, err = nullTime(ended); err != nil {
		return Profile{}, fmt.Errorf("profile %d: %w", p.ID, err)
	}
	p.Params, p.Context = json.RawMessage(params), json.RawMessage(pctx)
	return p, nil
}
