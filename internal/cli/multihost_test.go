package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// netLab is two network namespaces standing for two hosts, db and lg,
// each linked to this (the runner's) namespace by a veth pair and to each
// other by a third: dbAddr and lgAddr are their addresses as the runner
// sees them, and lg reaches dbAddr over the direct link. Nothing is
// forwarded through the runner's namespace; no host setting changes.
type netLab struct {
	db, lg         string // namespace names
	dbAddr, lgAddr string
}

func ipCmd(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// netLabs counts the labs this test binary has made.
var netLabs atomic.Int64

// newNetLab makes the namespaces; they are deleted when the test ends,
// failed or not (the cleanup is registered before the first is made).
func newNetLab(t testing.TB) netLab {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command: the namespace tests need iproute2")
	}
	// Every lab has names and a subnet of its own: a namespace's
	// devices are destroyed asynchronously after `ip netns del`, so a
	// second lab in the same test binary must not reuse the first's.
	k := netLabs.Add(1)
	id := fmt.Sprintf("%x%x", os.Getpid()%0xffff, k%16)
	n := 1 + os.Getpid()%250
	lab := netLab{db: "oltplab-db-" + id, lg: "oltplab-lg-" + id}
	net := fmt.Sprintf("10.%d.%d.", 226+k%16, n)
	lab.dbAddr, lab.lgAddr = net+"2", net+"6"
	outers := []string{"o26d" + id, "o26l" + id}
	t.Cleanup(func() {
		for _, dev := range outers {
			_ = exec.Command("ip", "link", "del", dev).Run() // takes its peer along, synchronously
		}
		for _, ns := range []string{lab.db, lab.lg} {
			_ = exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	if out, err := exec.Command("ip", "netns", "add", lab.db).CombinedOutput(); err != nil {
		t.Skipf("network namespaces are not permitted here (%v: %s): the loopback tests cover the agents", err, out)
	}
	ipCmd(t, "netns", "add", lab.lg)
	for i, ns := range []string{lab.db, lab.lg} {
		outer := outers[i]
		ipCmd(t, "link", "add", outer, "type", "veth", "peer", "name", "up0", "netns", ns)
		ipCmd(t, "addr", "add", fmt.Sprintf("%s%d/30", net, 1+4*i), "dev", outer)
		ipCmd(t, "link", "set", outer, "up")
		ipCmd(t, "-n", ns, "addr", "add", fmt.Sprintf("%s%d/30", net, 2+4*i), "dev", "up0")
		ipCmd(t, "-n", ns, "link", "set", "up0", "up")
		ipCmd(t, "-n", ns, "link", "set", "lo", "up")
	}
	ipCmd(t, "-n", lab.db, "link", "add", "x0", "type", "veth", "peer", "name", "x0", "netns", lab.lg)
	ipCmd(t, "-n", lab.db, "addr", "add", net+"9/30", "dev", "x0")
	ipCmd(t, "-n", lab.db, "link", "set", "x0", "up")
	ipCmd(t, "-n", lab.lg, "addr", "add", net+"10/30", "dev", "x0")
	ipCmd(t, "-n", lab.lg, "link", "set", "x0", "up")
	ipCmd(t, "-n", lab.lg, "route", "add", lab.dbAddr+"/32", "dev", "x0", "src", net+"10")
	return lab
}

// nsAgent is an `oltplab agent` process in a namespace.
type nsAgent struct {
	mu          sync.Mutex
	log         strings.Builder // what it printed
	cmd         *exec.Cmd
	addr        string
	fingerprint string
	exited      chan error
}

// startAgent starts this test binary as `oltplab agent` in namespace ns,
// and waits for its fingerprint. It is killed when the test ends.
func startAgent(t testing.TB, ns string, args ...string) *nsAgent {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, os.Args[0], "agent"}, args...)...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &nsAgent{cmd: cmd, exited: make(chan error, 1)}
	t.Cleanup(func() { a.kill(t) })
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
			t.Logf("agent in %s: %s", ns, sc.Text())
			a.mu.Lock()
			a.log.WriteString(sc.Text() + "\n")
			a.mu.Unlock()
		}
		close(lines)
		a.exited <- cmd.Wait()
	}()
	deadline := time.After(time.Minute)
	for a.fingerprint == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the agent in %s ended before it printed its fingerprint", ns)
			}
			if m := regexp.MustCompile(`on (\S+) over TLS`).FindStringSubmatch(l); m != nil {
				a.addr = m[1]
			}
			if m := regexp.MustCompile(`fingerprint (sha256:[0-9a-f]{64})`).FindStringSubmatch(l); m != nil {
				a.fingerprint = m[1]
			}
		case <-deadline:
			t.Fatalf("the agent in %s printed no fingerprint within a minute", ns)
		}
	}
	return a
}

// printed is what the agent printed so far.
func (a *nsAgent) printed() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.log.String()
}

// kill ends the agent (SIGKILL) and waits for it.
func (a *nsAgent) kill(t testing.TB) {
	if a.cmd.ProcessState != nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		t.Errorf("agent %d did not end", a.cmd.Process.Pid)
	}
}

// nsPids are the processes in a namespace but the given ones.
func nsPids(t testing.TB, ns string, but ...int) []int {
	t.Helper()
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		t.Fatalf("ip netns pids %s: %v", ns, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		pid, _ := strconv.Atoi(f)
		skip := false
		for _, b := range but {
			skip = skip || pid == b
		}
		if !skip {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitEmpty waits until only the agent runs in its namespace.
func waitEmpty(t testing.TB, ns string, a *nsAgent, within time.Duration, when string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := nsPids(t, ns, a.cmd.Process.Pid)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var what []string
			for _, p := range left {
				c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
				what = append(what, fmt.Sprintf("%d %s", p, strings.ReplaceAll(string(c), "\x00", " ")))
			}
			t.Errorf("%s: still running in %s after %s: %v", when, ns, within, what)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const multihostToken = "namespace-test-token-0123456789"

// TestPlanAcrossNamespaces: two agents in network namespaces of their own
// stand for two hosts, db1 (a managed PostgreSQL) and lg1 (a load
// generator). The agents refuse plain HTTP, a wrong fingerprint, a
// missing or wrong token, and an agent off loopback without a token
// does not start. A plan builds the database on db1 from here and
// profiles it with the driver here, on lg1 and on db1 (load generator
// remote vs local); its runner is killed during lg1's run: the agents stop what
// it started once its lease lapses, and `experiment resume` finishes the
// plan; its report says where each step ran, with the round trips; and
// nothing is left running in either namespace.
func TestPlanAcrossNamespaces(t *testing.T) {
	testenv.Require(t, testenv.Root, testenv.ManagedPostgres, testenv.Subprocess, testenv.Fio)
	lab := newNetLab(t)
	dir := reachableDir(t)
	tf := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tf, []byte(multihostToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	common := []string{"--token-file", tf, "--lease", "3s"}
	dbState := filepath.Join(t.TempDir(), "db-state")
	db := startAgent(t, lab.db, append([]string{"--listen", lab.dbAddr + ":7300", "--state-dir", dbState, "--allow-dir", dir}, common...)...)
	lg := startAgent(t, lab.lg, append([]string{"--listen", lab.lgAddr + ":7300", "--state-dir", filepath.Join(t.TempDir(), "lg-state")}, common...)...)
	ctx := context.Background()

	// Refusals, across the namespaces' links.
	good := agent.Client{Addr: db.addr, Fingerprint: db.fingerprint, Token: multihostToken}
	if _, err := good.List(ctx); err != nil {
		t.Fatalf("the db agent with its fingerprint and token: %v", err)
	}
	if _, err := (agent.Client{Addr: db.addr, Fingerprint: lg.fingerprint, Token: multihostToken}).List(ctx); !errors.Is(err, agent.ErrTrust) {
		t.Errorf("the db agent pinned with the lg agent's fingerprint: %v, want %v", err, agent.ErrTrust)
	}
	if _, err := (agent.Client{Addr: db.addr, Token: multihostToken}).List(ctx); !errors.Is(err, agent.ErrTrust) {
		t.Errorf("an agent off loopback without a fingerprint: %v, want %v", err, agent.ErrTrust)
	}
	for _, tok := range []string{"", multihostToken + "x"} {
		var re *agent.RemoteError
		if _, err := (agent.Client{Addr: db.addr, Fingerprint: db.fingerprint, Token: tok}).List(ctx); !errors.As(err, &re) || !re.Unauthorized() {
			t.Errorf("a token of %d characters: %v, want refused", len(tok), err)
		}
	}
	if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + db.addr + "/v1/instances"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP answered: %s %s", resp.Status, b)
		}
	}
	noToken := exec.Command("ip", "netns", "exec", lab.db, os.Args[0], "agent", "--listen", lab.dbAddr+":7301", "--state-dir", filepath.Join(t.TempDir(), "s"))
	noToken.Env = append(os.Environ(), asCLIEnv+"=1")
	out, err := noToken.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "without a token") {
		t.Errorf("an agent off loopback without a token: %v %s, want exit %d refusing", err, out, exitUsage)
	}

	planText := func(build string) string {
		return `name: placement
warehouses: 1
build: {workers: 2` + build + `}
profile: {vus: [1], repeat: 2, rampup: 300ms, duration: 2s, grace: 1s}
hosts:
  db1: {agent: "` + db.addr + `", fingerprint: "` + db.fingerprint + `", token_file: ` + tf + `}
  lg1: {agent: "` + lg.addr + `", fingerprint: "` + lg.fingerprint + `", token_file: ` + tf + `}
targets:
  - name: pg
    host: db1
    engine: postgres
    data_dir: ` + filepath.Join(dir, "pg") + `
    memory: 64MB
    # synchronous_commit stays on: the test kills the server (with its
    # agent), and a commit it acknowledged must survive that.
    settings: {fsync: "off"}
steps:
  - build
  - profile
  - profile: {driver: {host: lg1}}
  - profile: {driver: {host: db1}}
  - storage: {profile: [oltp-4k-qd8], runtime: 1s, size: 8M}
  - backup: {to: ` + filepath.Join(dir, "backups") + `, cycles: 1}
  - rebuild
`
	}
	plan := writePlan(t, t.TempDir(), planText(""))
	work := t.TempDir()
	results := filepath.Join(work, "results.db")
	env := []string{"OLTPLAB_RESULTS=" + results, "HOME=" + work}

	// The runner, killed while the driver on lg1 measures.
	runner := exec.Command(os.Args[0], "experiment", "run", plan)
	runner.Env = append(os.Environ(), append(env, asCLIEnv+"=1")...)
	var rout strings.Builder
	runner.Stdout, runner.Stderr = &rout, &rout
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- runner.Wait() }()
	deadline := time.Now().Add(5 * time.Minute)
	for !runningOnLG(t, ctx, results) {
		select {
		case err := <-ended:
			t.Fatalf("the runner ended before lg1's run: %v\n%s", err, rout.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			runner.Process.Kill()
			t.Fatalf("lg1's run did not start in time\n%s", rout.String())
		}
	}
	if err := runner.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-ended
	t.Logf("runner killed during lg1's run; its output:\n%s", rout.String())
	// The lease (3 s) lapses; the agents stop the instance and the driver.
	waitEmpty(t, lab.db, db, 30*time.Second, "after the runner was killed")
	waitEmpty(t, lab.lg, lg, 30*time.Second, "after the runner was killed")
	// The driver on lg1 ended with its runner: every run it started was
	// answered (logged once it ended).
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		log := lg.printed()
		started, ended := strings.Count(log, "agent: driving"), strings.Count(log, "path=/v1/drive")
		if started > 0 && started == ended {
			break
		}
		if time.Now().After(end) {
			t.Errorf("lg1 started %d driver runs and ended %d, 30 s after their runner was killed", started, ended)
			break
		}
	}

	r := oltplab(t, env, "experiment", "resume", "1")
	if r.code != 0 {
		t.Fatalf("resume: exit %d", r.code)
	}
	waitEmpty(t, lab.db, db, 10*time.Second, "after the plan")
	waitEmpty(t, lab.lg, lg, 10*time.Second, "after the plan")

	st, err := store.Open(ctx, results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindRun, Counting: true})
	if err != nil {
		t.Fatal(err)
	}
	nopm := map[string][]float64{}
	for _, run := range runs {
		var rc scenario.RunContext
		if err := json.Unmarshal(run.Context, &rc); err != nil {
			t.Fatal(err)
		}
		h := rc.Placement.Hosts
		if h == nil || h.Database != "db1" || h.RTTMicros <= 0 && h.Driver != "db1" {
			t.Errorf("run %d: placement %+v: want the database on db1 and a round trip", run.ID, h)
			continue
		}
		if run.Status != store.StatusOK {
			t.Errorf("run %d (driver %s): %s %s", run.ID, h.Driver, run.Status, run.Error)
		}
		sum, err := summary.DecodeRun(run.Summary)
		if err != nil || sum.Result == nil {
			t.Errorf("run %d: summary: %v", run.ID, err)
			continue
		}
		nopm[h.Driver] = append(nopm[h.Driver], sum.Result.NOPM)
		t.Logf("run %d: %s, NOPM %.0f", run.ID, h, sum.Result.NOPM)
	}
	if len(nopm["here"]) != 2 || len(nopm["lg1"]) != 2 || len(nopm["db1"]) != 2 {
		t.Errorf("counting runs by driver host: %v, want 2 here, 2 on lg1 and 2 on db1 (beside the database)", nopm)
	}
	// The storage step: fio ran on db1, beside the instance's data.
	sruns, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindStorage, Counting: true})
	if err != nil || len(sruns) != 1 {
		t.Fatalf("storage runs: %d (%v), want 1", len(sruns), err)
	}
	var src scenario.RunContext
	if err := json.Unmarshal(sruns[0].Context, &src); err != nil {
		t.Fatal(err)
	}
	if h := src.Placement.Hosts; sruns[0].Status != store.StatusOK || h == nil || h.Database != "db1" || h.Driver != "db1" {
		t.Errorf("storage run: %s %s, placement %+v; want ok, fio on db1", sruns[0].Status, sruns[0].Error, h)
	}
	// The backup step: taken and restored on db1, the copy checked
	// across the link, both removed there after its cycle; the rebuild's
	// cold restart done by db1's agent.
	bruns, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindBackup, Counting: true})
	if err != nil || len(bruns) != 1 || bruns[0].Status != store.StatusOK {
		t.Errorf("backup runs: %d (%v), want 1 ok", len(bruns), err)
	} else if b, err := summary.DecodeBackup(bruns[0].Summary); err != nil || b.Stats.ChecksPassed != 1 {
		t.Errorf("backup: %+v (%v), want its restored copy checked", b.Stats, err)
	}
	if rruns, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindRebuild, Counting: true}); err != nil || len(rruns) != 1 || rruns[0].Status != store.StatusOK {
		t.Errorf("rebuild runs: %d (%v), want 1 ok", len(rruns), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "backups", "oltplab-backup-*")); len(left) != 0 {
		t.Errorf("backups left on db1: %v", left)
	}
	html := filepath.Join(work, "report.html")
	if r := oltplab(t, env, "report", "--experiment", "1", "-o", html); r.code != 0 {
		t.Fatalf("report: exit %d", r.code)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"database on db1 (agent " + db.addr + "), driver here", "driver on lg1 (agent " + lg.addr + ")", "round trip",
		"fio ran beside the data on the database&#39;s host"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report does not say %q", want)
		}
	}

	// The database's agent disappears (SIGKILL) while the driver here
	// measures: its server dies with it, the runner records the outage
	// and marks the step; the agent restarted (same state: same
	// fingerprint) lets `experiment resume` finish.
	runner = exec.Command(os.Args[0], "experiment", "run", writePlan(t, t.TempDir(), planText(", drop: true")))
	runner.Env = append(os.Environ(), append(env, asCLIEnv+"=1")...)
	rout.Reset()
	runner.Stdout, runner.Stderr = &rout, &rout
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { ended <- runner.Wait() }()
	for !runningAt(t, ctx, results, 2, 2) {
		select {
		case err := <-ended:
			t.Fatalf("the runner ended before step 2's run: %v\n%s", err, rout.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	db.kill(t)
	waitEmpty(t, lab.db, db, 10*time.Second, "after the database's agent was killed")
	select {
	case err := <-ended:
		if err == nil {
			t.Errorf("the runner succeeded though the database's agent disappeared")
		}
	case <-time.After(time.Minute):
		runner.Process.Signal(syscall.SIGQUIT)
		<-ended
		t.Fatalf("the runner did not end after the database's agent disappeared\n%s", rout.String())
	}
	t.Logf("runner after the database's agent disappeared:\n%s", rout.String())
	if !strings.Contains(rout.String(), "did not answer") {
		t.Errorf("the runner did not record the agent's outage")
	}
	waitEmpty(t, lab.lg, lg, 10*time.Second, "after the database's agent was killed")
	fp := db.fingerprint
	db = startAgent(t, lab.db, append([]string{"--listen", lab.dbAddr + ":7300", "--state-dir", dbState, "--allow-dir", dir}, common...)...)
	if db.fingerprint != fp {
		t.Fatalf("the restarted agent's fingerprint %s differs from %s: its state directory was not kept", db.fingerprint, fp)
	}
	if r := oltplab(t, env, "experiment", "resume", "2"); r.code != 0 {
		t.Fatalf("resume after the agent came back: exit %d", r.code)
	}
	waitEmpty(t, lab.db, db, 10*time.Second, "after the resumed plan")
	for _, a := range []*nsAgent{db, lg} {
		if strings.Contains(a.printed(), multihostToken) {
			t.Errorf("the token is in an agent's output")
		}
	}
	waitEmpty(t, lab.lg, lg, 10*time.Second, "after the resumed plan")
	steps, err := st.ExperimentSteps(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.State != store.StepDone {
			t.Errorf("experiment 2, step %d (%s): %s after the resume", s.Seq, s.Kind, s.State)
		}
	}
}

// runningAt reports whether a run of experiment exp's schedule entry seq
// is being measured.
func runningAt(t *testing.T, ctx context.Context, path string, exp int64, seq int) bool {
	t.Helper()
	st, err := store.Open(ctx, path)
	if err != nil {
		return false
	}
	defer st.Close()
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: exp, Kind: store.KindRun})
	if err != nil {
		return false
	}
	for _, r := range runs {
		if r.Status == store.StatusRunning && r.ExperimentSeq == seq {
			return true
		}
	}
	return false
}

// runningOnLG reports whether a run of the plan's third step (the driver
// on lg1) is being measured.
func runningOnLG(t *testing.T, ctx context.Context, path string) bool {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return false
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return false
	}
	defer st.Close()
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindRun})
	if err != nil {
		return false
	}
	for _, r := range runs {
		if r.Status == store.StatusRunning && r.ExperimentSeq == 3 {
			return true
		}
	}
	return false
}

// BenchmarkLoadGeneratorLocalVsRemote is the Kingston study's first
// measurement across namespaces: one PostgreSQL on db1, profiled with the
// driver beside it and with the driver on lg1, which reaches db1 only
// through a user-space proxy that holds every chunk 1 ms each way (a
// farther network than the veth pairs). It reports NOPM, New-Order p90
// and lg1's round trip per placement and virtual users (make
// bench-placement). What a plan across namespaces must do (both
// profiles stored, each run's placement and round trip recorded, nothing
// left running) is TestPlanAcrossNamespaces's to assert.
func BenchmarkLoadGeneratorLocalVsRemote(b *testing.B) {
	testenv.Require(b, testenv.Root, testenv.ManagedPostgres, testenv.Subprocess)
	lab := newNetLab(b)
	tf := filepath.Join(b.TempDir(), "token")
	if err := os.WriteFile(tf, []byte(multihostToken+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	common := []string{"--token-file", tf, "--lease", "3s"}
	dir := reachableDir(b)
	db := startAgent(b, lab.db, append([]string{"--listen", lab.dbAddr + ":7300", "--state-dir", filepath.Join(b.TempDir(), "db"), "--allow-dir", dir}, common...)...)
	lg := startAgent(b, lab.lg, append([]string{"--listen", lab.lgAddr + ":7300", "--state-dir", filepath.Join(b.TempDir(), "lg")}, common...)...)
	// The runner's side of lg1's link: lg1 reaches it directly.
	far := strings.TrimSuffix(lab.lgAddr, "6") + "5"
	proxy := startDelayProxy(b, far+":0", db.addr, time.Millisecond)
	type key struct {
		driver string
		vus    int
	}
	nopm, p90 := map[key][]float64{}, map[key][]float64{}
	var rtt []float64
	b.ResetTimer()
	for i := range b.N {
		data := filepath.Join(dir, fmt.Sprintf("pg%d", i))
		plan := writePlan(b, b.TempDir(), `name: local-vs-remote
warehouses: 1
build: {workers: 2}
profile: {vus: [1, 4], repeat: 2, rampup: 500ms, duration: 3s, grace: 1s}
hosts:
  db1: {agent: "`+proxy+`", fingerprint: "`+db.fingerprint+`", token_file: `+tf+`}
  lg1: {agent: "`+lg.addr+`", fingerprint: "`+lg.fingerprint+`", token_file: `+tf+`}
targets:
  - name: pg
    host: db1
    engine: postgres
    data_dir: `+data+`
    memory: 64MB
    settings: {fsync: "off"}
steps:
  - build
  - profile: {driver: {host: db1}}
  - profile: {driver: {host: lg1}}
`)
		work := b.TempDir()
		results := filepath.Join(work, "results.db")
		env := []string{"OLTPLAB_RESULTS=" + results, "HOME=" + work}
		if r := oltplab(b, env, "experiment", "run", plan); r.code != 0 {
			b.Fatalf("experiment run: exit %d", r.code)
		}
		waitEmpty(b, lab.db, db, 10*time.Second, "after the plan")
		waitEmpty(b, lab.lg, lg, 10*time.Second, "after the plan")
		st, err := store.Open(context.Background(), results)
		if err != nil {
			b.Fatal(err)
		}
		runs, err := st.ListRuns(context.Background(), store.RunFilter{ExperimentID: 1, Kind: store.KindRun, Counting: true})
		st.Close()
		if err != nil {
			b.Fatal(err)
		}
		for _, run := range runs {
			var rc scenario.RunContext
			if err := json.Unmarshal(run.Context, &rc); err != nil {
				b.Fatal(err)
			}
			sum, err := summary.DecodeRun(run.Summary)
			if err != nil || sum.Result == nil || rc.Placement.Hosts == nil {
				b.Fatalf("run %d: no result or placement (%v)", run.ID, err)
			}
			h := rc.Placement.Hosts
			k := key{h.Driver, run.VUs}
			nopm[k] = append(nopm[k], sum.Result.NOPM)
			p90[k] = append(p90[k], resultNewOrderP90(sum.Result))
			if h.Driver == "lg1" {
				rtt = append(rtt, float64(h.RTTMicros)/1000)
			}
			b.Logf("measured: driver on %s, %d VU(s): NOPM %.0f, New-Order p90 %.1f ms, round trip %.3f ms",
				h.Driver, run.VUs, sum.Result.NOPM, resultNewOrderP90(sum.Result), float64(h.RTTMicros)/1000)
		}
	}
	b.StopTimer()
	mean := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(max(1, len(xs)))
	}
	for k, xs := range nopm {
		where := map[string]string{"db1": "local", "lg1": "remote"}[k.driver]
		if where == "" {
			b.Fatalf("a run with its driver on %q, want db1 or lg1", k.driver)
		}
		b.ReportMetric(mean(xs), fmt.Sprintf("NOPM-%s-%dvu", where, k.vus))
		b.ReportMetric(mean(p90[k]), fmt.Sprintf("new-order-p90-ms-%s-%dvu", where, k.vus))
	}
	b.ReportMetric(mean(rtt), "rtt-ms-remote")
}

// resultNewOrderP90 is a result's New-Order p90 response time in ms.
func resultNewOrderP90(r *driver.Result) float64 {
	if int(tpcc.NewOrderTx) >= len(r.Kinds) {
		return 0
	}
	return float64(r.Kinds[tpcc.NewOrderTx].LatencyMicros.P90) / 1000
}
