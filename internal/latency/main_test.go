package latency

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/testenv"
)

// helperEnv makes the test binary a helper process that mounts a layer
// over the directory it names, starts a process inside it, prints what
// it made and waits to be killed.
const helperEnv = "OLTPLAB_LATENCY_TEST_HELPER"

func TestMain(m *testing.M) {
	if IsDaemon() {
		os.Exit(DaemonMain())
	}
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helperMain(dir))
	}
	os.Exit(m.Run())
}

// helperLayer is what the helper process prints.
type helperLayer struct {
	Daemon int    `json:"daemon"`
	Inside int    `json:"inside"`
	Source string `json:"source"`
	Error  string `json:"error,omitempty"`
}

func helperMain(dir string) int {
	enc := json.NewEncoder(os.Stdout)
	d, err := claim.Take(dir, claim.NewMark(claim.KindInstance), claim.TakeOptions{Reuse: []claim.Kind{claim.KindInstance}})
	if err != nil {
		_ = enc.Encode(helperLayer{Error: err.Error()})
		return 1
	}
	l, err := Mount(context.Background(), []Dir{{Role: "data", Dir: d}}, Options{Settings: Settings{}})
	if err != nil {
		_ = enc.Encode(helperLayer{Error: err.Error()})
		return 1
	}
	// A process inside, working in the mount, as a server would.
	script := "echo written through the layer > " + filepath.Join(dir, "inside") + " && exec sleep 3600"
	if os.Getenv(helperEnv+"_ESCAPE") != "" {
		// A process that outlives its parent, holding the namespace.
		script = "cd " + dir + " && (setsid sleep 3600 >/dev/null 2>&1 & echo $! > " + os.Getenv(helperEnv+"_ESCAPE") + ") && " + script
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c, err := l.Start(cmd)
	if err != nil {
		_ = enc.Encode(helperLayer{Error: err.Error()})
		return 1
	}
	// Wait until the file is there (written through the layer).
	for range 100 {
		if _, err := os.Stat(filepath.Join(dir, "inside")); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = enc.Encode(helperLayer{Daemon: l.PID(), Inside: cmd.Process.Pid, Source: l.Mounts()[0].Source})
	_ = c.Wait() // until killed
	return 0
}

// needRoot skips a test that mounts a layer when this process cannot
// (not root, no FUSE), except under CI, which must run them.
func needRoot(t testing.TB) {
	t.Helper()
	testenv.Require(t, testenv.Root)
	if err := Check(); err != nil {
		testenv.Unavailable(t, testenv.Root, err)
	}
}

// takeDir is a new directory below a temporary one, taken and marked as a
// managed instance's directory is.
func takeDir(t testing.TB, name string) *claim.Dir {
	t.Helper()
	root, err := os.MkdirTemp("", "oltplab-latency-test-")
	if err == nil {
		err = os.Chmod(root, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	d, err := claim.Take(filepath.Join(root, name), claim.NewMark(claim.KindInstance), claim.TakeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// mount mounts a layer over d with s, closed at the test's end.
func mount(t testing.TB, s Settings, dirs ...Dir) *Layer {
	t.Helper()
	l, err := Mount(context.Background(), dirs, Options{Settings: s, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return l
}

// inside runs a shell script inside the layer's namespace, as uid and gid
// (-1: root), and returns its output.
func inside(t testing.TB, l *Layer, uid int, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if uid >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := l.Run(cmd); err != nil {
		t.Fatalf("inside the layer: %v\n%s\n%s", err, script, out.String())
	}
	return out.String()
}

// mountedAnywhere lists the mounts whose source is s in the mount table
// of any process of this host.
func mountedAnywhere(source string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "mountinfo"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, source) {
				out = append(out, fmt.Sprintf("process %s: %s", e.Name(), line))
				break
			}
		}
	}
	return out
}

// takeDirIn is the new directory name in base, taken and marked as a
// managed instance's directory is.
func takeDirIn(t testing.TB, base, name string) *claim.Dir {
	t.Helper()
	d, err := claim.Take(filepath.Join(base, name), claim.NewMark(claim.KindInstance), claim.TakeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
