package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/oltplab/oltplab/internal/store"
)

// TestResumeRefusedWhileRunning: a second `experiment resume` of an
// experiment another process is resuming is refused with one line and a
// non-zero exit, and leaves the running one alone: it finishes the
// profile it continues, stores it ok, and none of its runs is abandoned.
// The refused process opens the results store as every command does,
// which marks the rows of dead processes abandoned: the profile the
// running resume took over from its killed predecessor must count as its
// own by then.
func TestResumeRefusedWhileRunning(t *testing.T) {
	dir := t.TempDir()
	plan := writePlan(t, dir, sqlitePlan)
	results := filepath.Join(dir, "results.db")
	env := []string{"OLTPLAB_RESULTS=" + results, "HOME=" + dir}
	ctx := context.Background()

	// The first process measures the profile's second run when killed.
	first := cliCommand(t, dir, "experiment", "run", plan, "--results", results)
	waitRunning(t, first, func() bool {
		return runsOf(t, results, store.StatusOK, 0) >= 1 && runsOf(t, results, store.StatusRunning, 0) == 1
	})
	if err := syscall.Kill(first.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()

	// The resume continues the profile; once it measures a run of its
	// own, a second resume is tried.
	resume := cliCommand(t, dir, "experiment", "resume", "1", "--results", results)
	waitRunning(t, resume, func() bool { return runsOf(t, results, store.StatusRunning, resume.Process.Pid) == 1 })
	r := oltplab(t, env, "experiment", "resume", "1")
	if r.code == 0 || !strings.Contains(r.err, "experiment 1 is still running") || strings.Count(r.err, "\n") != 1 {
		t.Errorf("second resume: exit %d, stderr %q; want non-zero and one line saying it still runs", r.code, r.err)
	}

	if err := resume.Wait(); err != nil {
		t.Fatalf("the running resume failed after the refused one: %v\n%s", err, resume.Stdout)
	}
	st, err := store.OpenToRead(ctx, results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	profiles, err := st.ListProfiles(ctx, store.ProfileFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(profiles) != 1 || profiles[0].Status != store.StatusOK {
		t.Errorf("profiles: %+v, want the one profile stored ok", profiles)
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindRun})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		if run.Writer.PID == resume.Process.Pid && run.Status != store.StatusOK {
			t.Errorf("run %d of the resume: status %s, want ok", run.ID, run.Status)
		}
	}
	steps, err := st.ExperimentSteps(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[1].State != store.StepDone {
		t.Errorf("steps: %+v, want the profile done", steps)
	}
}

// runsOf counts the measured runs stored with status s, written by the
// process pid (any when 0). It reads the store without marking anything.
func runsOf(t *testing.T, path string, s store.Status, pid int) int {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	ctx := context.Background()
	st, err := store.OpenToRead(ctx, path)
	if err != nil {
		return 0 // being created
	}
	defer st.Close()
	runs, err := st.ListRuns(ctx, store.RunFilter{Kind: store.KindRun})
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range runs {
		if r.Status == s && (pid == 0 || r.Writer.PID == pid) {
			n++
		}
	}
	return n
}
