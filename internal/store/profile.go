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
	UID           string // identity across stores; empty before schema version 3
	Writer        Writer // the process that created it; zero before schema version 3
}

// CreateProfile stores a new profile with status running and returns its
// id. CreatedAt defaults to now. Labels may be reused.
func (s *Store) CreateProfile(ctx context.Context, p Profile) (int64, error) {
	for _, err := range []error{checkNoSecretJSON(p.Params), checkNoSecretJSON(p.Context)} {
		if err != nil {
			return 0, fmt.Errorf("create profile %q: %w", p.Label, err)
		}
	}
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
	p.Status, p.UID, p.Writer = StatusRunning, newUID(), s.writer
	p.Params, p.Context = json.RawMessage(params), json.RawMessage(pctx)
	id, err := insertProfile(ctx, s.db, p)
	if err != nil {
		return 0, fmt.Errorf("create profile %q: %w", p.Label, err)
	}
	p.ID = id
	s.mu.Lock()
	s.profiles[id] = p
	s.mu.Unlock()
	return id, nil
}

// insertProfile inserts p as it is and returns its new id.
func insertProfile(ctx context.Context, db queryer, p Profile) (int64, error) {
	var ended sql.NullString
	if !p.EndedAt.IsZero() {
		ended = sql.NullString{String: formatTime(p.EndedAt), Valid: true}
	}
	var id int64
	err := db.QueryRowContext(ctx, `INSERT INTO profiles
		(label, status, created_at, ended_at, params, context, experiment_id, experiment_seq,
		 uid, writer_pid, writer_host, writer_started)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		p.Label, string(p.Status), formatTime(p.CreatedAt), ended, string(p.Params), string(p.Context),
		nullZero(p.ExperimentID), nullZero(int64(p.ExperimentSeq)),
		nullString(p.UID), nullZero(int64(p.Writer.PID)), nullString(p.Writer.Host), nullString(p.Writer.Started)).Scan(&id)
	return id, err
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

// UpdateProfileParams replaces a profile's parameters: what a profile
// learns while it runs (where an adaptive profile's steps stopped) is
// stored with them.
func (s *Store) UpdateProfileParams(ctx context.Context, id int64, params json.RawMessage) error {
	if err := checkNoSecretJSON(params); err != nil {
		return fmt.Errorf("update profile %d: %w", id, err)
	}
	obj, err := jsonObject("params", params)
	if err != nil {
		return fmt.Errorf("update profile %d: %w", id, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE profiles SET params = ? WHERE id = ?`, obj, id)
	if err != nil {
		return fmt.Errorf("update profile %d: %w", id, s.classify(err))
	}
	if err := s.checkUpdated(ctx, res, "profiles", id, "update profile"); err != nil {
		return err
	}
	s.mu.Lock()
	if p, ok := s.profiles[id]; ok {
		p.Params = json.RawMessage(obj)
		s.profiles[id] = p
	}
	s.mu.Unlock()
	return nil
}

// ReopenProfile marks a finished profile as running again, for a resumed
// experiment that continues it. This process becomes its writer: until it
// finishes the profile, another process opening the store takes the
// profile for this one's, not for abandoned by the process that created
// it (and is gone).
func (s *Store) ReopenProfile(ctx context.Context, id int64) error {
	w := s.writer
	res, err := s.db.ExecContext(ctx, `UPDATE profiles SET status = ?, ended_at = NULL, writer_pid = ?, writer_host = ?,
		writer_started = ? WHERE id = ?`, string(StatusRunning), nullZero(int64(w.PID)), nullString(w.Host), nullString(w.Started), id)
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

const profileColumns = `id, label, status, created_at, ended_at, params, context, experiment_id, experiment_seq,
	uid, writer_pid, writer_host, writer_started`

// GetProfile returns one profile, or an error wrapping ErrNotFound.
func (s *Store) GetProfile(ctx context.Context, id int64) (Profile, error) {
	p, err := scanProfile(s.db.QueryRowContext(ctx, `SELECT `+profileColumns+` FROM profiles WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Profile{}, fmt.Errorf("get profile %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Profile{}, fmt.Errorf("get profile %d: %w", id, s.classify(err))
	}
	p.Status = s.seenAbandoned(p.Status, p.Writer)
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
		return nil, fmt.Errorf("list profiles: %w", s.classify(err))
	}
	defer rows.Close()
	var ps []Profile
	for rows.Next() {
		p, err := scanProfile(rows)
		if err != nil {
			return nil, fmt.Errorf("list profiles: %w", s.classify(err))
		}
		p.Status = s.seenAbandoned(p.Status, p.Writer)
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list profiles: %w", s.classify(err))
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
		uid, writerHost, writerStart  sql.NullString
		writerPID                     sql.NullInt64
	)
	if err := sc.Scan(&p.ID, &p.Label, &status, &created, &ended, &params, &pctx, &expID, &expSeq,
		&uid, &writerPID, &writerHost, &writerStart); err != nil {
		return Profile{}, err
	}
	p.ExperimentID, p.ExperimentSeq = expID.Int64, int(expSeq.Int64)
	p.UID = uid.String
	p.Writer = Writer{PID: int(writerPID.Int64), Host: writerHost.String, Started: writerStart.String}
	p.Status = Status(status)
	var err error
	if p.CreatedAt, err = parseTime(created); err != nil {
		return Profile{}, fmt.Errorf("profile %d: %w", p.ID, err)
	}
	if p.EndedAt, err = nullTime(ended); err != nil {
		return Profile{}, fmt.Errorf("profile %d: %w", p.ID, err)
	}
	p.Params, p.Context = json.RawMessage(params), json.RawMessage(pctx)
	if !json.Valid(p.Params) || !json.Valid(p.Context) {
		return Profile{}, fmt.Errorf("profile %d: the stored parameters or context are not valid JSON: %w", p.ID, ErrDamaged)
	}
	return p, nil
}
