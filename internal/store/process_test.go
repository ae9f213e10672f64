package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestConcurrentCreation: several processes open a store that does not
// exist yet at the same moment, as `results list` in four shells would;
// every one of them succeeds and finds a complete store.
func TestConcurrentCreation(t *testing.T) {
	const trials, procs = 8, 4
	for trial := range trials {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("new%d.db", trial))
		var cs []*childProc
		for range procs {
			cs = append(cs, startChild(t, "open "+path))
		}
		startTogether(t, cs...)
		for i, c := range cs {
			if err := c.wait(); err != nil {
				t.Errorf("trial %d, process %d: %v", trial, i, err)
			}
		}
	}
}

// TestConcurrentWriters: four processes create and complete runs on one
// new store at the same time; every run is stored whole.
func TestConcurrentWriters(t *testing.T) {
	const procs, runs = 4, 5
	path := filepath.Join(t.TempDir(), "results.db")
	var cs []*childProc
	for range procs {
		cs = append(cs, startChild(t, fmt.Sprintf("write %s %d", path, runs)))
	}
	startTogether(t, cs...)
	var ids []int64
	for i, c := range cs {
		for range runs {
			c.expect(t, "started ")
			var id int64
			fmt.Sscanf(c.expect(t, "done "), "done %d", &id)
			ids = append(ids, id)
		}
		if err := c.wait(); err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := s.ListRuns(context.Background(), RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != procs*runs {
		t.Errorf("got %d runs, want %d", len(all), procs*runs)
	}
	for _, id := range ids {
		storedRun(t, s, id, samplesPerRun)
	}
}

// TestKilledWriter: a process killed (SIGKILL) while it writes runs loses
// nothing it finished; the store stays intact; the run it was writing is
// marked abandoned once it is gone, instead of "running" forever.
func TestKilledWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	c := startChild(t, "write "+path+" 100000")
	startTogether(t, c)
	var done []int64
	for range 3 {
		c.expect(t, "started ")
		var id int64
		fmt.Sscanf(c.expect(t, "done "), "done %d", &id)
		done = append(done, id)
	}
	// Kill it while it writes the next run.
	var writing int64
	fmt.Sscanf(c.expect(t, "started "), "started %d", &writing)
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := c.wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child ended with %v, want killed", err)
	}
	// A reader shows the run abandoned without writing anything.
	rs, err := OpenToRead(ctx, path)
	if err != nil {
		t.Fatalf("OpenToRead after the writer was killed: %v", err)
	}
	if r, err := rs.GetRun(ctx, writing); err != nil || (r.Status != StatusAbandoned && r.Status != StatusOK) ||
		(r.Status == StatusAbandoned && !strings.Contains(r.Error, "ended without finishing")) {
		t.Errorf("read: the run being written shows as %q, %q (%v), want abandoned", r.Status, r.Error, err)
	}
	var stored string
	if err := rs.db.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, writing).Scan(&stored); err != nil || (stored != "running" && stored != "ok") {
		t.Errorf("a reader wrote status %q (%v)", stored, err)
	}
	rs.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open after the writer was killed: %v", err)
	}
	defer s.Close()
	for _, id := range done {
		storedRun(t, s, id, samplesPerRun)
	}
	all, err := s.ListRuns(ctx, RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.GetRun(ctx, writing); err != nil || (r.Status != StatusAbandoned && r.Status != StatusOK) {
		t.Errorf("the run being written when the process was killed: %+v (%v), want abandoned (or ok, had it finished)", r.Status, err)
	}
	for _, r := range all {
		if r.Status == StatusRunning {
			t.Errorf("run %d is still running after its process was killed", r.ID)
		}
		if r.Status == StatusAbandoned && (r.EndedAt.IsZero() || !strings.Contains(r.Error, "ended without finishing")) {
			t.Errorf("abandoned run %d: ended %v, error %q", r.ID, r.EndedAt, r.Error)
		}
	}
}
