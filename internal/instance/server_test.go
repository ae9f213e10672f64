package instance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/testenv"
)

// writeCap is the write-IOPS cap of the io_limit tests: low enough that a
// loop of single-row commits is held to it.
const writeCap = 50

// lastCPU is the CPU the tests confine servers to.
func lastCPU(t testing.TB) int {
	h, err := LiveHost()
	if err != nil || len(h.CPUs) == 0 {
		t.Fatalf("host CPUs: %v", err)
	}
	return h.CPUs[len(h.CPUs)-1]
}

func rawURL(tg dialect.Target, query string) string {
	u := *tg.URL
	u.User = url.UserPassword(u.User.Username(), tg.Password.Reveal())
	if query != "" {
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += query
	}
	return u.String()
}

// TestPostgres starts one PostgreSQL instance with every control and
// checks, on the real server, what each control did; then that a cold
// restart and Stop leave it as they should.
func TestPostgres(t *testing.T) {
	needEngine(t, Postgres)
	ctx := context.Background()
	cpu := lastCPU(t)
	dir := fromTemplate(t, Postgres, "pg-main")
	spec := Spec{Name: "pg-main", Engine: Postgres, DataDir: dir, Memory: 32 << 20, MemoryLimit: 512 << 20,
		CPUs: strconv.Itoa(cpu), IOLimit: IOLimit{WriteIOPS: writeCap}, MaxConnections: 20}
	inst := startControlled(t, spec)
	defer inst.Stop(ctx)
	tg := inst.Target()
	conn, err := pgx.Connect(ctx, rawURL(tg, ""))
	if err != nil {
		t.Fatalf("connect with the generated password: %v", err)
	}
	defer conn.Close(ctx)

	t.Run("settings", func(t *testing.T) {
		for k, want := range map[string]string{"shared_buffers": "32MB", "max_connections": "30",
			"wal_level": "replica", "wal_sync_method": "fdatasync", "backend_flush_after": "256kB", "current_database": DatabaseName} {
			var got string
			q := "SELECT current_setting($1)"
			if k == "current_database" {
				q = "SELECT current_database() WHERE $1::text IS NOT NULL"
			}
			if err := conn.QueryRow(ctx, q, k).Scan(&got); err != nil || got != want {
				t.Errorf("%s: got %q, %v; want %q", k, got, err, want)
			}
		}
		if got := inst.Describe().Effective["shared_buffers"]; got != "32MB" {
			t.Errorf("described effective shared_buffers: got %q", got)
		}
	})
	t.Run("controls", func(t *testing.T) {
		var backend int
		if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
			t.Fatal(err)
		}
		assertConfined(t, inst, cpu, 5, backend)
		d, _, _ := inst.cg.dir(ctlMemory)
		if got := read(t, filepath.Join(d, "memory.limit_in_bytes")); got != strconv.Itoa(512<<20) {
			t.Errorf("memory.limit_in_bytes: got %s", got)
		}
	})
	t.Run("run inside", func(t *testing.T) {
		// What RunInside starts is in the server's blkio group (its I/O
		// caps hold for it) and on the server's CPU.
		cmd := exec.Command("sh", "-c", "cat /proc/self/cgroup; grep Cpus_allowed_list /proc/self/status")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var out strings.Builder
		cmd.Stdout = &out
		if err := inst.RunInside(cmd); err != nil {
			t.Fatalf("RunInside: %v", err)
		}
		if d, _, ok := inst.cg.dir(ctlBlkio); ok {
			var in bool
			for _, l := range strings.Split(out.String(), "\n") {
				if f := strings.SplitN(l, ":", 3); len(f) == 3 && strings.Contains(f[1], "blkio") && f[2] != "/" && strings.HasSuffix(d, f[2]) {
					in = true
				}
			}
			if !in {
				t.Errorf("not in the server's blkio group %s:\n%s", d, out.String())
			}
		}
		if !strings.Contains(out.String(), "Cpus_allowed_list:\t"+strconv.Itoa(cpu)+"\n") {
			t.Errorf("CPUs: got %q, want %d", out.String(), cpu)
		}
	})
	t.Run("secrets", func(t *testing.T) {
		pw := tg.Password.Reveal()
		b, _ := json.Marshal(inst.Describe())
		for what, s := range map[string]string{"description": string(b), "target": tg.String(), "log": read(t, inst.logFile)} {
			if strings.Contains(s, pw) {
				t.Errorf("the password appears in the %s", what)
			}
		}
		if _, err := os.Stat(filepath.Join(inst.runDir, "pg_hba.conf")); err != nil {
			t.Errorf("pg_hba.conf: %v", err)
		}
	})
	t.Run("replication", func(t *testing.T) {
		// pg_basebackup connects so: the generated user, on loopback.
		rc, err := pgconn.Connect(ctx, rawURL(tg, "replication=database"))
		if err != nil {
			t.Fatalf("replication connection: %v", err)
		}
		defer rc.Close(ctx)
		res, err := rc.Exec(ctx, "IDENTIFY_SYSTEM").ReadAll()
		if err != nil || len(res) != 1 || len(res[0].Rows) != 1 {
			t.Fatalf("IDENTIFY_SYSTEM: %v", err)
		}
	})
	t.Run("cpu seconds", func(t *testing.T) {
		before, err := inst.ServerCPUSeconds()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM generate_series(1, 2000000)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		after, err := inst.ServerCPUSeconds()
		if err != nil {
			t.Fatal(err)
		}
		if !(before > 0 && after > before) {
			t.Errorf("server CPU seconds: %.3f before a query, %.3f after", before, after)
		}
	})
	var commits int
	t.Run("io limit binds", func(t *testing.T) {
		if _, err := conn.Exec(ctx, "CREATE TABLE io_probe (id bigserial PRIMARY KEY, pad text)"); err != nil {
			t.Fatal(err)
		}
		commits = ioLimitBinds(t, inst, func() error {
			_, err := conn.Exec(ctx, "INSERT INTO io_probe (pad) VALUES (repeat('x', 100))")
			return err
		})
	})
	t.Run("cold restart", func(t *testing.T) {
		oldPID, oldPort := inst.PID(), inst.Port()
		cpuBefore, _ := inst.ServerCPUSeconds()
		conn.Close(ctx)
		r, err := inst.Restart(ctx, true)
		if err != nil {
			t.Fatalf("restart: %v", err)
		}
		if want := canDropCaches(); r.CacheDropped != want || (!r.CacheDropped && r.Note == "") {
			t.Errorf("cache dropped: got %v (%q), want %v", r.CacheDropped, r.Note, want)
		}
		if inst.PID() == oldPID || inst.Port() != oldPort {
			t.Errorf("pid %d -> %d, port %d -> %d: want a new server on the same port", oldPID, inst.PID(), oldPort, inst.Port())
		}
		if cpuAfter, _ := inst.ServerCPUSeconds(); cpuAfter < cpuBefore {
			t.Errorf("CPU seconds went back from %.3f to %.3f", cpuBefore, cpuAfter)
		}
		if conn, err = pgx.Connect(ctx, rawURL(inst.Target(), "")); err != nil {
			t.Fatalf("reconnect: %v", err)
		}
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM io_probe").Scan(&n); err != nil || n < commits {
			t.Errorf("rows after restart: got %d, %v; want %d", n, err, commits)
		}
		assertConfined(t, inst, cpu, 5, 0)
		if got := len(inst.Describe().Restarts); got != 1 {
			t.Errorf("restarts described: got %d, want 1", got)
		}
	})
	t.Run("stop leaves nothing", func(t *testing.T) {
		conn.Close(ctx)
		tree, port := descendants(inst.PID()), inst.Port()
		if err := inst.Stop(ctx); err != nil {
			t.Fatalf("stop: %v", err)
		}
		nothingLeft(t, 10*time.Second, dir, tree, port, ownPrefix(spec.Name))
		if err := inst.Stop(ctx); err != nil {
			t.Errorf("second stop: %v", err)
		}
	})
}

// TestMariaDB starts one MariaDB instance with the controls and checks
// them on the real server, then Stop.
func TestMariaDB(t *testing.T) {
	needEngine(t, MariaDB)
	ctx := context.Background()
	cpu := lastCPU(t)
	dir := filepath.Join(testRoot, "mariadb-main")
	spec := Spec{Name: "my-main", Engine: MariaDB, DataDir: dir, WALDir: filepath.Join(testRoot, "mariadb-redo"),
		Memory: 32 << 20, CPUs: strconv.Itoa(cpu), IOLimit: IOLimit{WriteIOPS: writeCap}, MaxConnections: 20}
	inst := startControlled(t, spec)
	defer inst.Stop(ctx)
	tg := inst.Target()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = tg.URL.User.Username(), tg.Password.Reveal(), "tcp", tg.URL.Host, DatabaseName
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	db.SetMaxOpenConns(1)

	t.Run("settings", func(t *testing.T) {
		for k, want := range map[string]string{"innodb_buffer_pool_size": strconv.Itoa(32 << 20), "max_connections": "30",
			"innodb_flush_method": "O_DIRECT", "innodb_log_file_buffering": "0", "innodb_log_group_home_dir": inst.engineWALDir,
			// Every start, a cold restart's included, begins with an empty buffer pool.
			"innodb_buffer_pool_dump_at_shutdown": "0", "innodb_buffer_pool_load_at_startup": "0"} {
			var got string
			if err := db.QueryRowContext(ctx, "SELECT @@"+k).Scan(&got); err != nil || got != want {
				t.Errorf("%s: got %q, %v; want %q", k, got, err, want)
			}
		}
		if _, err := os.Stat(filepath.Join(inst.runDir, "init.sql")); err == nil {
			t.Error("the init file with the password is still there")
		}
	})
	t.Run("controls", func(t *testing.T) { assertConfined(t, inst, cpu, 1, 0) })
	t.Run("io limit binds", func(t *testing.T) {
		if _, err := db.ExecContext(ctx, "CREATE TABLE io_probe (id BIGINT AUTO_INCREMENT PRIMARY KEY, pad TEXT) ENGINE=InnoDB"); err != nil {
			t.Fatal(err)
		}
		ioLimitBinds(t, inst, func() error {
			_, err := db.ExecContext(ctx, "INSERT INTO io_probe (pad) VALUES (REPEAT('x', 100))")
			return err
		})
	})
	t.Run("stop leaves nothing", func(t *testing.T) {
		db.Close()
		tree, port := descendants(inst.PID()), inst.Port()
		if err := inst.Stop(ctx); err != nil {
			t.Fatalf("stop: %v", err)
		}
		nothingLeft(t, 10*time.Second, dir, tree, port, ownPrefix(spec.Name))
	})
}

// startControlled starts an instance whose spec asks for cgroup controls.
// A host that cannot provide them (no writable cgroup: not root) skips or
// fails the test as testenv.Require decides.
func startControlled(t *testing.T, spec Spec) *Instance {
	t.Helper()
	inst, err := Start(context.Background(), spec, testLog(t))
	if KindOf(err) == KindControl {
		testenv.Unavailable(t, testenv.Root, fmt.Sprintf("this host cannot provide the controls: %v", err))
	}
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return inst
}

// assertConfined checks that every process of the server (at least min of
// them, and the backend pid when not 0) is in each of the instance's
// cgroups and may run on cpu only.
func assertConfined(t *testing.T, inst *Instance, cpu, min, backend int) {
	t.Helper()
	var group []int
	for _, p := range descendants(inst.PID()) {
		group = append(group, p.PID)
	}
	if len(group) < min {
		t.Fatalf("server %d: %d processes, want at least %d", inst.PID(), len(group), min)
	}
	if backend != 0 && !containsInt(group, backend) {
		t.Errorf("backend %d not among the server's processes %v", backend, group)
	}
	if len(inst.cg.v1dir) == 0 && inst.cg.v2 == "" {
		t.Fatal("no cgroup made")
	}
	for _, d := range inst.cg.dirs() {
		in := readPIDs(filepath.Join(d, "cgroup.procs"))
		for _, pid := range group {
			if !containsInt(in, pid) {
				t.Errorf("process %d not in cgroup %s (%v)", pid, d, in)
			}
		}
	}
	for _, pid := range group {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
		for _, status := range tasks {
			b, err := os.ReadFile(status)
			if err != nil {
				continue // the thread ended
			}
			if !strings.Contains(string(b), fmt.Sprintf("Cpus_allowed_list:\t%d\n", cpu)) {
				t.Errorf("%s: not confined to CPU %d", status, cpu)
			}
		}
	}
	if d, _, ok := inst.cg.dir(ctlBlkio); ok && inst.spec.IOLimit.WriteIOPS > 0 {
		disk, _ := wholeDisk(inst.devices["data"])
		want := fmt.Sprintf("%s %d", disk, inst.spec.IOLimit.WriteIOPS)
		if got := read(t, filepath.Join(d, "blkio.throttle.write_iops_device")); got != want {
			t.Errorf("write_iops_device: got %q, want %q", got, want)
		}
	}
}

func containsInt(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// ioLimitBinds runs commit (one durable single-row transaction) in a loop
// for three seconds and checks, from the instance cgroup's own counters,
// that the server's writes went through the throttle (at least one
// write per commit: the WAL or redo write that makes it durable) and that
// they stayed within the cap: at most 20% above it plus half a second's
// worth for the throttle's first slice. It returns the number of commits.
func ioLimitBinds(t *testing.T, inst *Instance, commit func() error) int {
	t.Helper()
	capIOPS := float64(inst.spec.IOLimit.WriteIOPS)
	disk, err := wholeDisk(inst.devices["data"])
	if err != nil {
		t.Fatal(err)
	}
	counters := func() IOCounters {
		c, err := inst.IOCounters()
		if err != nil {
			t.Fatal(err)
		}
		return c[disk]
	}
	before := counters()
	start := time.Now()
	commits := 0
	for time.Since(start) < 3*time.Second {
		if err := commit(); err != nil {
			t.Fatalf("commit: %v", err)
		}
		commits++
	}
	elapsed := time.Since(start).Seconds()
	after := counters()
	writes := after.WriteIOs - before.WriteIOs
	t.Logf("%d commits, %d writes counted by the cgroup in %.2f s: %.1f write IOPS (cap %.0f)",
		commits, writes, elapsed, float64(writes)/elapsed, capIOPS)
	if commits == 0 {
		t.Fatal("no commit")
	}
	if writes < uint64(commits) {
		t.Errorf("%d commits but only %d writes through the cgroup: commits bypass the throttle", commits, writes)
	}
	if bound := capIOPS*elapsed*1.2 + capIOPS/2; float64(writes) > bound {
		t.Errorf("%d writes in %.2f s exceed the cap of %.0f IOPS (bound %.0f)", writes, elapsed, capIOPS, bound)
	}
	return commits
}

func canDropCaches() bool {
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// TestCancelStops: cancelling the context given to Start stops the
// server and removes everything of it.
func TestCancelStops(t *testing.T) {
	needEngine(t, Postgres)
	dir := fromTemplate(t, Postgres, "pg-cancel")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := Start(ctx, Spec{Name: "pg-cancel", Engine: Postgres, DataDir: dir, Settings: fastSettings}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	tree, port, done := descendants(inst.PID()), inst.Port(), inst.Done()
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the server still runs 2 minutes after the cancel")
	}
	// Stop waits for the stop the cancel began, and returns its result.
	if err := inst.Stop(context.Background()); err != nil {
		t.Errorf("stop after cancel: %v", err)
	}
	nothingLeft(t, 10*time.Second, dir, tree, port, ownPrefix("pg-cancel"))
}

// cancelOn is a log handler that cancels a context when a message is
// logged: a test's way to interrupt Start at a given point.
type cancelOn struct {
	slog.Handler
	msg    string
	cancel context.CancelFunc
}

func (h cancelOn) Enabled(context.Context, slog.Level) bool { return true }
func (h cancelOn) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.cancel()
	}
	return h.Handler.Handle(ctx, r)
}
func (h cancelOn) WithAttrs(a []slog.Attr) slog.Handler {
	return cancelOn{h.Handler.WithAttrs(a), h.msg, h.cancel}
}

// TestStartFailureLeavesNothing: a server that fails while starting, and
// a start interrupted once the server runs, leave no process, listener,
// cgroup or run directory behind.
func TestStartFailureLeavesNothing(t *testing.T) {
	needEngine(t, Postgres)
	t.Run("server exits", func(t *testing.T) {
		dir := fromTemplate(t, Postgres, "pg-fail")
		settings := map[string]string{"shared_preload_libraries": "oltplab_no_such_library"}
		_, err := Start(context.Background(), Spec{Name: "pg-fail", Engine: Postgres, DataDir: dir, Settings: settings}, testLog(t))
		if KindOf(err) != KindStart || strings.Contains(err.Error(), "\n") {
			t.Fatalf("got %v (kind %s), want a one-line start error", err, KindOf(err))
		}
		t.Logf("error: %v", err)
		nothingLeft(t, 10*time.Second, dir, nil, 0, ownPrefix("pg-fail"))
	})
	t.Run("interrupted while starting", func(t *testing.T) {
		dir := fromTemplate(t, Postgres, "pg-interrupt")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log := slog.New(cancelOn{slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}), "server started", cancel})
		_, err := Start(ctx, Spec{Name: "pg-interrupt", Engine: Postgres, DataDir: dir, Settings: fastSettings}, log)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		nothingLeft(t, 10*time.Second, dir, nil, 0, ownPrefix("pg-interrupt"))
	})
}

// TestBadSpecs: each bad spec fails before anything starts, with one line
// of its own kind, and leaves nothing behind.
func TestBadSpecs(t *testing.T) {
	needEngine(t, Postgres)
	needEngine(t, MariaDB)
	file := filepath.Join(testRoot, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(testRoot, "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		os.Chmod(closed, 0o500) // unwritable for its owner
	}
	shm := filepath.Join("/dev/shm", "oltplab-test-"+randomString(6))
	defer os.RemoveAll(shm)
	tests := []struct {
		name     string
		spec     Spec
		want     Kind
		contains string
	}{
		{"postgres binary missing", Spec{Engine: Postgres, DataDir: filepath.Join(testRoot, "nobin"), BinDir: "/nonexistent/bin"}, KindBinary, "postgresql-15"},
		{"mariadb binary missing", Spec{Engine: MariaDB, DataDir: filepath.Join(testRoot, "nobin"), BinDir: "/nonexistent/bin"}, KindBinary, "mariadb-server"},
		{"directory under a file", Spec{Engine: Postgres, DataDir: filepath.Join(file, "data")}, KindDirectory, file},
		{"directory the server cannot use", Spec{Engine: MariaDB, DataDir: filepath.Join(closed, "data")}, KindDirectory, closed},
		{"cpus beyond the host", Spec{Engine: Postgres, DataDir: filepath.Join(testRoot, "x"), CPUs: "0-4096"}, KindCPUs, "4096"},
		{"io_limit on tmpfs", Spec{Engine: Postgres, DataDir: shm, IOLimit: IOLimit{ReadIOPS: 100}}, KindDevice, shm},
		{"setting oltplab manages", Spec{Engine: Postgres, DataDir: filepath.Join(testRoot, "x"), Settings: map[string]string{"port": "1"}}, KindSpec, "port"},
		{"setting that opens the server", Spec{Engine: MariaDB, DataDir: filepath.Join(testRoot, "x"), Settings: map[string]string{"bind": "0.0.0.0"}}, KindSpec, "bind-address"},
		{"setting that trusts everyone", Spec{Engine: Postgres, DataDir: filepath.Join(testRoot, "x"), Settings: map[string]string{"hba-file": file}}, KindSpec, "hba_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name = "bad"
			_, err := Start(context.Background(), tt.spec, nil)
			if err == nil {
				t.Fatal("started")
			}
			if got := KindOf(err); got != tt.want {
				t.Errorf("kind: got %s, want %s (%v)", got, tt.want, err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, tt.contains) {
				t.Errorf("error %q: want one line naming %q", msg, tt.contains)
			}
			nothingLeft(t, 10*time.Second, tt.spec.DataDir, nil, 0, ownPrefix("bad"))
		})
	}
}

// TestParentKilled: a server outlives no oltplab, not even one killed
// with SIGKILL: a helper process (this test binary) starts an instance
// and is killed; the kernel's parent-death signal ends the server. The
// cgroups and run directory it could not remove are swept by the next
// instance.
func TestParentKilled(t *testing.T) {
	needEngine(t, Postgres)
	dir := fromTemplate(t, Postgres, "pg-orphan")
	cmd := execHelper(t, dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var h helperInstance
	if err := json.NewDecoder(out).Decode(&h); err != nil || h.PID == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %v", err)
	}
	tree := descendants(h.PID)
	if len(tree) < 5 {
		t.Fatalf("server %d: %d processes before the kill, want at least 5", h.PID, len(tree))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	nothingLeft(t, time.Minute, dir, tree, h.Port, "")

	for _, parent := range groupParents() {
		sweepStale(parent)
	}
	probe, err := makeRunDir(groupID("probe"), nil)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(probe)
	nothingLeft(t, 10*time.Second, dir, nil, 0, h.ID)
}

// execHelper prepares the helper process: this test binary, running
// no test, told by its environment to start an instance on dir.
func execHelper(t *testing.T, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stderr = t.Output()
	return cmd
}

// TestSQLiteInstance: embedded SQLite takes data_dir and memory, and
// describes its storage; there is no server to measure.
func TestSQLiteInstance(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := filepath.Join(testRoot, "sqlite")
	ctx := context.Background()
	inst, err := Start(ctx, Spec{Engine: SQLite, DataDir: dir, Memory: 64 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tg := inst.Target()
	want := "sqlite:" + filepath.Join(dir, SQLiteFile) + "?cache_size=-65536"
	if tg.String() != want {
		t.Errorf("target: got %q, want %q", tg.String(), want)
	}
	back, err := dialect.ParseTarget(tg.String(), "")
	if err != nil || back.URL.Path != filepath.Join(dir, SQLiteFile) {
		t.Errorf("target does not parse back: %v, %v", back, err)
	}
	d := inst.Describe()
	if d.Devices["data"].FSType == "" || d.Settings["cache_size"] != "-65536" {
		t.Errorf("description: devices %v, settings %v", d.Devices, d.Settings)
	}
	if _, err := inst.ServerCPUSeconds(); !errors.Is(err, ErrEmbedded) {
		t.Errorf("ServerCPUSeconds: got %v, want ErrEmbedded", err)
	}
	r, err := inst.Restart(ctx, true)
	if err != nil || r.CacheDropped != canDropCaches() {
		t.Errorf("cold restart: got %+v, %v", r, err)
	}
	if err := inst.Stop(ctx); err != nil {
		t.Error(err)
	}
}
