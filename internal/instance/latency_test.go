package instance

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/testenv"
)

// needLayer skips a test that puts an instance on a latency layer when
// this process cannot mount one, except under CI.
func needLayer(t testing.TB) {
	t.Helper()
	testenv.Require(t, testenv.Root)
	if err := latency.Check(); err != nil {
		testenv.Unavailable(t, testenv.Root, err)
	}
}

// durable are settings under which a commit waits for its WAL to reach
// the device.
var durable = map[string]string{"fsync": "on", "synchronous_commit": "on"}

// TestPostgresLatencyCommit: a configured fsync delay raises every
// single-row durable commit's latency by at least that delay (a lower
// bound: what a busy host adds beyond it is not asserted), the layer
// records each WAL sync as at least that long, and so does PostgreSQL's
// own timing, which managed instances turn on.
func TestPostgresLatencyCommit(t *testing.T) {
	needEngine(t, Postgres)
	needLayer(t)
	ctx := context.Background()
	const delay = 20 * time.Millisecond
	dir := fromTemplate(t, Postgres, "pg-latency")
	s, err := latency.Parse("fsync=20ms")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := Start(ctx, Spec{Name: "pg-latency", Engine: Postgres, DataDir: dir, Settings: durable, Latency: &s}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(ctx)
	conn, err := pgx.Connect(ctx, rawURL(inst.Target(), ""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for k, want := range map[string]string{"fsync": "on", "synchronous_commit": "on", "track_io_timing": "on", "track_wal_io_timing": "on"} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", k).Scan(&got); err != nil || got != want {
			t.Fatalf("%s: got %q, %v; want %q", k, got, err, want)
		}
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	walSyncs0, walSyncMillis0 := pgWALSyncs(t, conn)
	before, err := inst.Latency().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const commits = 10
	for i := range commits {
		start := time.Now()
		if _, err := conn.Exec(ctx, "INSERT INTO t VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < delay {
			t.Errorf("commit %d took %s through a %s fsync delay", i, took, delay)
		}
	}
	after, err := inst.Latency().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := after.Since(before)
	if err != nil {
		t.Fatal(err)
	}
	f := w.Mounts["data"].Kinds[latency.Fsync]
	if n := f.Seen.TotalCount(); n < commits {
		t.Errorf("the layer saw %d fsyncs for %d durable commits", n, commits)
	}
	if min := time.Duration(f.Seen.Min()) * time.Microsecond; min < delay-time.Millisecond {
		t.Errorf("the layer's shortest fsync: %s, below %s", min, delay)
	}
	walSyncs, walSyncMillis := pgWALSyncs(t, conn)
	if n := walSyncs - walSyncs0; n < commits {
		t.Errorf("pg_stat_wal counted %d WAL syncs for %d commits", n, commits)
	} else if avg := (walSyncMillis - walSyncMillis0) / float64(n); avg < float64(delay/time.Millisecond) {
		t.Errorf("PostgreSQL's own average WAL sync: %.2f ms, below the %s delay", avg, delay)
	}
	// What RunInside starts (fio, for the storage step) sees the layer.
	cmd := exec.Command("grep", "-c", " fuse.oltplab ", "/proc/self/mountinfo")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout = &out
	if err := inst.RunInside(cmd); err != nil || strings.TrimSpace(out.String()) != "1" {
		t.Errorf("RunInside: the layer's mounts seen: %q, %v", out.String(), err)
	}
	d := inst.Describe()
	if d.Latency == nil || d.Latency.SinceStart == nil || d.Latency.Settings != s || d.Latency.PID == 0 {
		t.Fatalf("the description does not carry the layer: %+v", d.Latency)
	}
	if d.Latency.SinceStart.All["fsync"].Count == 0 {
		t.Errorf("the description's figures have no fsync: %+v", d.Latency.SinceStart)
	}
	b, _ := json.Marshal(d)
	if !strings.Contains(string(b), `"latency":{"settings":{"text":"fsync=20ms"`) {
		t.Errorf("the description's JSON: %s", b)
	}
	// The layer's CPU time, read from its process, is what it says it
	// used (it reported first, so it can only have used more since).
	if h, ok := inst.HelperCPUSeconds(); !ok || h < d.Latency.SinceStart.CPUSeconds-0.02 {
		t.Errorf("HelperCPUSeconds = %v, %v; the layer reported %v s", h, ok, d.Latency.SinceStart.CPUSeconds)
	}
	source := inst.Latency().Mounts()[0].Source
	if err := inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mountsOf(source); len(got) > 0 {
		t.Errorf("mounted after Stop: %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "postgres", "PG_VERSION")); err != nil {
		t.Errorf("the data after Stop: %v", err)
	}
}

// pgWALSyncs reads pg_stat_wal's WAL syncs and their time (ms), after
// making this backend hand its statistics over (PostgreSQL 15 does at
// the end of the transaction after pg_stat_force_next_flush).
func pgWALSyncs(t *testing.T, conn *pgx.Conn) (int64, float64) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{"SELECT pg_stat_force_next_flush()", "SELECT 1"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	var ms float64
	if err := conn.QueryRow(ctx, "SELECT wal_sync, wal_sync_time FROM pg_stat_wal").Scan(&n, &ms); err != nil {
		t.Fatal(err)
	}
	return n, ms
}

// TestMariaDBLatency: InnoDB, which writes its data files with O_DIRECT,
// runs on the layer, its writes reach the layer, and the server times
// its own file I/O (performance_schema, on in managed instances).
func TestMariaDBLatency(t *testing.T) {
	needEngine(t, MariaDB)
	needLayer(t)
	ctx := context.Background()
	dir := filepath.Join(testRoot, "my-latency")
	s, _ := latency.Parse("write=1ms,fsync=2ms")
	inst, err := Start(ctx, Spec{Name: "my-latency", Engine: MariaDB, DataDir: dir, Latency: &s}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(ctx)
	tg := inst.Target()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = UserName, tg.Password.Reveal(), "tcp", tg.URL.Host, DatabaseName
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var flush string
	var ps int
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_flush_method, @@performance_schema").Scan(&flush, &ps); err != nil {
		t.Fatal(err)
	}
	if flush != "O_DIRECT" || ps != 1 {
		t.Errorf("innodb_flush_method %s, performance_schema %d: want O_DIRECT and 1", flush, ps)
	}
	before, err := inst.Latency().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE t (id int PRIMARY KEY, v varchar(100)) ENGINE=InnoDB",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')", "SET GLOBAL innodb_max_dirty_pages_pct = 0"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second) // the page cleaner flushes what it may
	after, err := inst.Latency().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT EVENT_NAME, COUNT_READ, SUM_TIMER_READ, COUNT_WRITE, SUM_TIMER_WRITE, COUNT_MISC, SUM_TIMER_MISC
		FROM performance_schema.file_summary_by_event_name WHERE EVENT_NAME LIKE 'wait/io/file/innodb/%' AND COUNT_STAR > 0`)
	if err != nil {
		t.Fatal(err)
	}
	var timed int64
	for rows.Next() {
		var name string
		var cr, tr, cw, tw, cm, tm int64
		if err := rows.Scan(&name, &cr, &tr, &cw, &tw, &cm, &tm); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d reads %d ps, %d writes %d ps, %d misc %d ps", name, cr, tr, cw, tw, cm, tm)
		timed += tr + tw + tm
	}
	rows.Close()
	if timed == 0 {
		t.Error("performance_schema timed no InnoDB file I/O")
	}
	w, err := after.Since(before)
	if err != nil {
		t.Fatal(err)
	}
	if n := w.Mounts["data"].Kinds[latency.Write].Seen.TotalCount(); n == 0 {
		t.Error("InnoDB's writes did not reach the layer")
	}
	t.Logf("layer: %+v", w.Summary().All)
}

// TestLatencyParentKilled: a killed oltplab whose managed PostgreSQL sat
// on a latency layer leaves no server, no layer process and nothing
// mounted in any namespace.
func TestLatencyParentKilled(t *testing.T) {
	needEngine(t, Postgres)
	needLayer(t)
	dir := fromTemplate(t, Postgres, "pg-latency-orphan")
	cmd := execHelper(t, dir)
	cmd.Env = append(cmd.Env, helperLatencyEnv+"=fsync=1ms")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var h helperInstance
	if err := json.NewDecoder(out).Decode(&h); err != nil || h.PID == 0 || h.Layer == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %v %+v", err, h)
	}
	if got := mountsOf(h.Source); len(got) == 0 {
		t.Fatal("the helper's layer is not mounted for its server: the test would prove nothing")
	}
	tree := descendants(h.PID)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	nothingLeft(t, time.Minute, dir, tree, h.Port, "")
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := mountsOf(h.Source)
		if syscall.Kill(h.Layer, 0) == nil {
			left = append(left, fmt.Sprintf("layer process %d runs", h.Layer))
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGKILL: %s", strings.Join(left, "; "))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "postgres", "PG_VERSION")); err != nil {
		t.Errorf("the data: %v", err)
	}
}

// TestLatencySpecs: what a spec with latency cannot be is refused before
// anything starts.
func TestLatencySpecs(t *testing.T) {
	host, err := LiveHost()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := latency.Parse("read=1ms")
	wal, _ := latency.Parse("read=1ms,on=wal")
	for _, c := range []struct {
		name string
		spec Spec
		want string
	}{
		{"embedded", Spec{Engine: SQLite, DataDir: "/srv/x", Latency: &s}, "not latency"},
		{"io_limit", Spec{Engine: Postgres, DataDir: "/srv/x", Latency: &s, IOLimit: IOLimit{WriteIOPS: 100}}, "io_limit and latency"},
		{"on wal without one", Spec{Engine: Postgres, DataDir: "/srv/x", Latency: &wal}, "without a wal_dir"},
		{"nested", Spec{Engine: Postgres, DataDir: "/srv/x", WALDir: "/srv/x/wal", Latency: &s}, "inside one another"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.spec.Validate(host)
			if err == nil || !strings.Contains(err.Error(), c.want) || KindOf(err) != KindSpec {
				t.Errorf("got %v, want a spec error saying %q", err, c.want)
			}
		})
	}
}

// mountsOf lists the processes whose mount table holds the mount source.
func mountsOf(source string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "mountinfo"))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), " "+source+" ") {
			out = append(out, "mounted for process "+e.Name())
		}
	}
	return out
}
