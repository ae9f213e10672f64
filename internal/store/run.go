package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind is what a run did.
type Kind string

const (
	KindBuild   Kind = "build"   // schema build and initial population
	KindRun     Kind = "run"     // a timed workload run
	KindCheck   Kind = "check"   // consistency checks (TPC-C 3.3.2)
	KindMonitor Kind = "monitor" // sampling only, no workload
	KindStorage Kind = "storage" // storage micro-benchmarks (fio), no database
	KindBackup  Kind = "backup"  // backup and restore cycles with the engine's own tools
	KindRebuild Kind = "rebuild" // index rebuilds, cold and warm cache
	KindCPU     Kind = "cpu"     // single-threaded CPU calibration, in the server and the client
	// KindParallel is one measured window synchronised over several
	// targets: its summary ties the targets' own runs (kind run) together.
	KindParallel Kind = "parallel"
	// KindNeighbours is a noisy-neighbour scenario: its phases, backups
	// and the shared device's samples; the instances' load runs are runs
	// of their own.
	KindNeighbours Kind = "neighbours"
	// KindTPCHBuild is a TPC-H schema build and population.
	KindTPCHBuild Kind = "tpch-build"
	// KindTPCHCheck is a check of a TPC-H database's rows and
	// relationships.
	KindTPCHCheck Kind = "tpch-check"
	// KindTPCH is a run of TPC-H's tests (power, throughput or both):
	// per query and stream times, and the figures of clause 5.4.
	KindTPCH Kind = "tpch"
)

// Valid reports whether k is a kind this store knows.
func (k Kind) Valid() bool {
	switch k {
	case KindBuild, KindRun, KindCheck, KindMonitor, KindStorage, KindBackup, KindRebuild, KindCPU, KindParallel, KindNeighbours,
		KindTPCHBuild, KindTPCHCheck, KindTPCH:
		return true
	}
	return false
}

// Status is where a run or profile stands. A process that was killed or
// crashed leaves StatusRunning behind, which Open turns into
// StatusAbandoned once the process is gone (writer.go).
type Status string

const (
	StatusRunning Status = "running"
	StatusOK      Status = "ok"
	StatusPartial Status = "partial" // finished, but some of it failed or was cut short
	StatusFailed  Status = "failed"
	// StatusSuspect: finished, but its figures disagree with themselves
	// (the database's counters against the driver's own counts); stored
	// with the reason, left out of peaks and verdicts unless asked for.
	StatusSuspect   Status = "suspect"
	StatusAbandoned Status = "abandoned" // its process ended without finishing it
	// StatusFailures: measured to its end, but more of its transactions
	// failed than the run allowed (--max-failure-rate): not a success;
	// left out of peaks and verdicts.
	StatusFailures Status = "failures"
	// StatusContaminated: measured to its end, but something other than
	// the database and oltplab used more of the machine's CPU meanwhile
	// than allowed (foreign CPU, steal): stored with the figures, left out
	// of peaks and verdicts unless asked for.
	StatusContaminated Status = "contaminated"
)

// Valid reports whether s is a status this store knows.
func (s Status) Valid() bool {
	switch s {
	case StatusRunning, StatusOK, StatusPartial, StatusFailed, StatusSuspect, StatusAbandoned, StatusFailures, StatusContaminated:
		return true
	}
	return false
}

// Run is one measuring command's result.
type Run struct {
	ID    int64
	Kind  Kind
	Label string
	// ProfileID is the profile (virtual-user sweep) the run belongs to; 0
	// when it belongs to none.
	ProfileID int64
	// Step and Repeat place the run in its profile, both numbered from 1;
	// 0 when not part of a profile.
	Step, Repeat int
	// VUs is the number of virtual users; 0 when not applicable.
	VUs       int
	Status    Status
	StartedAt time.Time
	EndedAt   time.Time // zero while running
	// Target is the database target, already redacted by the caller.
	Target      string
	Dialect     string
	ToolVersion string
	Seed        *int64          // nil when the run used no randomness
	Params      json.RawMessage // all parameters; "{}" when none
	Context     json.RawMessage // host, storage, database version and settings; "{}" when none
	Summary     json.RawMessage // nil until finished (or when finished without one)
	Error       string          // why it failed; empty otherwise
	// ExperimentID and ExperimentSeq tie the run to an experiment and to
	// the (target, step) of its schedule that measured it; 0 when none.
	ExperimentID  int64
	ExperimentSeq int
	// Superseded says why the run no longer counts (its process died
	// while it ran, or a resumed experiment measured its slot again);
	// empty for a run that counts. Reports leave superseded runs out.
	Superseded string
	// UID identifies the run across stores (a saved result is imported
	// once); empty for runs stored before schema version 3.
	UID string
	// Writer is the process that created it; zero before schema version 3.
	Writer Writer
}

// CreateRun stores a new run with status running and returns its id.
// StartedAt defaults to now. The target must already be redacted.
func (s *Store) CreateRun(ctx context.Context, r Run) (int64, error) {
	if !r.Kind.Valid() {
		return 0, fmt.Errorf("create run: unknown kind %q", r.Kind)
	}
	for _, err := range []error{checkNoSecret(r.Target), checkNoSecretJSON(r.Params), checkNoSecretJSON(r.Context)} {
		if err != nil {
			return 0, fmt.Errorf("create run: %w", err)
		}
	}
	params, err := jsonObject("params", r.Params)
	if err != nil {
		return 0, fmt.Errorf("create run: %w", err)
	}
	runCtx, err := jsonObject("context", r.Context)
	if err != nil {
		return 0, fmt.Errorf("create run: %w", err)
	}
	if r.StartedAt.IsZero() {
		r.StartedAt = s.now()
	}
	r.Status, r.UID, r.Writer = StatusRunning, newUID(), s.writer
	r.Params, r.Context = json.RawMessage(params), json.RawMessage(runCtx)
	id, err := insertRun(ctx, s.db, r)
	if err != nil {
		return 0, fmt.Errorf("create %s run %q: %w", r.Kind, r.Label, err)
	}
	r.ID = id
	s.mu.Lock()
	s.runs[id] = r
	s.mu.Unlock()
	return id, nil
}

// insertRun inserts r as it is (status, identity and writer included) and
// returns its new id.
func insertRun(ctx context.Context, db queryer, r Run) (int64, error) {
	var seed sql.NullInt64
	if r.Seed != nil {
		seed = sql.NullInt64{Int64: *r.Seed, Valid: true}
	}
	w := r.Writer
	var id int64
	err := db.QueryRowContext(ctx, `INSERT INTO runs
		(kind, label, profile_id, step, repeat, vus, status, started_at, target, dialect, tool_version, seed, params, context,
		 experiment_id, experiment_seq, uid, writer_pid, writer_host, writer_started)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		string(r.Kind), r.Label, nullZero(r.ProfileID), nullZero(int64(r.Step)), nullZero(int64(r.Repeat)),
		nullZero(int64(r.VUs)), string(r.Status), formatTime(r.StartedAt), r.Target, r.Dialect,
		r.ToolVersion, seed, string(r.Params), string(r.Context),
		nullZero(r.ExperimentID), nullZero(int64(r.ExperimentSeq)),
		nullString(r.UID), nullZero(int64(w.PID)), nullString(w.Host), nullString(w.Started)).Scan(&id)
	return id, err
}

// newUID is a random 128-bit identity in hex.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// FinishRun records how a running run ended. status must not be running;
// summary may be nil; errText is stored when not empty. Finishing a run
// twice is refused with ErrFinished, so a summary is never overwritten.
func (s *Store) FinishRun(ctx context.Context, id int64, status Status, summary json.RawMessage, errText string) error {
	if !status.Valid() || status == StatusRunning {
		return fmt.Errorf("finish run %d: status %q is not a final status", id, status)
	}
	var sum sql.NullString
	if summary != nil {
		if !json.Valid(summary) {
			return fmt.Errorf("finish run %d: summary is not valid JSON", id)
		}
		sum = sql.NullString{String: string(summary), Valid: true}
	}
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, ended_at = ?, summary = ?, error = ?
		WHERE id = ? AND status = ?`,
		string(status), formatTime(s.now()), sum, sql.NullString{String: errText, Valid: errText != ""},
		id, string(StatusRunning))
	if err != nil {
		return fmt.Errorf("finish run %d: %w", id, err)
	}
	return s.checkUpdated(ctx, res, "runs", id, "finish run")
}

// UpdateRunContext replaces a run's context (for facts learnt after it
// started, such as the server version).
func (s *Store) UpdateRunContext(ctx context.Context, id int64, runCtx json.RawMessage) error {
	c, err := jsonObject("context", runCtx)
	if err != nil {
		return fmt.Errorf("update context of run %d: %w", id, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET context = ? WHERE id = ?`, c, id)
	if err != nil {
		return fmt.Errorf("update context of run %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update context of run %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("update context of run %d: %w", id, ErrNotFound)
	}
	return nil
}

// checkUpdated turns "no row updated" into ErrNotFound or ErrFinished.
func (s *Store) checkUpdated(ctx context.Context, res sql.Result, table string, id int64, doing string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s %d: %w", doing, id, err)
	}
	if n > 0 {
		return nil
	}
	var st string
	err = s.db.QueryRowContext(ctx, `SELECT status FROM `+table+` WHERE id = ?`, id).Scan(&st)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%s %d: %w", doing, id, ErrNotFound)
	case err != nil:
		return fmt.Errorf("%s %d: %w", doing, id, err)
	}
	return fmt.Errorf("%s %d: %w with status %s", doing, id, ErrFinished, st)
}

// SupersedeRun marks a run as no longer counting, saying why. A run
// still marked running (its process died) is finished as failed at the
// same time. Superseding twice keeps the first reason.
func (s *Store) SupersedeRun(ctx context.Context, id int64, why string) error {
	if why == "" {
		return fmt.Errorf("supersede run %d: no reason given", id)
	}
	now := formatTime(s.now())
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET
			superseded = COALESCE(superseded, ?),
			status = CASE WHEN status = ? THEN ? ELSE status END,
			ended_at = COALESCE(ended_at, ?),
			error = CASE WHEN status = ? THEN ? ELSE error END
		WHERE id = ?`,
		why, string(StatusRunning), string(StatusFailed), now, string(StatusRunning), why, id)
	if err != nil {
		return fmt.Errorf("supersede run %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("supersede run %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("supersede run %d: %w", id, ErrNotFound)
	}
	return nil
}

// RunFilter selects runs; zero fields match everything.
type RunFilter struct {
	Kind         Kind
	Label        string
	ProfileID    int64
	ExperimentID int64
	Status       Status
	// Counting leaves superseded runs out.
	Counting bool
	Limit    int // 0: no limit
}

const runColumns = `id, kind, label, profile_id, step, repeat, vus, status, started_at, ended_at,
	target, dialect, tool_version, seed, params, context, summary, error, experiment_id, experiment_seq, superseded,
	uid, writer_pid, writer_host, writer_started`

// ListRuns returns the runs matching f, newest first.
func (s *Store) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	var where []string
	var args []any
	if f.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, string(f.Kind))
	}
	if f.Label != "" {
		where, args = append(where, "label = ?"), append(args, f.Label)
	}
	if f.ProfileID != 0 {
		where, args = append(where, "profile_id = ?"), append(args, f.ProfileID)
	}
	if f.ExperimentID != 0 {
		where, args = append(where, "experiment_id = ?"), append(args, f.ExperimentID)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	if f.Counting {
		where = append(where, "superseded IS NULL")
	}
	q := `SELECT ` + runColumns + ` FROM runs`
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
		return nil, fmt.Errorf("list runs: %w", s.classify(err))
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", s.classify(err))
		}
		s.seenAbandonedRun(&r)
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", s.classify(err))
	}
	return runs, nil
}

// GetRun returns one run, or an error wrapping ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id int64) (Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("get run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %d: %w", id, s.classify(err))
	}
	s.seenAbandonedRun(&r)
	return r, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(sc scanner) (Run, error) {
	var (
		r                             Run
		kind, status, started, params string
		runCtx                        string
		profileID, step, repeat, vus  sql.NullInt64
		seed, writerPID               sql.NullInt64
		ended, summary, errText       sql.NullString
		expID, expSeq                 sql.NullInt64
		superseded                    sql.NullString
		uid, writerHost, writerStart  sql.NullString
	)
	if err := sc.Scan(&r.ID, &kind, &r.Label, &profileID, &step, &repeat, &vus, &status, &started, &ended,
		&r.Target, &r.Dialect, &r.ToolVersion, &seed, &params, &runCtx, &summary, &errText,
		&expID, &expSeq, &superseded, &uid, &writerPID, &writerHost, &writerStart); err != nil {
		return Run{}, err
	}
	r.ExperimentID, r.ExperimentSeq, r.Superseded = expID.Int64, int(expSeq.Int64), superseded.String
	r.UID = uid.String
	r.Writer = Writer{PID: int(writerPID.Int64), Host: writerHost.String, Started: writerStart.String}
	r.Kind, r.Status = Kind(kind), Status(status)
	r.ProfileID, r.Step, r.Repeat, r.VUs = profileID.Int64, int(step.Int64), int(repeat.Int64), int(vus.Int64)
	if seed.Valid {
		v := seed.Int64
		r.Seed = &v
	}
	var err error
	if r.StartedAt, err = parseTime(started); err != nil {
		return Run{}, fmt.Errorf("run %d: %w", r.ID, err)
	}
	if r.EndedAt, err = nullTime(ended); err != nil {
		return Run{}, fmt.Errorf("run %d: %w", r.ID, err)
	}
	r.Params, r.Context = json.RawMessage(params), json.RawMessage(runCtx)
	if summary.Valid {
		r.Summary = json.RawMessage(summary.String)
	}
	r.Error = errText.String
	// Only valid JSON is ever written; anything else was damaged on disk
	// in a way the integrity check cannot see (inside a value).
	for _, f := range []struct {
		name string
		v    json.RawMessage
	}{{"parameters", r.Params}, {"context", r.Context}, {"summary", r.Summary}} {
		if len(f.v) > 0 && !json.Valid(f.v) {
			return Run{}, fmt.Errorf("run %d: the stored %s are not valid JSON: %w", r.ID, f.name, ErrDamaged)
		}
	}
	return r, nil
}

// nullZero stores 0 as NULL (an absent profile, step, repeat or VU count).
func nullZero(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: v != 0} }

// jsonObject checks a caller's JSON and gives "{}" for none.
func jsonObject(what string, m json.RawMessage) (string, error) {
	if len(m) == 0 {
		return "{}", nil
	}
	if !json.Valid(m) {
		return "", fmt.Errorf("%s is not valid JSON", what)
	}
	return string(m), nil
}
