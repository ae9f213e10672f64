package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// reachableDir is a directory the server's own user can reach when the
// tests run as root (t.TempDir's parents are private).
func reachableDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "oltplab-experiment-test-")
	if err == nil {
		err = os.Chmod(d, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// serversUsing lists the processes whose command line names dir: the
// servers (and their children) of managed instances on it.
func serversUsing(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte(dir)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestManagedInstances runs plans on a managed PostgreSQL started through
// internal/instance: a complete run records the instance in every result
// and the report; a build that fails after the server started, and an
// interrupted profile, leave no server running; the interrupted
// experiment resumes on the instance's existing data directory.
func TestManagedInstances(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	dir := reachableDir(t)
	st := openStore(t, t.TempDir())
	planOf := func(build, steps string) *plan.Plan {
		return decodeIn(t, t.TempDir(), `name: managed
warehouses: 1
build: {workers: 2`+build+`}
targets:
  - name: pg
    engine: postgres
    data_dir: `+filepath.Join(dir, "pg")+`
    memory: 32MB
    settings: {fsync: "off", full_page_writes: "off", synchronous_commit: "off"}
steps: `+steps+`
`)
	}
	const profile = "{profile: {vus: [1], repeat: 2, rampup: 200ms, duration: 1s, grace: 1s}}"
	noServer := func(when string) {
		t.Helper()
		if pids := serversUsing(t, dir); len(pids) > 0 {
			t.Errorf("%s: processes still use the instance's directory: %v", when, pids)
		}
	}
	ctx := context.Background()

	// A complete run.
	p := planOf(", drop: true", "[build, "+profile+"]")
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	// While a step runs, its server is seen (so that noServer can fail).
	seen := 0
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true, Observer: Observer{Unit: func(e UnitEvent) {
		if e.State == store.StepRunning {
			seen += len(serversUsing(t, dir))
		}
	}}}
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if seen == 0 {
		t.Errorf("no server process seen on the instance's directory while its steps ran")
	}
	noServer("after a complete run")
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun})
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs: got %d (%v), want 2", len(runs), err)
	}
	if !strings.Contains(string(runs[0].Context), `"instance":`) || !strings.Contains(string(runs[0].Context), `"shared_buffers"`) {
		t.Errorf("a run's context lacks the instance's description: %s", runs[0].Context)
	}
	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	if c := in.Experiment.Targets[0].Context; c["instance.spec.memory"] != "32MiB" {
		t.Errorf("report's target context: instance.spec.memory = %q, want 32MiB", c["instance.spec.memory"])
	}

	// A failure after the server started: the schema exists, drop is off.
	_, err = r.Run(ctx, planOf("", "[build]"))
	if !errors.Is(err, load.ErrSchemaExists) {
		t.Errorf("build over the existing schema: got %v, want ErrSchemaExists", err)
	}
	noServer("after a failed build")

	// An interrupted profile, then its resume on the same data directory.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.Observer.Scenario = scenario.Observer{RunStored: func(scenario.RunStored) { cancel() }}
	id, err = r.Run(cctx, planOf("", "["+profile+"]"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted profile: got %v, want context.Canceled", err)
	}
	noServer("after an interruption")
	// This process is the experiment's owner: hand it over as a new one would.
	e, _ := st.GetExperiment(ctx, id)
	if err := st.ClaimExperiment(ctx, id, e.Owner, ""); err != nil {
		t.Fatal(err)
	}
	r.Observer = Observer{}
	if err := r.Resume(ctx, id, nil); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	noServer("after the resume")
	counting, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun, Counting: true})
	if err != nil || len(counting) != 2 {
		t.Errorf("resumed profile: got %d counting runs (%v), want 2", len(counting), err)
	}
}
