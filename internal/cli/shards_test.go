package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// shardProc is one `oltplab run --shard I/N` process of a test.
type shardProc struct {
	cmd  *exec.Cmd
	out  strings.Builder
	done chan error
}

// startShards starts n shard processes of one run on target, sharing the
// store in env, their ramp-up at startAt (zero: none given). Each is
// killed if the test ends first.
func startShards(t *testing.T, env []string, target string, n int, startAt time.Time, extra ...string) []*shardProc {
	t.Helper()
	var ps []*shardProc
	for i := range n {
		ps = append(ps, startShard(t, env, target, i, n, startAt, extra...))
	}
	return ps
}

// startShard starts shard i of n.
func startShard(t *testing.T, env []string, target string, i, n int, startAt time.Time, extra ...string) *shardProc {
	testenv.Require(t, testenv.Subprocess)
	t.Helper()
	// The shards' rendezvous and merge are what these tests check: a
	// stall of one shard's SQLite sessions under the suite's load (seen:
	// 2.2 s of a 3 s window, with the host's two cores busy elsewhere) is
	// judged by the server-failure tests, not here.
	args := []string{"run", "--target", target, "--shard", fmt.Sprintf("%d/%d", i, n), "--label", "shards",
		"--vus", fmt.Sprint(n), "--rampup", "1s", "--duration", "3s", "--grace", "1s", "--shard-wait", "1m", "--max-stall", "100"}
	if !startAt.IsZero() {
		args = append(args, "--start-at", startAt.UTC().Format(time.RFC3339Nano))
	}
	args = append(args, extra...)
	p := &shardProc{cmd: exec.Command(os.Args[0], args...), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), append(env, asCLIEnv+"=1")...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// exitOf waits for p and returns its exit code.
func exitOf(t *testing.T, p *shardProc) int {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(3 * time.Minute):
		t.Fatalf("shard did not end\n%s", p.out.String())
		return -1
	}
}

// mergedRun reads the newest profile labelled shards: the merged one,
// and its one run's result.
func mergedRun(t *testing.T, results string) (store.Profile, store.Run, summary.Run) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenToRead(ctx, results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.ProfileByLabelOrID(ctx, "shards")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{ProfileID: p.ID})
	if err != nil || len(runs) != 1 {
		t.Fatalf("merged profile %d: runs %v, %v; want one", p.ID, runs, err)
	}
	s, err := summary.DecodeRun(runs[0].Summary)
	if err != nil {
		t.Fatal(err)
	}
	if s.Shards == nil {
		t.Fatalf("profile %d (newest labelled shards) is not a merged one: params %s", p.ID, p.Params)
	}
	return p, runs[0], s
}

// sqliteShardTarget returns a fresh copy of the shard tests' database of
// four warehouses (a build is most of their time).
func sqliteShardTarget(t *testing.T) string {
	t.Helper()
	return "sqlite:" + shardDB.copyOf(t)
}

// testFourShards runs four shard processes of one run on target and
// checks the one merged profile they leave.
func testFourShards(t *testing.T, target string) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results.db")
	env := []string{"OLTPLAB_RESULTS=" + results, "HOME=" + dir}
	if strings.HasPrefix(target, "postgres") {
		if r := oltplab(t, env, "build", "--target", target, "--warehouses", "4"); r.code != 0 {
			t.Fatalf("build: exit %d", r.code)
		}
	}
	ps := startShards(t, env, target, 4, time.Now().Add(12*time.Second))
	for i, p := range ps {
		if code := exitOf(t, p); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s", i, code, p.out.String())
		}
	}
	t.Logf("shard 0:\n%s", ps[0].out.String())
	p, run, s := mergedRun(t, results)
	m := s.Shards
	if run.Status != store.StatusOK || len(m.Merged) != 4 || len(m.Missing) != 0 || !m.WithinTolerance || s.Partial {
		t.Fatalf("merged run %d: status %s, merged %v, missing %v, within tolerance %v (offsets %+v): want all four shards, complete",
			run.ID, run.Status, m.Merged, m.Missing, m.WithinTolerance, m.Shards)
	}
	if run.VUs != 4 {
		t.Errorf("merged run: %d virtual users, want the four shards' 4", run.VUs)
	}

	// NOPM is the database-wide figure shard 0 read, not a sum.
	ctx := context.Background()
	st, err := store.OpenToRead(ctx, results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []int64
	var shardNO int64
	for _, f := range m.Shards {
		ids = append(ids, f.RunID)
		shardNO += f.DBNewOrders
	}
	r0, err := st.GetRun(ctx, m.Shards[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	s0, err := summary.DecodeRun(r0.Summary)
	if err != nil {
		t.Fatal(err)
	}
	if s0.Group == nil || s0.Group.DBNewOrders <= 0 {
		t.Fatalf("shard 0 read no database-wide counters: %+v", s0.Group)
	}
	if s.DBNewOrders != s0.Group.DBNewOrders || s.NOPM != float64(s0.Group.DBNewOrders)/(s.Window.Seconds/60) {
		t.Errorf("merged NOPM %v (%d New-Orders): want the database's %d over the %.3f s window", s.NOPM, s.DBNewOrders, s0.Group.DBNewOrders, s.Window.Seconds)
	}
	if d := shardNO - s.DBNewOrders; d*20 > s.DBNewOrders || -d*20 > s.DBNewOrders {
		t.Errorf("the shards' own New-Orders add up to %d, more than 5%% off the database-wide %d", shardNO, s.DBNewOrders)
	}

	// Percentiles: what one histogram of every shard's samples gives.
	all, err := st.MergeHistograms(ctx, ids...)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := st.LoadHistograms(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for k := range tpcc.NumTxKinds {
		name := tpcc.TxKind(k).String()
		h, g := all[name], merged[name]
		if h == nil || g == nil || h.TotalCount() == 0 {
			t.Fatalf("%s: stored histograms %v (all) and %v (merged)", name, h, g)
		}
		for _, q := range []float64{1, 10, 25, 50, 75, 90, 95, 99, 99.9, 100} {
			if a, b := h.ValueAtQuantile(q), g.ValueAtQuantile(q); a != b {
				t.Errorf("%s p%g: merged %d, all samples %d", name, q, b, a)
			}
		}
		if got, want := s.Kinds[k].LatencyMicros.P99, h.ValueAtQuantile(99); got != want {
			t.Errorf("%s p99 in the merged result: %d, all samples %d", name, got, want)
		}
		if s.Kinds[k].Completed != h.TotalCount() {
			t.Errorf("%s: %d completed, %d samples", name, s.Kinds[k].Completed, h.TotalCount())
		}
	}

	// show, report and compare read the merged profile; the shards' stay.
	if r := oltplab(t, env, "results", "show", fmt.Sprint(run.ID)); r.code != 0 || !strings.Contains(r.out, "shards   4 of 4 merged") {
		t.Errorf("results show %d: exit %d, want the shards named", run.ID, r.code)
	}
	if r := oltplab(t, env, "report", "shards", "--format", "md"); r.code != 0 || !strings.Contains(r.out, "merged from 4 of 4 shards") {
		t.Errorf("report shards: exit %d, want the merged profile with its shards' note", r.code)
	}
	// Shard 0's own profile (by its id: a run id is not a profile id).
	if r := oltplab(t, env, "compare", "shards", fmt.Sprint(r0.ProfileID)); r.code == 0 && !strings.Contains(r.out, "merged from 4 of 4 shards") {
		t.Errorf("compare: want the merged profile's shards note")
	}
	var params struct {
		From []int64 `json:"merged_from_profiles"`
	}
	if err := json.Unmarshal(p.Params, &params); err != nil || len(params.From) != 4 {
		t.Fatalf("merged profile params %s: want the four shards' profiles", p.Params)
	}
	for i, id := range params.From {
		sp, err := st.GetProfile(ctx, id)
		if err != nil || sp.Status != store.StatusOK {
			t.Errorf("shard %d's profile %d: %v, %v; want it stored, ok", i, id, sp.Status, err)
		}
	}
}

// TestFourShardsMergeSQLite: four `oltplab run --shard i/4` processes on
// one SQLite database leave one merged profile.
func TestFourShardsMergeSQLite(t *testing.T) {
	testenv.Require(t, testenv.Long)
	testFourShards(t, sqliteShardTarget(t))
}

// TestFourShardsMergePostgres: the same on the test PostgreSQL server,
// whose database-wide counters include its own transaction counter.
func TestFourShardsMergePostgres(t *testing.T) {
	testFourShards(t, dbtest.RawURL(dbtest.Postgres(t)))
}

// TestShardRendezvous: shards started apart, without a start instant,
// meet in the results store and measure one window; a shard whose
// others never come gives up with exit 22 and one line.
func TestShardRendezvous(t *testing.T) {
	testenv.Require(t, testenv.Subprocess, testenv.Long)
	dir := t.TempDir()
	results := filepath.Join(dir, "results.db")
	env := []string{"OLTPLAB_RESULTS=" + results, "HOME=" + dir}
	target := sqliteShardTarget(t)
	first := startShard(t, env, target, 0, 2, time.Time{}, "--shard-group", "meet")
	// The second shard starts well after the first (it would have missed
	// a start fixed at the first one's launch).
	time.Sleep(4 * time.Second)
	second := startShard(t, env, target, 1, 2, time.Time{}, "--shard-group", "meet")
	if code := exitOf(t, second); code != 0 {
		t.Fatalf("shard 1: exit %d\n%s", code, second.out.String())
	}
	if code := exitOf(t, first); code != 0 {
		t.Fatalf("shard 0: exit %d\n%s", code, first.out.String())
	}
	_, run, s := mergedRun(t, results)
	if run.Status != store.StatusOK || len(s.Shards.Merged) != 2 || !s.Shards.WithinTolerance {
		t.Fatalf("merged run %d: status %s, merged %v, offsets %+v: want both shards in one window", run.ID, run.Status, s.Shards.Merged, s.Shards.Shards)
	}

	r := oltplab(t, env, "run", "--target", target, "--shard", "0/2", "--shard-group", "alone", "--rendezvous-timeout", "1s", "--label", "alone")
	if r.code != exitRendezvous || strings.Count(strings.TrimSpace(r.err), "\n") > 1 || !strings.Contains(r.err, "1 of 2 shards arrived") {
		t.Errorf("a shard alone at the rendezvous: exit %d, stderr %q; want %d and one line saying 1 of 2 arrived", r.code, r.err, exitRendezvous)
	}
}

// TestShardKilled: a shard killed (SIGKILL) inside the measured window
// makes the merged result partial, naming it; shard 0 exits 21.
func TestShardKilled(t *testing.T) {
	testenv.Require(t, testenv.Long, testenv.Subprocess)
	dir := t.TempDir()
	results := filepath.Join(dir, "results.db")
	env := []string{"OLTPLAB_RESULTS=" + results, "HOME=" + dir}
	target := sqliteShardTarget(t)
	startAt := time.Now().Add(8 * time.Second)
	ps := startShards(t, env, target, 2, startAt)
	// Kill shard 1 once its window has started (ramp-up 1 s, window 3 s).
	time.Sleep(time.Until(startAt.Add(2 * time.Second)))
	if err := syscall.Kill(ps[1].cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, ps[0]); code != exitShardMissed {
		t.Fatalf("shard 0: exit %d, want %d\n%s", code, exitShardMissed, ps[0].out.String())
	}
	if out := ps[0].out.String(); !strings.Contains(out, "shard 1/2 stored no result") {
		t.Errorf("shard 0 does not name the missing shard:\n%s", out)
	}
	_, run, s := mergedRun(t, results)
	if run.Status != store.StatusPartial || !s.Partial || len(s.Shards.Missing) != 1 || s.Shards.Missing[0].Index != 1 {
		t.Fatalf("merged run %d: status %s, partial %v, missing %+v: want partial without shard 1", run.ID, run.Status, s.Partial, s.Shards.Missing)
	}
	if why := s.Shards.Missing[0].Why; !strings.Contains(why, "its process ended") {
		t.Errorf("why shard 1 is missing: %q, want its process ended", why)
	}

	// Merged again by hand, the same: partial, shard 1 named.
	group := "shards@" + startAt.UTC().Format(time.RFC3339Nano)
	r := oltplab(t, env, "results", "merge", "--shard-group", group, "--shards", "2", "--label", "shards")
	if r.code != exitShardMissed || !strings.Contains(r.err, "shard 1/2 stored no result") {
		t.Errorf("results merge: exit %d, want %d naming shard 1/2", r.code, exitShardMissed)
	}
	_, again, _ := mergedRun(t, results)
	if again.ID == run.ID || again.Status != store.StatusPartial {
		t.Errorf("results merge stored run %d (%s): want a new partial merged run", again.ID, again.Status)
	}
}

// TestResultsPasswordFile: a PostgreSQL results store URL without a
// password takes it from OLTPLAB_RESULTS_PASSWORD_FILE (a mounted
// Secret, as the Kubernetes manifest passes it), and never prints it.
func TestResultsPasswordFile(t *testing.T) {
	tg := dbtest.Postgres(t)
	pw := dbtest.Password(tg)
	u, err := url.Parse(dbtest.RawURL(tg))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(u.User.Username())
	file := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"OLTPLAB_RESULTS=" + u.String(), "HOME=" + t.TempDir(), "PGPASSFILE=/nonexistent"}
	if r := oltplab(t, env, "results", "list"); r.code != exitStore {
		t.Errorf("without the password file: exit %d, want %d", r.code, exitStore)
	}
	r := oltplab(t, append(env, "OLTPLAB_RESULTS_PASSWORD_FILE="+file), "results", "list")
	if r.code != 0 {
		t.Errorf("with the password file: exit %d, want 0", r.code)
	}
	if strings.Contains(r.out+r.err, pw) {
		t.Errorf("the results store's password was printed")
	}
}
