package experiment

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/oltplab/oltplab/internal/testenv"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// killAfter is a driver.Recorder that calls kill once, the first time
// the run has completed n transactions inside its measured window: a
// fault placed by what the run did, not by a clock.
type killAfter struct {
	n    int64
	seen atomic.Int64
	once sync.Once
	kill func()
}

func (k *killAfter) Phase(driver.Phase, int) {}

func (k *killAfter) Transaction(t driver.Transaction) {
	if t.Measured && t.Outcome == driver.OutcomeCommitted && k.seen.Add(1) == k.n {
		k.once.Do(func() { go k.kill() })
	}
}

// TestManagedServerKilledIsRetried: the managed server killed (SIGKILL to
// its main process) inside a run's measured window fails that run
// (status failed, the exit named); the profile step restarts the
// instance and measures the slot again (retries, 1 by default on a
// managed instance), the failed run kept on record, superseded, and
// the experiment ends ok on the new run.
func TestManagedServerKilledIsRetried(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	dir := reachableDir(t)
	st := openStore(t, t.TempDir())
	p := decodeIn(t, t.TempDir(), `name: killed
warehouses: 1
build: {workers: 2, drop: true}
targets:
  - name: pg
    engine: postgres
    data_dir: `+filepath.Join(dir, "pg")+`
    memory: 32MB
    settings: {fsync: "off", full_page_writes: "off", synchronous_commit: "off"}
steps: [build, {profile: {vus: [1], repeat: 1, rampup: 0s, duration: 4s, grace: 1s}}]
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	var killErr error
	killed := make(chan struct{})
	k := &killAfter{n: 10, kill: func() {
		defer close(killed)
		pids := serversUsing(t, filepath.Join(dir, "pg"))
		if len(pids) == 0 {
			killErr = errFound("no server process on the instance's directory")
			return
		}
		for _, pid := range pids {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				killErr = err
			}
		}
	}}
	var notes []string
	var mu sync.Mutex
	r := &Runner{Store: st, ToolVersion: "test", Observer: Observer{Scenario: scenario.Observer{
		Recorder: k,
		Note: func(s string) {
			mu.Lock()
			notes = append(notes, s)
			mu.Unlock()
		},
	}}}
	id, err := r.Run(ctx, p)
	select {
	case <-killed:
	default:
		t.Fatalf("the server was never killed: fewer than %d transactions in the first window", k.n)
	}
	if killErr != nil {
		t.Fatalf("kill the managed server: %v", killErr)
	}
	if err != nil {
		t.Fatalf("Run: %v, want the killed run measured again and the experiment ok", err)
	}
	if pids := serversUsing(t, dir); len(pids) > 0 {
		t.Errorf("processes still use the instance's directory: %v", pids)
	}
	all, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun})
	if err != nil || len(all) != 2 {
		t.Fatalf("runs: %d (%v), want the failed one and its retry", len(all), err)
	}
	counting, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun, Counting: true})
	if err != nil || len(counting) != 1 || counting[0].Status != store.StatusOK {
		t.Fatalf("counting runs: %+v (%v), want the retry, ok", counting, err)
	}
	var failed store.Run
	for _, run := range all {
		if run.ID != counting[0].ID {
			failed = run
		}
	}
	if failed.Status != store.StatusFailed {
		t.Errorf("the killed run's status %s, want failed", failed.Status)
	}
	s, err := summary.DecodeRun(failed.Summary)
	if err != nil || !strings.Contains(s.ServerFailureText(), "managed server's process exited") {
		t.Errorf("the killed run's server failure %q (%v): want the exit named", s.ServerFailure, err)
	}
	mu.Lock()
	said := strings.Join(notes, "\n")
	mu.Unlock()
	if !strings.Contains(said, "measuring it again (retry 1 of 1)") {
		t.Errorf("notes %q: want the retry said", said)
	}
	e, err := st.GetExperiment(ctx, id)
	if err != nil || e.Status != store.StatusOK {
		t.Errorf("experiment status %v (%v), want ok", e.Status, err)
	}
}

type errFound string

func (e errFound) Error() string { return string(e) }

// TestCPUHogContaminatesCores: one core against two, the same managed
// PostgreSQL confined by a cpuset, while two busy loops of the host's
// own (not the database's, not oltplab's) spin on CPU 0, the one-core
// server's only CPU. Every run of the one-core target is contaminated
// (foreign CPU on its CPUs far above 10%), re-measured once (remeasure)
// and contaminated again; the experiment ends contaminated, the report
// says so and gives no one-core figure or ratio: never a silent
// verdict from runs that measured the busy loops.
func TestCPUHogContaminatesCores(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	defer scenario.JudgeInterference(true)()
	dir := reachableDir(t)
	st := openStore(t, t.TempDir())
	target := func(name, cpus string) string {
		return `  - name: ` + name + `
    engine: postgres
    data_dir: ` + filepath.Join(dir, name) + `
    memory: 64MB
    cpus: "` + cpus + `"
    settings: {fsync: "off", full_page_writes: "off", synchronous_commit: "off"}
`
	}
	p := decodeIn(t, t.TempDir(), `name: cores-hogged
warehouses: 1
build: {workers: 1, drop: true}
baseline: two-cores
targets:
`+target("one-core", "0")+target("two-cores", "0-1")+`steps: [build, {profile: {vus: [2], repeat: 1, rampup: 0s, duration: 3s, grace: 1s}}]
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	// The busy loops, pinned to CPU 0; stopped when the test ends.
	for range 2 {
		hog := exec.Command("taskset", "-c", "0", "sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatalf("start a busy loop on CPU 0: %v", err)
		}
		t.Cleanup(func() {
			_ = hog.Process.Kill()
			_ = hog.Wait()
		})
	}

	r := &Runner{Store: st, ToolVersion: "test"}
	id, err := r.Run(ctx, p)
	if !OnlyContaminated(err) {
		t.Fatalf("Run with busy loops on CPU 0: %v, want contaminated runs and nothing else", err)
	}
	e, gerr := st.GetExperiment(ctx, id)
	if gerr != nil || e.Status != store.StatusContaminated {
		t.Errorf("experiment status %v (%v), want contaminated", e.Status, gerr)
	}
	runs, lerr := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun})
	if lerr != nil {
		t.Fatal(lerr)
	}
	oneCore := 0
	for _, run := range runs {
		s, err := summary.DecodeRun(run.Summary)
		if err != nil {
			t.Fatal(err)
		}
		prof, err := st.GetProfile(ctx, run.ProfileID)
		if err != nil {
			t.Fatal(err)
		}
		if prof.Label != "cores-hogged/one-core" {
			continue
		}
		oneCore++
		t.Logf("one-core run %d: %s %q", run.ID, run.Status, s.Contaminated)
		if run.Status != store.StatusContaminated || len(s.Contaminated) == 0 {
			t.Errorf("one-core run %d: status %s, contaminated %q; want contaminated with the figures", run.ID, run.Status, s.Contaminated)
		}
	}
	// Measured, then measured again once (remeasure 1).
	if oneCore != 2 {
		t.Errorf("one-core runs: %d, want 2 (the first, and its re-measure)", oneCore)
	}

	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	var md bytes.Buffer
	if err := report.Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	text := md.String()
	if !strings.Contains(text, "CONTAMINATED: one-core at 2 VUs has no run that counts") {
		t.Errorf("report: want the one-core step named contaminated, without a counted run:\n%s", text)
	}
}

// TestPairedServerKilledIsRetried: the same fault in a paired profile
// step (interleave: targets). The managed baseline's server killed in the
// first pair's first run ends the pass; the step restarts it and measures
// the whole pair again, side by side: the other target's run of that
// pair, measured fine, is superseded too, so that no pair mixes a run from
// before the restart with one after it. The experiment ends ok.
func TestPairedServerKilledIsRetried(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	dir := reachableDir(t)
	st := openStore(t, t.TempDir())
	p := decodeIn(t, t.TempDir(), `name: killed-pair
warehouses: 1
build: {workers: 2, drop: true}
baseline: pg
targets:
  - name: pg
    engine: postgres
    data_dir: `+filepath.Join(dir, "pg")+`
    memory: 32MB
    settings: {fsync: "off", full_page_writes: "off", synchronous_commit: "off"}
  - {name: lite, url: "sqlite:lite.db"}
steps: [build, {profile: {vus: [1], repeat: 2, rampup: 0s, duration: 3s, grace: 1s, interleave: targets}}]
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	killed := make(chan struct{})
	var killErr error
	k := &killAfter{n: 10, kill: func() {
		defer close(killed)
		for _, pid := range serversUsing(t, filepath.Join(dir, "pg")) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				killErr = err
			}
		}
	}}
	var notes []string
	var mu sync.Mutex
	r := &Runner{Store: st, ToolVersion: "test", Observer: Observer{Scenario: scenario.Observer{
		Recorder: k,
		Note: func(s string) {
			mu.Lock()
			notes = append(notes, s)
			mu.Unlock()
		},
	}}}
	id, err := r.Run(ctx, p)
	select {
	case <-killed:
	default:
		t.Fatalf("the server was never killed")
	}
	if killErr != nil {
		t.Fatalf("kill the managed server: %v", killErr)
	}
	if err != nil {
		t.Fatalf("Run: %v, want the killed pair measured again and the experiment ok", err)
	}
	all, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun})
	if err != nil {
		t.Fatal(err)
	}
	counting, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun, Counting: true})
	if err != nil {
		t.Fatal(err)
	}
	// Two rounds of one pair each count; the killed run stays on record,
	// and so does its partner's if it was measured before the kill ended
	// the pass (the baseline runs first in the first round: it was not).
	if len(counting) != 4 {
		t.Fatalf("counting runs: %d, want 4 (2 pairs)", len(counting))
	}
	failed := 0
	for _, run := range all {
		if run.Status == store.StatusFailed {
			failed++
		}
	}
	if failed != 1 || len(all) < 5 {
		t.Errorf("runs: %d, %d failed; want the killed run kept on record besides the 4 that count", len(all), failed)
	}
	mu.Lock()
	said := strings.Join(notes, "\n")
	mu.Unlock()
	if !strings.Contains(said, "restarting pg and measuring its pair again (retry 1 of 1)") {
		t.Errorf("notes %q: want the retry said", said)
	}
	e, err := st.GetExperiment(ctx, id)
	if err != nil || e.Status != store.StatusOK {
		t.Errorf("experiment status %v (%v), want ok", e.Status, err)
	}
}
