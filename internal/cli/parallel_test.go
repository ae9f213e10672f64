package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// builtCopies copies a built SQLite warehouse (builtSQLite) to names:
// targets of one scale without building each.
func builtCopies(t *testing.T, env []string, dir string, names ...string) []string {
	t.Helper()
	_, src := builtSQLite(t)
	var out []string
	for _, n := range names {
		dst := filepath.Join(dir, n+".db")
		for _, suffix := range []string{"", "-wal", "-shm"} {
			b, err := os.ReadFile(src + suffix)
			if os.IsNotExist(err) && suffix != "" {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, "sqlite:"+dst)
	}
	return out
}

// TestParallelCommand: `oltplab parallel` refuses bad input with one line
// and its exit code, prints the plan it runs, and runs it as an
// experiment whose windows and targets' runs are stored.
func TestParallelCommand(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env := storeEnv(t)
	dir := t.TempDir()
	empty := "sqlite:" + filepath.Join(dir, "empty.db")
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"one target", []string{"parallel", "--on", empty}, exitUsage},
		{"no such instance", []string{"parallel", "--on", empty, "--on", "nosuchinstance"}, exitUsage},
		{"one name twice", []string{"parallel", "--on", "x=" + empty, "--on", "x=sqlite:other.db"}, exitUsage},
		{"no schema", []string{"parallel", "--on", empty, "--on", "sqlite:" + filepath.Join(dir, "empty2.db")}, exitSchema},
		{"bad duration", []string{"parallel", "--on", empty, "--on", empty, "--duration", "soon"}, exitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := oltplab(t, env, c.args...)
			if r.code != c.want {
				t.Errorf("exit code: got %d, want %d", r.code, c.want)
			}
			if lines := strings.Split(strings.TrimRight(r.err, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "oltplab: ") {
				t.Errorf("stderr: got %q, want one line", r.err)
			}
		})
	}

	targets := builtCopies(t, env, dir, "a", "b")
	args := []string{"parallel", "--on", "first=" + targets[0], "--on", targets[1], "--vus", "1",
		"--rampup", "300ms", "--duration", "2s", "--grace", "1s", "--skew-tolerance", "200ms"}
	r := oltplab(t, env, append(args, "--print-plan")...)
	if r.code != 0 || !strings.Contains(r.out, "skew_tolerance: 200ms") || !strings.Contains(r.out, "name: first") ||
		!strings.Contains(r.out, "name: t2") || !strings.Contains(r.out, "steps: [parallel]") {
		t.Fatalf("--print-plan: exit %d, plan:\n%s", r.code, r.out)
	}
	r = oltplab(t, env, args...)
	if r.code != 0 || !strings.Contains(r.out, "total NOPM") {
		t.Fatalf("parallel: exit %d, want 0 and the headline", r.code)
	}
	// The progress names the target of each line: both ran at once.
	for _, name := range []string{"first", "t2"} {
		if !regexp.MustCompile(`(?m)^\s+` + name + `: run \d+: 1 VU\(s\), NOPM`).MatchString(r.err) {
			t.Errorf("progress has no line of %s's run named so:\n%s", name, r.err)
		}
	}
	st, err := store.Open(context.Background(), strings.TrimPrefix(env[0], "OLTPLAB_RESULTS="))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	windows, err := st.ListRuns(context.Background(), store.RunFilter{Kind: store.KindParallel, ExperimentID: 1, Counting: true})
	if err != nil || len(windows) != 1 || windows[0].Status != store.StatusOK {
		t.Fatalf("windows: got %+v (%v), want one complete", windows, err)
	}
	runs, err := st.ListRuns(context.Background(), store.RunFilter{Kind: store.KindRun, ExperimentID: 1, Counting: true})
	if err != nil || len(runs) != 2 {
		t.Fatalf("targets' runs: got %d (%v), want 2", len(runs), err)
	}
	labels := runs[0].Label + " " + runs[1].Label
	if !strings.Contains(labels, "parallel/parallel/first") || !strings.Contains(labels, "parallel/parallel/t2") {
		t.Errorf("targets' runs are labelled %q, want each target's name", labels)
	}
	r = oltplab(t, env, "results", "list", "--kind", "parallel")
	if r.code != 0 || !strings.Contains(r.out, "total NOPM") || !strings.Contains(r.out, "over 2 target(s)") {
		t.Errorf("results list --kind parallel: exit %d, want the window's totals:\n%s", r.code, r.out)
	}
}
