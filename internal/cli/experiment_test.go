package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// writePlan writes a plan into dir and returns its path.
func writePlan(t testing.TB, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sqlitePlan is a small plan on one SQLite target: one warehouse, three
// runs of one virtual user.
const sqlitePlan = `name: kill-resume
warehouses: 1
build: {workers: 1}
profile:
  vus: [1]
  repeat: 3
  rampup: 500ms
  duration: 2s
  grace: 1s
targets:
  - name: file
    url: sqlite:tpcc.db
steps: [build, profile]
`

// TestExperimentKilledAndResumed: an experiment whose process is killed
// (SIGKILL) in the middle of its profile resumes, skips its build, keeps
// the complete run, measures the slots it lacked once each, and its report
// counts every slot exactly once; the killed run is superseded.
func TestExperimentKilledAndResumed(t *testing.T) {
	testenv.Require(t, testenv.Subprocess)
	dir := t.TempDir()
	plan := writePlan(t, dir, sqlitePlan)
	results := filepath.Join(dir, "results.db")
	env := []string{"OLTPLAB_RESULTS=" + results, "HOME=" + dir}

	cmd := exec.Command(os.Args[0], "experiment", "run", plan)
	cmd.Env = append(os.Environ(), append(env, asCLIEnv+"=1")...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Kill it once one run is stored and the next is measuring.
	ctx := context.Background()
	deadline := time.Now().Add(3 * time.Minute)
	var killedRun int64
	for killedRun == 0 {
		select {
		case err := <-exited:
			t.Fatalf("the experiment ended before it could be killed: %v\n%s", err, out.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no second run started in time\n%s", out.String())
		}
		killedRun = runningSecondRun(t, ctx, results)
	}
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	t.Logf("killed the experiment while run %d measured; its output:\n%s", killedRun, out.String())

	if r := oltplab(t, env, "experiment", "list"); r.code != 0 || !strings.Contains(r.out, "its process ended") {
		t.Errorf("experiment list after the kill: exit %d, want the experiment shown as stopped", r.code)
	}
	r := oltplab(t, env, "experiment", "resume", "1")
	if r.code != 0 {
		t.Fatalf("resume: exit %d", r.code)
	}
	if !strings.Contains(r.err, "[1/2] file: build: done before") {
		t.Errorf("resume did not skip the finished build")
	}

	st, err := store.Open(ctx, results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	steps, err := st.ExperimentSteps(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].Attempts != 1 || steps[1].Attempts != 2 || steps[1].State != store.StepDone {
		t.Errorf("steps: got %+v, want the build done once and the profile done on its second attempt", steps)
	}
	builds, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindBuild, Counting: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(builds) != 1 {
		t.Errorf("builds: got %d counting, want 1", len(builds))
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindRun, Counting: true})
	if err != nil {
		t.Fatal(err)
	}
	slots := map[int]int{}
	for _, run := range runs {
		slots[run.Repeat]++
		if run.Status != store.StatusOK || run.ID == killedRun {
			t.Errorf("counting run %d: status %s; the killed run was %d", run.ID, run.Status, killedRun)
		}
	}
	if len(runs) != 3 || len(slots) != 3 {
		t.Errorf("got %d counting runs over repeats %v, want repeats 1, 2 and 3 once each", len(runs), slots)
	}
	killed, err := st.GetRun(ctx, killedRun)
	if err != nil {
		t.Fatal(err)
	}
	// Its process is gone: the store marks it abandoned on open (or the
	// resume finishes it as failed); either way it no longer counts.
	if killed.Superseded == "" || (killed.Status != store.StatusAbandoned && killed.Status != store.StatusFailed) {
		t.Errorf("killed run: status %s, superseded %q; want abandoned (or failed) and superseded", killed.Status, killed.Superseded)
	}

	rep := oltplab(t, env, "report", "--experiment", "1", "--format", "md")
	if rep.code != 0 {
		t.Fatalf("report: exit %d", rep.code)
	}
	// The profile's row: target file, its mode, 3 repeats at its one step, 0 partial.
	if !regexp.MustCompile(`\| 1 \| file \| sqlite:\S+tpcc\.db \| sqlite \| tproc-c \(no keying or think time\) \| 1 \| 3 \| 0 \|`).MatchString(rep.out) {
		t.Errorf("report does not count 3 complete repeats of one step:\n%s", rep.out)
	}
	if !strings.Contains(rep.out, "| 2 | file | profile | done | 2 |") {
		t.Errorf("report's schedule does not show the profile done on its second attempt")
	}
}

// runningSecondRun returns the id of a run that is measuring while an
// earlier run of the same experiment is stored complete, 0 when there is
// none yet.
func runningSecondRun(t *testing.T, ctx context.Context, path string) int64 {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return 0 // being created
	}
	defer st.Close()
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindRun})
	if err != nil {
		t.Fatal(err)
	}
	ok, running := 0, int64(0)
	for _, r := range runs {
		switch r.Status {
		case store.StatusOK:
			ok++
		case store.StatusRunning:
			running = r.ID
		}
	}
	if ok >= 1 {
		return running
	}
	return 0
}

// TestExperimentPlanSettingsRefused: a plan's instance settings that
// would open a managed server, in any spelling its server accepts, are
// refused by --dry-run with one line naming the plan and the setting.
func TestExperimentPlanSettingsRefused(t *testing.T) {
	env := storeEnv(t)
	for _, c := range []struct{ engine, setting, canonical string }{
		{"postgres", `listen-addresses: "*"`, "listen_addresses"},
		{"postgres", `Hba_File: /tmp/trust_hba.conf`, "hba_file"},
		{"postgres", `include: /tmp/more.conf`, "include"},
		{"postgres", `ssl_key_file: /etc/shadow`, "ssl_key_file"},
		{"mariadb", `bind: 0.0.0.0`, "bind-address"},
		{"mariadb", `skip_grant_tables: "1"`, "skip-grant-tables"},
		{"mariadb", `enable-skip-grant: ""`, "skip-grant-tables"},
		{"mariadb", `loose-port: "3306"`, "port"},
		{"mariadb", `plugin_load_add: evil.so`, "plugin-load-add"},
	} {
		t.Run(c.engine+"/"+c.setting, func(t *testing.T) {
			dir := t.TempDir()
			plan := writePlan(t, dir, "name: t\nwarehouses: 1\nsteps: [build]\ntargets:\n  - name: a\n"+
				"    engine: "+c.engine+"\n    data_dir: "+dir+"/data\n    settings:\n      "+c.setting+"\n")
			r := oltplab(t, env, "experiment", "run", plan, "--dry-run")
			if r.code != exitUsage {
				t.Errorf("exit code: got %d, want %d", r.code, exitUsage)
			}
			name, _, _ := strings.Cut(c.setting, ":")
			lines := strings.Split(strings.TrimRight(r.err, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "oltplab: "+plan+":") ||
				!strings.Contains(lines[0], "setting "+name) || !strings.Contains(lines[0], c.canonical) {
				t.Errorf("stderr: got %q, want one line naming the plan, %s and %s", r.err, name, c.canonical)
			}
			if _, err := os.Stat(dir + "/data"); !os.IsNotExist(err) {
				t.Errorf("data directory: %v, want it never created", err)
			}
		})
	}
}

// TestExperimentBadPlans: every mistake in a plan, and every host problem
// --dry-run finds, is one line naming the plan's line, with its own exit
// code.
func TestExperimentBadPlans(t *testing.T) {
	dir := t.TempDir()
	env := storeEnv(t)
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	base := "name: t\nwarehouses: 1\nsteps: [build]\ntargets:\n  - name: a\n"
	cases := []struct {
		name, plan string
		want       int
		line       string // "plan.yaml:N:"
	}{
		{"unknown field", base + "    url: sqlite:a.db\n    cpu: 1\n", exitUsage, ":7:"},
		{"wrong type", base + "    url: sqlite:a.db\n" + "build: {workers: many}\n", exitUsage, ":7:"},
		{"syntax", base + "    url: [sqlite:a.db\n", exitUsage, ":"},
		{"unwritable directory", base + "    url: sqlite:" + filepath.Join(notDir, "a.db") + "\n", exitDirectory, ":5:"},
		{"no space", strings.Replace(base, "warehouses: 1", "warehouses: 100000", 1) + "    url: sqlite:a.db\n", exitNoSpace, ":5:"},
		{"too many warehouses", strings.Replace(base, "warehouses: 1", "warehouses: 90000000", 1) + "    url: sqlite:a.db\n", exitUsage, ":2:"},
		{"unreachable server", base + fmt.Sprintf("    url: postgres://bench:s3cret@127.0.0.1:%d/tpcc\n", closedPort(t)), exitConnect, ":5:"},
		{"missing binary", base + "    engine: postgres\n    data_dir: " + dir + "/pg\n    bin_dir: " + dir + "/no-bin\n", exitBinary, ":5:"},
		{"unwritable instance directory", base + "    engine: postgres\n    data_dir: " + notDir + "/pg\n", exitDirectory, ":5:"},
		{"cpus beyond the host", base + "    engine: postgres\n    data_dir: " + dir + "/pg\n    cpus: 0-4095\n", exitCPUs, ":5:"},
		{"io_limit without a device", base + "    engine: postgres\n    data_dir: /dev/shm/oltplab-no-device\n    io_limit: {write_iops: 100}\n", exitNoDevice, ":5:"},
		{"bad instance value", base + "    engine: postgres\n    data_dir: " + dir + "/pg\n    memory: lots\n", exitUsage, ":8:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := writePlan(t, t.TempDir(), c.plan)
			r := oltplab(t, env, "experiment", "run", plan, "--dry-run")
			if r.code != c.want {
				t.Errorf("exit code: got %d, want %d", r.code, c.want)
			}
			lines := strings.Split(strings.TrimRight(r.err, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "oltplab: "+plan+c.line) {
				t.Errorf("stderr: got %q, want one line starting with oltplab: %s%s", r.err, plan, c.line)
			}
			if strings.Contains(r.out+r.err, "s3cret") {
				t.Errorf("output holds the password")
			}
		})
	}
	if r := oltplab(t, env, "experiment", "run", filepath.Join(dir, "missing.yaml")); r.code != exitUsage {
		t.Errorf("missing plan file: exit %d, want %d", r.code, exitUsage)
	}
	if r := oltplab(t, env, "experiment", "resume", "99"); r.code != exitUsage {
		t.Errorf("resume of no experiment: exit %d, want %d", r.code, exitUsage)
	}
	if r := oltplab(t, env, "report", "--experiment", "99"); r.code != exitUsage {
		t.Errorf("report of no experiment: exit %d, want %d", r.code, exitUsage)
	}
}

// TestResumeNeedsThePasswordTheStoreDoesNotKeep: an experiment whose
// target's url held a password (its stored plan holds the redaction mark
// instead) is not resumed from the store with a wrong password: resume
// says to give --plan or a password_file (exit 2, before connecting);
// with --plan it goes on with the password.
func TestResumeNeedsThePasswordTheStoreDoesNotKeep(t *testing.T) {
	testenv.Require(t, testenv.Subprocess)
	tg := dbtest.Postgres(t) // empty: the profile fails, the experiment can be resumed
	dir := t.TempDir()
	plan := writePlan(t, dir, fmt.Sprintf(`name: pw
warehouses: 1
profile: {vus: [1], rampup: 0s, duration: 1s, grace: 0s}
targets:
  - name: pg
    url: %s
steps: [profile]
`, dbtest.RawURL(tg)))
	env := []string{"OLTPLAB_RESULTS=" + filepath.Join(dir, "results.db"), "HOME=" + dir}
	// Another process, as a user's first attempt would be: the experiment
	// belongs to it, which has ended when resume comes.
	cmd := exec.Command(os.Args[0], "experiment", "run", plan)
	cmd.Env = append(os.Environ(), append(env, asCLIEnv+"=1")...)
	if out, err := cmd.CombinedOutput(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != exitSchema {
		t.Fatalf("run on an empty database: %v, want exit %d\n%s", err, exitSchema, out)
	}
	r := oltplab(t, env, "experiment", "resume", "1")
	if r.code != exitUsage || !strings.Contains(r.err, "--plan") || !strings.Contains(r.err, "password_file") || strings.Count(r.err, "\n") != 1 {
		t.Errorf("resume from the stored plan: exit %d, %q; want exit %d naming --plan and password_file", r.code, r.err, exitUsage)
	}
	if r := oltplab(t, env, "experiment", "resume", "1", "--plan", plan); r.code != exitSchema {
		t.Errorf("resume --plan: exit %d, want %d (the schema is still missing: it connected)", r.code, exitSchema)
	}
}
