package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
)

func testExperimentLifecycle(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	steps := []ExperimentStep{
		{Seq: 1, StepIndex: 0, Kind: "build", Target: "tmpfs"},
		{Seq: 2, StepIndex: 1, Kind: "profile", Target: "tmpfs"},
		{Seq: 3, StepIndex: 0, Kind: "build", Target: "disk"},
	}
	id, err := s.CreateExperiment(ctx, Experiment{Name: "tiers", PlanFile: "/p/tiers.yaml", Plan: "name: tiers\n",
		PlanSHA256: "abc", Params: json.RawMessage(`{"targets":["tmpfs","disk"]}`), Owner: "host 1 2"}, steps)
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.GetExperiment(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "tiers" || e.Status != StatusRunning || e.Owner != "host 1 2" || e.Plan != "name: tiers\n" || !e.EndedAt.IsZero() {
		t.Errorf("got %+v, want a running tiers experiment owned by host 1 2", e)
	}

	a, err := s.StartStep(ctx, id, 2)
	if err != nil || a != 1 {
		t.Fatalf("start step 2: attempt %d, %v; want 1", a, err)
	}
	if err := s.SaveStepProgress(ctx, id, 2, json.RawMessage(`{"profile_id":7}`)); err != nil {
		t.Fatal(err)
	}
	// The process dies; another claims the experiment and starts the step again.
	if err := s.ClaimExperiment(ctx, id, "someone else", "host 3 4"); !errors.Is(err, ErrClaimed) {
		t.Errorf("claim with the wrong previous owner: got %v, want ErrClaimed", err)
	}
	if err := s.ClaimExperiment(ctx, id, "host 1 2", "host 3 4"); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimExperiment(ctx, 999, "", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("claim a missing experiment: got %v, want ErrNotFound", err)
	}
	if a, err = s.StartStep(ctx, id, 2); err != nil || a != 2 {
		t.Fatalf("restart step 2: attempt %d, %v; want 2", a, err)
	}
	if err := s.FinishStep(ctx, id, 2, StepDone, json.RawMessage(`{"headline":"peak 100 NOPM"}`), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishStep(ctx, id, 3, StepRunning, nil, ""); err == nil {
		t.Errorf("finish as running: got nil, want an error")
	}
	if _, err := s.StartStep(ctx, id, 9); !errors.Is(err, ErrNotFound) {
		t.Errorf("start a missing step: got %v, want ErrNotFound", err)
	}
	got, err := s.ExperimentSteps(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d steps, want 3", len(got))
	}
	st := got[1]
	if st.State != StepDone || st.Attempts != 2 || string(st.Progress) != `{"profile_id":7}` ||
		string(st.Outcome) != `{"headline":"peak 100 NOPM"}` || st.EndedAt.IsZero() {
		t.Errorf("step 2: got %+v, want done after 2 attempts with its progress and outcome", st)
	}
	if got[0].State != StepPending || got[2].Target != "disk" || got[2].Kind != "build" {
		t.Errorf("steps 1 and 3: got %+v and %+v, want pending build steps", got[0], got[2])
	}
	if err := s.FinishExperiment(ctx, id, StatusOK, ""); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListExperiments(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Status != StatusOK || list[0].Owner != "host 3 4" {
		t.Errorf("list: got %+v, want the one finished experiment", list)
	}
}

func testRunsAndProfilesOfAnExperiment(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	id, err := s.CreateExperiment(ctx, Experiment{Name: "e"}, []ExperimentStep{{Seq: 1, Kind: "profile", Target: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := s.CreateProfile(ctx, Profile{Label: "e/a", ExperimentID: id, ExperimentSeq: 1})
	if err != nil {
		t.Fatal(err)
	}
	mk := func() int64 {
		r, err := s.CreateRun(ctx, Run{Kind: KindRun, ProfileID: pid, Step: 1, Repeat: 1, VUs: 1, ExperimentID: id, ExperimentSeq: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	dead, kept := mk(), mk()
	if _, err := s.CreateRun(ctx, Run{Kind: KindBuild}); err != nil { // not the experiment's
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, kept, StatusOK, json.RawMessage(`{}`), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SupersedeRun(ctx, dead, "its process ended while it ran"); err != nil {
		t.Fatal(err)
	}
	if err := s.SupersedeRun(ctx, dead, "a second reason"); err != nil {
		t.Fatal(err)
	}
	if err := s.SupersedeRun(ctx, 12345, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("supersede a missing run: got %v, want ErrNotFound", err)
	}
	r, err := s.GetRun(ctx, dead)
	if err != nil {
		t.Fatal(err)
	}
	if r.Superseded != "its process ended while it ran" || r.Status != StatusFailed || r.EndedAt.IsZero() ||
		r.ExperimentID != id || r.ExperimentSeq != 1 {
		t.Errorf("superseded run: got %+v, want failed, ended, with the first reason, in experiment %d step 1", r, id)
	}
	all, err := s.ListRuns(ctx, RunFilter{ExperimentID: id})
	if err != nil {
		t.Fatal(err)
	}
	counting, err := s.ListRuns(ctx, RunFilter{ExperimentID: id, Counting: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || len(counting) != 1 || counting[0].ID != kept {
		t.Errorf("got %d runs of the experiment (%d counting), want 2 with only run %d counting", len(all), len(counting), kept)
	}
	ps, err := s.ListProfiles(ctx, ProfileFilter{ExperimentID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].ID != pid || ps[0].ExperimentSeq != 1 {
		t.Errorf("profiles of the experiment: got %+v, want profile %d", ps, pid)
	}
	if err := s.FinishProfile(ctx, pid, StatusPartial); err != nil {
		t.Fatal(err)
	}
	// Created by a process that is gone; the resume that reopens it
	// becomes its writer.
	if _, err := s.db.ExecContext(ctx, `UPDATE profiles SET writer_pid = ?, writer_started = ? WHERE id = ?`, 1<<30, "gone", pid); err != nil {
		t.Fatal(err)
	}
	if err := s.ReopenProfile(ctx, pid); err != nil {
		t.Fatal(err)
	}
	if p, err := s.GetProfile(ctx, pid); err != nil || p.Status != StatusRunning || p.Writer != s.writer {
		t.Errorf("reopened profile: %+v, %v; want running, written by this process %+v", p, err, s.writer)
	}
	if err := s.FinishProfile(ctx, pid, StatusOK); err != nil {
		t.Errorf("finish a reopened profile: %v", err)
	}
}

// TestMigrationKeepsVersion1Data: a store written before experiments
// existed opens, gains the new tables, and keeps its runs.
func TestMigrationKeepsVersion1Data(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	db := rawDB(t, path)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`PRAGMA application_id = ` + strconv.Itoa(applicationID)); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range migrations[0].stmts {
		if _, err := tx.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(`INSERT INTO schema_migrations VALUES (1, '2025-01-01T00:00:00.000000000Z')`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO runs (kind, status, started_at) VALUES ('run', 'ok', '2025-01-01T00:00:00.000000000Z')`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.ListRuns(ctx, RunFilter{Counting: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ExperimentID != 0 || runs[0].Superseded != "" {
		t.Errorf("got %+v, want the one old run, counting, in no experiment", runs)
	}
	if _, err := s.CreateExperiment(ctx, Experiment{Name: "after"}, nil); err != nil {
		t.Errorf("create an experiment after the migration: %v", err)
	}
}
