package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// syncBuffer is a bytes.Buffer that a running command writes to while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// storeLock holds a results store with an exclusive transaction, as
// another program would (SQLite's locks hold between connections of one
// process as between processes).
type storeLock struct {
	db   *sql.DB
	conn *sql.Conn
}

func lockStore(t *testing.T, path string) *storeLock {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(60000)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	l := &storeLock{db: db, conn: conn}
	t.Cleanup(l.release)
	return l
}

func (l *storeLock) release() {
	if l.conn == nil {
		return
	}
	_, _ = l.conn.ExecContext(context.Background(), "ROLLBACK")
	l.conn.Close()
	l.db.Close()
	l.conn = nil
}

// runWhileLocked starts `run` on target, locks the store once the run is
// under way, and returns the run's exit code with its output; while the
// run waits, onWait sees its stderr (and the lock) until it returns true.
func runWhileLocked(t *testing.T, env []string, storePath, target string, onWait func(stderr string, l *storeLock) bool) (int, string, string, *storeLock) {
	t.Helper()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- testMain(context.Background(), []string{"run", "--target", target, "--vus", "1", "--rampup", "0s",
			"--duration", "2s", "--grace", "1s", "--label", "busy"}, env, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	}()
	// Lock once the run is recorded: it is measuring.
	waitFor(t, func() bool { return runningRuns(t, storePath) > 0 }, func() {})
	lock := lockStore(t, storePath)
	for {
		select {
		case code := <-done:
			t.Logf("run -> %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
			return code, out.String(), errb.String(), lock
		case <-time.After(20 * time.Millisecond):
		}
		if onWait != nil && onWait(errb.String(), lock) {
			onWait = nil
		}
	}
}

// runningRuns counts the runs a store holds as running.
func runningRuns(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM runs WHERE status = 'running'`).Scan(&n); err != nil {
		return 0 // not created yet
	}
	return n
}

// TestRunSurvivesABusyStore: when the run ends, another program holds the
// results store locked. The result is printed first; the run waits with a
// message; if the lock outlasts OLTPLAB_STORE_WAIT, the result is left in
// a file that `results import` stores, once.
func TestRunSurvivesABusyStore(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	storePath := filepath.Join(dir, "results.db")
	target, _ := builtSQLite(t)
	env := []string{"OLTPLAB_RESULTS=" + storePath, "HOME=" + dir}

	t.Run("the lock goes away while the run waits", func(t *testing.T) {
		code, out, errs, _ := runWhileLocked(t, append(env, "OLTPLAB_STORE_WAIT=10m"), storePath, target, func(stderr string, lock *storeLock) bool {
			if !strings.Contains(stderr, "locked by another process") {
				return false
			}
			lock.release()
			return true
		})
		if code != 0 {
			t.Fatalf("run: exit %d", code)
		}
		if !strings.Contains(out, "NOPM") || !strings.Contains(out, "stored as run") {
			t.Errorf("result or store line missing: %q", out)
		}
		if !strings.Contains(errs, "after") {
			t.Errorf("no message that the run was stored after waiting: %q", errs)
		}
		if m, _ := filepath.Glob(storePath + ".run*.json"); len(m) != 0 {
			t.Errorf("saved file left behind: %v", m)
		}
	})

	t.Run("the lock outlasts the wait", func(t *testing.T) {
		code, out, errs, lock := runWhileLocked(t, append(env, "OLTPLAB_STORE_WAIT=1s"), storePath, target, nil)
		if code != exitStore {
			t.Errorf("run: exit %d, want %d", code, exitStore)
		}
		if !strings.Contains(out, "NOPM") {
			t.Errorf("the result was not printed: %q", out)
		}
		m := regexp.MustCompile("oltplab results import (\\S+)`").FindStringSubmatch(errs)
		if m == nil {
			t.Fatalf("stderr does not say how to load the saved result: %q", errs)
		}
		saved := m[1]
		lock.release()
		r := oltplab(t, env, "results", "import", saved)
		var id int64
		if _, err := fmt.Sscanf(r.out, saved+": stored as run %d", &id); r.code != 0 || err != nil {
			t.Fatalf("import: exit %d, %q", r.code, r.out)
		}
		r = oltplab(t, env, "results", "show", fmt.Sprint(id), "--json")
		var got store.Run
		if err := json.Unmarshal([]byte(r.out), &got); err != nil || got.Status != store.StatusOK || len(got.Summary) == 0 {
			t.Errorf("imported run: %+v (%v)", got.Status, err)
		}
		if r := oltplab(t, env, "results", "import", saved); r.code != exitUsage || !strings.Contains(r.err, "already stored") {
			t.Errorf("second import: exit %d, %q; want exit %d, already stored", r.code, r.err, exitUsage)
		}
		r = oltplab(t, env, "results", "list", "--kind", "run", "--json")
		var runs []store.Run
		if err := json.Unmarshal([]byte(r.out), &runs); err != nil || len(runs) != 2 {
			t.Errorf("runs stored: %d (%v), want 2 (one per subtest, no duplicate)", len(runs), err)
		}
	})
}

// TestDamagedStoreRefused: a store with 8 KB of garbage in its middle is
// refused (exit 7) with what to do by every command that would write to
// it, and nothing is written to it; commands that only read show what is
// intact or say it is damaged, never print damaged data.
func TestDamagedStoreRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	samples := make([]store.Sample, 5000)
	for i := range samples {
		samples[i] = store.Sample{TMillis: int64(i), Source: store.SourceHost, Metric: "cpu_busy_pct", Value: float64(i)}
	}
	for range 5 {
		id, err := st.CreateRun(ctx, store.Run{Kind: store.KindMonitor})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CompleteRun(ctx, id, store.Outcome{Status: store.StatusOK, Summary: []byte(`{}`), Samples: samples}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mid := len(b) / 2 / 4096 * 4096
	for i := range 8 << 10 {
		b[mid+i] = byte(i*7 + 0x1d)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"OLTPLAB_RESULTS=" + path, "HOME=" + dir}
	target := "sqlite:" + filepath.Join(dir, "tpcc.db")
	// Commands that write refuse it.
	for _, args := range [][]string{{"check", "--target", target}, {"monitor", "--duration", "1s"}} {
		r := oltplab(t, env, args...)
		if r.code != exitStore || !strings.Contains(r.err, "damaged") || !strings.Contains(r.err, "--results NEW.db") {
			t.Errorf("%s: exit %d, %q; want %d and what to do", args[0], r.code, r.err, exitStore)
		}
	}
	// Commands that read show what is intact, or say what is damaged.
	for _, args := range [][]string{{"results", "show", "2", "--json"}, {"results", "list", "--json"}} {
		r := oltplab(t, env, args...)
		switch {
		case r.code == 0 && json.Valid([]byte(r.out)):
		case r.code == exitStore && strings.Contains(r.err, "damaged"):
		default:
			t.Errorf("%s %s: exit %d, %q", args[0], args[1], r.code, r.err)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(after, b) {
		t.Errorf("the damaged store was written to")
	}
}

// TestStoreWaitMustBeADuration: a bad OLTPLAB_STORE_WAIT is bad input,
// refused before anything is measured.
func TestStoreWaitMustBeADuration(t *testing.T) {
	r := oltplab(t, append(storeEnv(t), "OLTPLAB_STORE_WAIT=forever"), "results", "list")
	if r.code != exitUsage || !strings.Contains(r.err, "OLTPLAB_STORE_WAIT") {
		t.Errorf("exit %d, %q; want %d", r.code, r.err, exitUsage)
	}
}
