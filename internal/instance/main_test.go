package instance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/testenv"
)

// helperEnv makes the test binary a helper process that starts an
// instance on the directory it names, prints it, and waits to be killed.
const helperEnv = "OLTPLAB_INSTANCE_TEST_HELPER"

// testRoot holds every test's data directories: below the system's
// temporary directory with mode 0755, so that the server's own user can
// reach them when the tests run as root.
var testRoot string

func TestMain(m *testing.M) {
	// A managed instance's latency layer is served by this binary again.
	if latency.IsDaemon() {
		os.Exit(latency.DaemonMain())
	}
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helperMain(dir))
	}
	root, err := os.MkdirTemp("", "oltplab-instance-test-")
	if err == nil {
		err = os.Chmod(root, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testRoot = root
	code := m.Run()
	os.RemoveAll(root)
	os.Exit(code)
}

// helperLatencyEnv gives the helper's instance a latency layer with
// these settings.
const helperLatencyEnv = "OLTPLAB_INSTANCE_TEST_LATENCY"

// helperInstance is what the helper process prints.
type helperInstance struct {
	PID    int    `json:"pid"`
	Port   int    `json:"port"`
	ID     string `json:"id"`
	RunDir string `json:"run_dir"`
	Layer  int    `json:"layer,omitempty"`  // the latency layer's process
	Source string `json:"source,omitempty"` // its mount's source
}

func helperMain(dataDir string) int {
	spec := Spec{Name: "helper", Engine: Postgres, DataDir: dataDir, Settings: fastSettings}
	if v := os.Getenv(helperLatencyEnv); v != "" {
		s, err := latency.Parse(v)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		spec.Latency = &s
	}
	inst, err := Start(context.Background(), spec, nil)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	h := helperInstance{PID: inst.PID(), Port: inst.Port(), ID: inst.id, RunDir: inst.runDir}
	if l := inst.Latency(); l != nil {
		h.Layer, h.Source = l.PID(), l.Mounts()[0].Source
	}
	_ = json.NewEncoder(os.Stdout).Encode(h)
	time.Sleep(time.Hour) // until killed
	return 0
}

// fastSettings trade durability for speed where a test measures nothing.
var fastSettings = map[string]string{"fsync": "off", "full_page_writes": "off", "synchronous_commit": "off"}

// needEngine skips or fails a test whose engine is not installed, as
// testenv.Require decides.
func needEngine(t testing.TB, e Engine) {
	t.Helper()
	need := map[Engine]testenv.Need{Postgres: testenv.ManagedPostgres, MariaDB: testenv.ManagedMariaDB}[e]
	testenv.Require(t, need)
	if _, err := engines[e].locate(""); err != nil {
		testenv.Unavailable(t, need, err)
	}
}

// testLog logs to the test's output at debug level.
func testLog(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type template struct {
	once sync.Once
	dir  string
	err  error
}

var templates sync.Map // Engine → *template

// fromTemplate returns a new data_dir holding an initialised cluster of
// engine e, copied from one made once per test binary (initialising is
// the slow part of a start).
func fromTemplate(t testing.TB, e Engine, name string) string {
	t.Helper()
	v, _ := templates.LoadOrStore(e, &template{})
	tm := v.(*template)
	tm.once.Do(func() {
		tm.dir = filepath.Join(testRoot, "template-"+string(e))
		inst, err := Start(context.Background(), Spec{Name: "template", Engine: e, DataDir: tm.dir, Settings: fastSettings}, nil)
		if err == nil {
			err = inst.Stop(context.Background())
		}
		tm.err = err
	})
	if tm.err != nil {
		t.Fatalf("make a template %s data directory: %v", e, tm.err)
	}
	dst := filepath.Join(testRoot, name)
	if out, err := exec.Command("cp", "-a", tm.dir, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy template: %v: %s", err, out)
	}
	return dst
}

// leftovers lists what remains of instances: processes working in
// dataDir (a server's processes all have their data directory as working
// directory), processes of tree, a listener on port, and cgroups or run
// directories whose names start with prefix.
func leftovers(dataDir string, tree []procStat, port int, prefix string) []string {
	var out []string
	for _, p := range processes(func(procStat) bool { return true }) {
		if cwd, err := os.Readlink("/proc/" + strconv.Itoa(p.PID) + "/cwd"); err == nil && under(cwd, dataDir) {
			out = append(out, fmt.Sprintf("process %d works in %s", p.PID, cwd))
		}
	}
	for _, p := range tree {
		if running(p) {
			out = append(out, fmt.Sprintf("process %d runs", p.PID))
		}
	}
	if port > 0 {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second); err == nil {
			c.Close()
			out = append(out, fmt.Sprintf("port %d accepts connections", port))
		}
	}
	if prefix != "" {
		for _, d := range groupParents() {
			out = append(out, entriesWithPrefix(d, prefix)...)
		}
		out = append(out, entriesWithPrefix(filepath.Join(os.TempDir(), "oltplab-"+strconv.Itoa(os.Geteuid())), prefix)...)
	}
	return out
}

// groupParents are the directories instances' cgroups are made in.
func groupParents() []string {
	hs, _ := liveHierarchies()
	var out []string
	for _, h := range hs {
		if h.v2 {
			out = append(out, filepath.Join(h.mount, cgroupParent))
		} else {
			out = append(out, filepath.Join(h.own, cgroupParent))
		}
	}
	return out
}

func entriesWithPrefix(dir, prefix string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, filepath.Join(dir, e.Name())+" remains")
		}
	}
	return out
}

// ownPrefix is the prefix of the cgroups and run directories of this
// process's instances of that name.
func ownPrefix(name string) string { return fmt.Sprintf("%s.%d.", name, os.Getpid()) }

// nothingLeft waits (up to timeout: killed processes take a moment to be
// reaped) until leftovers are gone, and fails the test if they are not.
func nothingLeft(t *testing.T, timeout time.Duration, dataDir string, tree []procStat, port int, prefix string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := leftovers(dataDir, tree, port, prefix)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left after %s: %s", timeout, strings.Join(left, "; "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
