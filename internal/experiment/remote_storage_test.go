package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// fioUsing lists the fio processes whose command line names dir.
func fioUsing(t *testing.T, dir string) []int {
	t.Helper()
	var out []int
	for _, pid := range serversUsing(t, dir) {
		comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if err == nil && strings.TrimSpace(string(comm)) == "fio" {
			out = append(out, pid)
		}
	}
	return out
}

// testFiles lists fio's test files in dir.
func testFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "oltplab-fio-*.dat"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRemoteStorageLoopback: a storage step on a managed PostgreSQL that
// an agent on loopback (db1) runs: fio runs on the agent, beside the
// instance's data; the runner stores its results with the placement (the
// database and fio on db1) and db1's host figures from its agent; the
// report shows them. An fio option that could run a command or write
// elsewhere is refused by the agent, which creates nothing. A runner that
// goes away while fio runs leaves no fio running and no test file.
func TestRemoteStorageLoopback(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres, testenv.Fio)
	const tok = "loopback-test-token-0123456789"
	dir := reachableDir(t)
	db1, dbAddr, dbFP := testAgent(t, tok, dir)
	tf := tokenFile(t, tok)
	dataDir := filepath.Join(dir, "pg")
	iolog := filepath.Join(t.TempDir(), "iolog")
	planOf := func(steps string) *plan.Plan {
		p := decodeIn(t, t.TempDir(), `name: remote-storage
warehouses: 1
hosts:
  db1: {agent: "`+dbAddr+`", fingerprint: "`+dbFP+`", token_file: `+tf+`}
targets:
  - name: pg
    host: db1
    engine: postgres
    data_dir: `+dataDir+`
    memory: 32MB
steps:
`+steps)
		if err := plan.Validate(context.Background(), p); err != nil {
			t.Fatalf("Validate: %v", err)
		}
		return p
	}
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true}
	id, err := r.Run(ctx, planOf(`  - storage: {profile: [oltp-4k-qd8, seq-write-128k], runtime: 1s, size: 8M}
  - storage: {profile: [oltp-4k-qd8], runtime: 1s, size: 8M, fio_options: [write_iolog=`+iolog+`]}
`))
	if err == nil || !strings.Contains(err.Error(), "only the options that shape the I/O") {
		t.Errorf("Run: %v, want the second step's write_iolog refused by the agent", err)
	}
	if _, err := os.Stat(iolog); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused option's file %s: %v, want none", iolog, err)
	}
	if n := db1.Running(); n != 0 {
		t.Errorf("after the plan db1 holds %d instances, want none", n)
	}
	if fs := testFiles(t, dataDir); len(fs) != 0 {
		t.Errorf("test files left in the data directory: %v", fs)
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindStorage})
	if err != nil || len(runs) != 1 {
		t.Fatalf("storage runs: got %d (%v), want 1", len(runs), err)
	}
	run := runs[0]
	if run.Status != store.StatusOK {
		t.Fatalf("storage run: status %s %s", run.Status, run.Error)
	}
	var rc scenario.RunContext
	if err := json.Unmarshal(run.Context, &rc); err != nil {
		t.Fatal(err)
	}
	if h := rc.Placement.Hosts; h == nil || h.Database != "db1" || h.Driver != "db1" || h.DatabaseAgent != dbAddr || rc.Placement.Local {
		t.Errorf("placement %+v (hosts %+v), want the database and fio on db1 at %s", rc.Placement, rc.Placement.Hosts, dbAddr)
	}
	var sum summary.Storage
	if err := json.Unmarshal(run.Summary, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Dir != dataDir || len(sum.Profiles) != 2 {
		t.Fatalf("summary: dir %s, %d profiles; want %s, 2", sum.Dir, len(sum.Profiles), dataDir)
	}
	for _, p := range sum.Profiles {
		if len(p.Directions) == 0 || p.Directions[0].IOPS <= 0 {
			t.Errorf("profile %s: %+v, want IOPS measured", p.Profile, p.Directions)
		}
	}
	if !sum.Monitor.DatabaseHostMeasured || sum.Monitor.DatabaseHost == nil || sum.Monitor.Agent != dbAddr {
		t.Errorf("monitor: database host measured %v by %q, want db1's agent %s", sum.Monitor.DatabaseHostMeasured, sum.Monitor.Agent, dbAddr)
	}
	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	js, _ := json.Marshal(in)
	if !bytes.Contains(js, []byte("oltp-4k-qd8")) || !bytes.Contains(js, []byte("fio ran beside the data")) {
		t.Errorf("the report does not show the remote storage results and where fio ran")
	}

	// The runner goes away while fio runs: fio stops on the agent, the
	// test file goes.
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for ictx.Err() == nil {
			if len(fioUsing(t, dataDir)) > 0 {
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	_, err = r.Run(ictx, planOf("  - storage: {profile: [oltp-4k-qd8], runtime: 30s, size: 8M}\n"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted run: %v, want it cancelled", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(fioUsing(t, dataDir))+len(testFiles(t, dataDir))+db1.Running() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if ps, fs, n := fioUsing(t, dataDir), testFiles(t, dataDir), db1.Running(); len(ps)+len(fs)+n > 0 {
		t.Errorf("after the runner went away: fio %v, test files %v, %d instances; want none", ps, fs, n)
	}
}

// TestRemoteBackupLoopback: a backup step on a managed PostgreSQL that an
// agent on loopback (db1) runs: the engine's tools take each cycle's
// backup on db1 into a directory below the agent's root and restore it
// there into a new instance of the agent, which the runner checks
// through its tunnel; the runner stores the cycles with the placement;
// the agent removes each backup and restored copy after its cycle and
// holds nothing once the plan ends. The agent restores only a backup it
// took, into a new directory below its roots, through no link.
func TestRemoteBackupLoopback(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	const tok = "loopback-test-token-0123456789"
	dir := reachableDir(t)
	db1, dbAddr, dbFP := testAgent(t, tok, dir)
	tf := tokenFile(t, tok)
	to := filepath.Join(dir, "backups")
	restoreDir := filepath.Join(dir, "restores")
	var restoredRunning int
	p := decodeIn(t, t.TempDir(), `name: remote-backup
warehouses: 1
build: {workers: 2}
hosts:
  db1: {agent: "`+dbAddr+`", fingerprint: "`+dbFP+`", token_file: `+tf+`}
targets:
  - name: pg
    host: db1
    engine: postgres
    data_dir: `+filepath.Join(dir, "pg")+`
    memory: 32MB
    settings: {fsync: "off", synchronous_commit: "off"}
steps:
  - build
  - backup: {to: `+to+`, cycles: 2, restore_dir: `+restoreDir+`}
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	st := openStore(t, t.TempDir())
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true, Observer: Observer{Scenario: scenario.Observer{Note: func(msg string) {
		if strings.Contains(msg, "checking it") {
			restoredRunning = max(restoredRunning, db1.Running())
		}
	}}}}
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := db1.Running(); n != 0 {
		t.Errorf("after the plan db1 holds %d instances, want none", n)
	}
	if restoredRunning != 2 {
		t.Errorf("while a restored copy was checked db1 held %d instances, want 2 (the source and the restored copy)", restoredRunning)
	}
	for _, d := range []string{to, restoreDir} {
		if left, _ := filepath.Glob(filepath.Join(d, "oltplab-backup-*")); len(left) != 0 {
			t.Errorf("backups or restored copies left on the agent's host: %v", left)
		}
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindBackup})
	if err != nil || len(runs) != 1 {
		t.Fatalf("backup runs: got %d (%v), want 1", len(runs), err)
	}
	run := runs[0]
	if run.Status != store.StatusOK {
		t.Fatalf("backup run: status %s %s", run.Status, run.Error)
	}
	var rc scenario.RunContext
	if err := json.Unmarshal(run.Context, &rc); err != nil {
		t.Fatal(err)
	}
	if h := rc.Placement.Hosts; h == nil || h.Database != "db1" || h.Driver != "db1" || rc.Placement.Local {
		t.Errorf("placement %+v (hosts %+v), want the database and its backups on db1", rc.Placement, rc.Placement.Hosts)
	}
	var sum summary.Backup
	if err := json.Unmarshal(run.Summary, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Cycles) != 2 {
		t.Fatalf("cycles: %d, want 2", len(sum.Cycles))
	}
	for _, c := range sum.Cycles {
		if c.Backup.Bytes <= 0 || !strings.HasPrefix(c.Backup.Dir, to+"/") {
			t.Errorf("cycle %d: %+v, want a backup in %s", c.Cycle, c.Backup, to)
		}
		if c.Restore == nil || c.Restore.Bytes <= 0 || !strings.HasPrefix(c.Restore.Dir, restoreDir+"/") || len(c.Restore.Steps) == 0 {
			t.Errorf("cycle %d: restore %+v, want one into %s with its steps", c.Cycle, c.Restore, restoreDir)
		}
		if c.Check == nil || !c.Check.Passed || c.Check.RunID == 0 || c.Failed != "" {
			t.Errorf("cycle %d: check %+v (failed %q %s), want the restored copy checked and passing", c.Cycle, c.Check, c.Failed, c.Error)
		}
	}
	if sum.Stats.RestoreSeconds.N != 2 || sum.Stats.ChecksPassed != 2 {
		t.Errorf("stats %+v, want 2 restores and 2 checks passed", sum.Stats)
	}
	if sum.RestoreDir != restoreDir {
		t.Errorf("restore dir %q, want %q", sum.RestoreDir, restoreDir)
	}
	if tl := sum.Info.Tools; tl == nil || !strings.Contains(tl.Placement, "on host db1") {
		t.Errorf("backup tools: %+v, want them placed on host db1", sum.Info.Tools)
	}
	if !sum.Monitor.DatabaseHostMeasured {
		t.Errorf("the database host was not measured by its agent")
	}
	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	if !strings.Contains(strings.Join(in.Experiment.Method, "\n"), "the backup tools ran beside the data") {
		t.Errorf("the report's method does not say where the backups ran:\n%s", strings.Join(in.Experiment.Method, "\n"))
	}

	// The agent itself: backups only below its roots, into a plain
	// name; a backup not removed by its runner goes with its instance.
	c := agent.Client{Addr: dbAddr, Fingerprint: dbFP, Token: tok}
	info, err := c.Start(ctx, agent.StartRequest{Spec: p.Targets[0].Instance, Runner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.WithoutCancel(ctx), info.ID)
	lease, endLease := context.WithCancel(ctx)
	defer endLease()
	go c.KeepLease(lease, info.ID, info.Lease, nil)
	outside := filepath.Join(t.TempDir(), "outside")
	for _, req := range []agent.BackupRequest{{}, {To: outside}, {To: p.Targets[0].Instance.DataDir}, {To: filepath.Join(p.Targets[0].Instance.DataDir, "b")}} {
		if _, err := c.BackupsPrepare(ctx, info.ID, req); err == nil {
			t.Errorf("backups into %q: prepared, want refused", req.To)
		}
	}
	for _, name := range []string{"../oltplab-backup-x", "x", "oltplab-backup-a/b"} {
		if _, err := c.Backup(ctx, info.ID, agent.BackupRequest{To: outside, Name: name}); err == nil {
			t.Errorf("backup named %q: taken, want refused", name)
		}
		if _, err := c.Backup(ctx, info.ID, agent.BackupRequest{To: to, Name: name}); err == nil {
			t.Errorf("backup named %q: taken, want refused", name)
		}
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("outside the agent's roots: %v, want nothing made", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "oltplab-backup-x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a backup named with ..: %v, want nothing made", err)
	}
	bk, err := c.Backup(ctx, info.ID, agent.BackupRequest{To: to, Name: "oltplab-backup-test"})
	if err != nil || bk.Bytes <= 0 {
		t.Fatalf("backup: %+v, %v", bk, err)
	}
	// Restores: only a backup the agent holds, into a new directory of
	// oltplab's name below its roots, through no link.
	existing := filepath.Join(restoreDir, "oltplab-backup-exists")
	if err := os.MkdirAll(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, rq := range []struct{ name, into string }{
		{"oltplab-backup-none", filepath.Join(restoreDir, "oltplab-backup-r1")},
		{"oltplab-backup-test", ""},
		{"oltplab-backup-test", filepath.Join(outside, "oltplab-backup-r2")},
		{"oltplab-backup-test", filepath.Join(restoreDir, "r3")},
		{"oltplab-backup-test", existing},
		{"oltplab-backup-test", filepath.Join(dir, "link", "oltplab-backup-r4")},
		{"oltplab-backup-test", filepath.Join(p.Targets[0].Instance.DataDir, "oltplab-backup-r5")},
		{"oltplab-backup-test", filepath.Join(bk.Dir, "oltplab-backup-r6")},
	} {
		if _, err := c.Restore(ctx, info.ID, rq.name, agent.RestoreRequest{Into: rq.into}); err == nil {
			t.Errorf("restore of %s into %q: restored, want refused", rq.name, rq.into)
		} else {
			t.Logf("restore of %s into %q: %v", rq.name, rq.into, err)
		}
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("outside the agent's roots after the restores: %v, want nothing made", err)
	}
	if ents, err := os.ReadDir(existing); err != nil || len(ents) != 0 {
		t.Errorf("an existing directory after a restore into it: %v %v, want it untouched and empty", ents, err)
	}
	into := filepath.Join(restoreDir, "oltplab-backup-restored")
	rs, err := c.Restore(ctx, info.ID, "oltplab-backup-test", agent.RestoreRequest{Into: into})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if rs.Instance.ID == info.ID || rs.Instance.Password == "" || rs.Instance.Ticket == "" || rs.Report.Bytes <= 0 || db1.Running() != 2 {
		t.Errorf("restored: instance %s (source %s), %d bytes, db1 holds %d, want a second instance with its secrets", rs.Instance.ID, info.ID, rs.Report.Bytes, db1.Running())
	}
	if _, err := os.Stat(filepath.Join(into, "postgres")); err != nil {
		t.Errorf("the restored copy: %v", err)
	}
	if err := c.Stop(ctx, rs.Instance.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(into); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the restored copy %s after its instance stopped: %v, want removed", into, err)
	}
	if err := c.Stop(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bk.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the backup %s after its instance stopped: %v, want removed", bk.Dir, err)
	}
}
