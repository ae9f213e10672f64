package scenario_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// managedNeed is what a managed instance of each engine needs (an
// embedded SQLite instance only time: it builds a warehouse).
var managedNeed = map[instance.Engine]testenv.Need{instance.Postgres: testenv.ManagedPostgres,
	instance.MariaDB: testenv.ManagedMariaDB, instance.SQLite: testenv.Long}

// reachableDir is a fresh directory the servers' own accounts can reach
// when the tests run as root.
func reachableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fastSettings trade durability for speed where a test measures nothing.
var fastSettings = map[instance.Engine]map[string]string{
	instance.Postgres: {"fsync": "off", "full_page_writes": "off", "synchronous_commit": "off"},
	instance.MariaDB:  {"innodb_flush_log_at_trx_commit": "2", "innodb_doublewrite": "0"},
}

// managedSource starts a managed instance of engine e with one warehouse
// built in it, and an Env recording into a fresh store. A missing engine
// (or backup tool) skips the test, except where servers are required.
func managedSource(t *testing.T, e instance.Engine, tools ...string) (*scenario.Env, scenario.BackupSource, string) {
	t.Helper()
	testenv.Require(t, managedNeed[e])
	for _, tool := range tools {
		if _, err := os.Stat(tool); err != nil {
			testenv.Unavailable(t, managedNeed[e], err)
		}
	}
	ctx := context.Background()
	root := reachableDir(t)
	inst, err := instance.Start(ctx, instance.Spec{Name: "src", Engine: e, DataDir: filepath.Join(root, "source"),
		Settings: fastSettings[e]}, nil)
	if instance.KindOf(err) == instance.KindBinary {
		testenv.Unavailable(t, managedNeed[e], err)
	}
	if err != nil {
		t.Fatalf("start the source instance: %v", err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	tg := inst.Target()
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	env := &scenario.Env{Store: st, ToolVersion: "test", NoCrossCheck: true}
	if _, _, err := env.Build(ctx, db, tg, load.Options{Warehouses: 1, Workers: 2, Seed: 7, ToolVersion: "test"}); err != nil {
		t.Fatalf("build: %v", err)
	}
	return env, scenario.BackupSource{DB: db, Target: tg, Instance: inst}, root
}

// assertCycles checks what a finished backup scenario returned and
// stored: every cycle's backup and restore measured, each restored copy
// checked and passing, the samples stored, nothing left in the
// directories.
func assertCycles(t *testing.T, env *scenario.Env, out scenario.BackupOutcome, cycles int, dirs ...string) {
	t.Helper()
	if out.Status != store.StatusOK || len(out.Cycles) != cycles {
		t.Fatalf("outcome: status %s with %d cycles, want ok with %d", out.Status, len(out.Cycles), cycles)
	}
	for _, c := range out.Cycles {
		b := c.Backup
		if !c.Finished() || b.Bytes <= 0 || b.MBps <= 0 || b.Window == nil || b.Window.ToMillis < b.Window.FromMillis {
			t.Errorf("cycle %d backup: %+v, want finished with bytes, MB/s and a window", c.Cycle, b)
		}
		r := c.Restore
		if r == nil || r.Bytes <= 0 || r.MBps <= 0 || len(r.Steps) == 0 || r.Window == nil {
			t.Fatalf("cycle %d restore: %+v, want bytes, MB/s, steps and a window", c.Cycle, r)
		}
		if r.Window.FromMillis < b.Window.ToMillis {
			t.Errorf("cycle %d: restore starts at %d ms, before its backup ended at %d ms", c.Cycle, r.Window.FromMillis, b.Window.ToMillis)
		}
		if c.Check == nil || !c.Check.Passed || c.Check.RunID == 0 {
			t.Errorf("cycle %d check of the restored database: %+v, want passed and stored", c.Cycle, c.Check)
		}
	}
	if out.Stats.ChecksPassed != cycles || out.Stats.BackupSeconds.N != cycles {
		t.Errorf("stats: %+v, want %d cycles, every check passed", out.Stats, cycles)
	}
	ctx := context.Background()
	run, err := env.Store.GetRun(ctx, out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var stored summary.Backup
	if err := json.Unmarshal(run.Summary, &stored); err != nil {
		t.Fatalf("stored summary: %v", err)
	}
	if run.Kind != store.KindBackup || run.Status != store.StatusOK || len(stored.Cycles) != cycles || stored.Cycles[0].Backup.Bytes != out.Cycles[0].Backup.Bytes {
		t.Errorf("stored run: kind %s status %s with %d cycles, want backup ok with %d as returned", run.Kind, run.Status, len(stored.Cycles), cycles)
	}
	samples, err := env.Store.Samples(ctx, out.RunID, store.SampleFilter{})
	if err != nil || len(samples) == 0 {
		t.Errorf("stored samples: %d, %v; want some", len(samples), err)
	}
	for _, d := range dirs {
		if entries, _ := os.ReadDir(d); len(entries) > 0 {
			t.Errorf("%s holds %d entries after the cycles, want none (no --keep)", d, len(entries))
		}
	}
}

func TestBackupPostgres(t *testing.T) {
	env, src, root := managedSource(t, instance.Postgres, "/usr/lib/postgresql/15/bin/pg_basebackup")
	ctx := context.Background()
	for _, m := range []instance.BackupMethod{instance.BaseBackup, instance.Dump} {
		t.Run(string(m), func(t *testing.T) {
			to, restoreDir := filepath.Join(root, string(m)), filepath.Join(root, string(m)+"-restored")
			out, err := env.Backup(ctx, src, scenario.BackupOptions{Cycles: 1, To: to, RestoreDir: restoreDir, Method: m, Jobs: 2, Restore: true})
			if err != nil {
				t.Fatalf("backup: %v", err)
			}
			if out.Info.Method != string(m) {
				t.Errorf("method: got %s, want %s", out.Info.Method, m)
			}
			assertCycles(t, env, out, 1, to, restoreDir)
		})
	}

	// A dump waits for its table locks: a session holding an exclusive
	// lock on one table keeps pg_dump running, mid-way, as long as the
	// test wants.
	blocked := func(t *testing.T) (release func()) {
		conn, err := pgx.Connect(ctx, rawURL(src.Target))
		if err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(ctx)
		if err == nil {
			_, err = tx.Exec(ctx, "LOCK TABLE warehouse IN ACCESS EXCLUSIVE MODE")
		}
		if err != nil {
			t.Fatal(err)
		}
		return func() { tx.Rollback(ctx); conn.Close(ctx) }
	}
	stops := map[string]func(cancel context.CancelFunc, pid int){
		"interrupted": func(cancel context.CancelFunc, _ int) { cancel() },
		"tool killed": func(_ context.CancelFunc, pid int) { syscall.Kill(pid, syscall.SIGKILL) },
	}
	for _, name := range []string{"interrupted", "tool killed"} {
		t.Run(name, func(t *testing.T) {
			release := blocked(t)
			defer release()
			to := filepath.Join(root, strings.ReplaceAll(name, " ", "-"))
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			type result struct {
				out scenario.BackupOutcome
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := env.Backup(cctx, src, scenario.BackupOptions{Cycles: 1, To: to, Method: instance.Dump, Restore: true})
				done <- result{out, err}
			}()
			// The dump itself, not `pg_dump --version`.
			pid := waitChild(t, "pg_dump", "--format=directory", done)
			stops[name](cancel, pid)
			var r result
			select {
			case r = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("the backup did not end after its tool was stopped")
			}
			if name == "interrupted" && !errors.Is(r.err, context.Canceled) {
				t.Errorf("error: got %v, want context.Canceled", r.err)
			}
			var be *scenario.BackupError
			if name == "tool killed" && (!errors.As(r.err, &be) || be.Phase != "backup" || be.RunID != r.out.RunID) {
				t.Errorf("error: got %v, want a *BackupError of the backup phase naming the stored run", r.err)
			}
			if r.out.RunID == 0 || len(r.out.Cycles) != 1 || r.out.Cycles[0].Failed != "backup" {
				t.Fatalf("outcome: %+v, want one stored cycle whose backup failed", r.out)
			}
			run, err := env.Store.GetRun(ctx, r.out.RunID)
			if err != nil || run.Status == store.StatusOK || run.Status == store.StatusRunning {
				t.Errorf("stored run: %v status %s, want partial or failed", err, run.Status)
			}
			if entries, _ := os.ReadDir(to); len(entries) > 0 {
				t.Errorf("%s holds %s after the failed backup, want the partial backup removed", to, entries[0].Name())
			}
			if left := childrenNamed("pg_dump", ""); len(left) > 0 {
				t.Errorf("pg_dump processes left: %v", left)
			}
			release()
			// The source is untouched and its instance serves on.
			select {
			case <-src.Instance.Done():
				t.Fatal("the source instance stopped")
			default:
			}
			chk, err := env.Check(ctx, src.DB, src.Target)
			if err != nil || !chk.Passed {
				t.Errorf("check of the source after the failed backup: passed %v, %v", chk.Passed, err)
			}
		})
	}
}

func TestBackupMariaDB(t *testing.T) {
	env, src, root := managedSource(t, instance.MariaDB, "/usr/bin/mariadb-backup")
	to := filepath.Join(root, "backups")
	out, err := env.Backup(context.Background(), src, scenario.BackupOptions{Cycles: 1, To: to, Restore: true})
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if out.Info.Method != string(instance.MariaBackup) || out.Info.Tools == nil || out.Cycles[0].Backup.SyncedBy == "the tool" {
		t.Errorf("info: %+v, synced by %q; want mariadb-backup, synced by oltplab", out.Info, out.Cycles[0].Backup.SyncedBy)
	}
	assertCycles(t, env, out, 1, to)
}

func TestBackupSQLite(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env, db, tg := sqliteEnv(t)
	ctx := context.Background()
	to := t.TempDir()
	out, err := env.Backup(ctx, scenario.BackupSource{DB: db, Target: tg}, scenario.BackupOptions{Cycles: 2, To: to, Restore: true})
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if out.Info.Method != string(instance.Online) {
		t.Errorf("method: got %s, want online", out.Info.Method)
	}
	assertCycles(t, env, out, 2, to)

	t.Run("keep", func(t *testing.T) {
		out, err := env.Backup(ctx, scenario.BackupSource{DB: db, Target: tg}, scenario.BackupOptions{Cycles: 1, To: to, Restore: true, Keep: true})
		if err != nil {
			t.Fatalf("backup: %v", err)
		}
		c := out.Cycles[0]
		for _, f := range []string{filepath.Join(c.Backup.Dir, instance.SQLiteFile), filepath.Join(c.Restore.Dir, instance.SQLiteFile)} {
			if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
				t.Errorf("kept %s: %v", f, err)
			}
		}
	})
}

// rawURL is tg's URL with its password, as a client library takes it.
func rawURL(tg dialect.Target) string {
	u := *tg.URL
	u.User = url.UserPassword(u.User.Username(), tg.Password.Reveal())
	return u.String()
}

// childrenNamed lists this process's live children running name with
// arg among their arguments ("" for any).
func childrenNamed(name, arg string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		open, closeP := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closeP < open {
			continue
		}
		f := strings.Fields(s[closeP+1:])
		if len(f) < 2 || s[open+1:closeP] != name || f[0] == "Z" || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if arg == "" || strings.Contains("\x00"+string(cmdline), "\x00"+arg+"\x00") {
			out = append(out, pid)
		}
	}
	return out
}

// waitChild waits until this process runs a child named name with arg
// and returns its pid; it fails the test if the backup ends first.
func waitChild[T any](t *testing.T, name, arg string, done <-chan T) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if pids := childrenNamed(name, arg); len(pids) > 0 {
			return pids[0]
		}
		select {
		case r := <-done:
			t.Fatalf("the backup ended before %s was seen running: %+v", name, r)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not start", name)
	return 0
}
