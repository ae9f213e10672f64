package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestSignals: oltplab as its own process, sent SIGINT or SIGTERM twice
// (the second while it finishes after the first) in the middle of a
// run's measured window and of a build: it exits 130, the interrupted
// run is stored as partial with its counts, and the earlier run of the
// same profile stays ok. Every command oltplab runs in-process here; the
// managed servers' own signal tests are internal/instance's and
// TestInstanceForeground's.
func TestSignals(t *testing.T) {
	testenv.Require(t, testenv.Subprocess)
	_, src := builtSQLite(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("run/"+sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			results := filepath.Join(dir, "results.db")
			db := filepath.Join(dir, "tpcc.db")
			copyFile(t, src, db)
			cmd := cliCommand(t, dir, "run", "--target", "sqlite:"+db, "--vus", "1,2", "--rampup", "0s",
				"--duration", "8s", "--grace", "1s", "--results", results, "--label", "sig")
			// Signal once the second step's run is measuring.
			waitRunning(t, cmd, func() bool {
				return countRuns(t, results, store.StatusRunning) > 0 && countRuns(t, results, store.StatusOK) > 0
			})
			time.Sleep(time.Second) // into its window (rampup 0s), well before its end
			code := signalTwice(t, cmd, sig)
			if code != exitInterrupted {
				t.Fatalf("exit %d after %s twice, want %d\n%s", code, sig, exitInterrupted, cmd.Stderr)
			}
			if n := countRuns(t, results, store.StatusPartial); n != 1 {
				t.Errorf("%d partial runs stored, want the interrupted one (failed %d, abandoned %d)\n%s", n,
					countRuns(t, results, store.StatusFailed), countRuns(t, results, store.StatusAbandoned), cmd.Stdout)
			}
			if n := countRuns(t, results, store.StatusOK); n != 1 {
				t.Errorf("%d ok runs stored, want the first step's", n)
			}
			if n := countRuns(t, results, store.StatusRunning); n != 0 {
				t.Errorf("%d runs left running", n)
			}
		})
		t.Run("build/"+sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			results := filepath.Join(dir, "results.db")
			cmd := cliCommand(t, dir, "build", "--target", "sqlite:"+filepath.Join(dir, "big.db"), "--warehouses", "20", "--results", results)
			waitRunning(t, cmd, func() bool { return countRuns(t, results, store.StatusRunning) > 0 })
			if code := signalTwice(t, cmd, sig); code != exitInterrupted {
				t.Fatalf("exit %d after %s twice during a build, want %d\n%s", code, sig, exitInterrupted, cmd.Stderr)
			}
			if n := countRuns(t, results, store.StatusRunning); n != 0 {
				t.Errorf("%d builds left running", n)
			}
		})
	}
}

// cliCommand starts oltplab (this test binary as the command line) with
// args, its HOME in dir.
func cliCommand(t *testing.T, dir string, args ...string) *exec.Cmd {
	testenv.Require(t, testenv.Subprocess)
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "OLTPLAB_RESULTS=", asCLIEnv+"=1")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// waitRunning polls cond until it holds; the command ending first fails the
// test.
func waitRunning(t *testing.T, cmd *exec.Cmd, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil || time.Now().After(deadline) {
			t.Fatalf("the command ended or never got there: %v\n%s", err, cmd.Stdout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// signalTwice sends sig, then sig again while the command finishes, and
// returns its exit code.
func signalTwice(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) int {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	_ = cmd.Process.Signal(sig) // it may have finished already
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// countRuns counts the runs in the store at path with status s (0 while
// the store does not exist yet).
func countRuns(t *testing.T, path string, s store.Status) int {
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
	runs, err := st.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range runs {
		if r.Status == s && (r.Kind == store.KindRun || r.Kind == store.KindBuild) {
			n++
		}
	}
	return n
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
