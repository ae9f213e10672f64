package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/testenv"
)

// asCLIEnv makes the test binary run oltplab's command line (as
// cmd/oltplab does), for tests that need it as a process of its own.
const asCLIEnv = "OLTPLAB_TEST_AS_CLI"

func TestMain(m *testing.M) {
	// A managed instance's latency layer is served by this binary again.
	if latency.IsDaemon() {
		os.Exit(latency.DaemonMain())
	}
	// These tests share the host with other packages' servers, which are
	// foreign CPU to their runs: they are not about interference
	// (scenario.JudgeInterference).
	scenario.JudgeInterference(false)
	if os.Getenv(asCLIEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := testMain(ctx, os.Args[1:], os.Environ(), Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
		stop()
		os.Exit(code)
	}
	code := m.Run()
	removeBuiltDBs()
	os.Exit(code)
}

// reachableDir is a temporary directory a server's own user can reach
// (t.TempDir's parents are private to the test's user).
func reachableDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "oltplab-cli-instance-")
	if err == nil {
		err = os.Chmod(d, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestInstanceSettingsRefused: `instance start --set` refuses every
// spelling of a setting that would open a managed server to the network,
// weaken its authentication or move its files, with one line naming the
// server's own name for it, exit code 2, and nothing created.
func TestInstanceSettingsRefused(t *testing.T) {
	env := append(storeEnv(t), "XDG_RUNTIME_DIR="+t.TempDir())
	for _, c := range []struct{ engine, set, canonical string }{
		{"postgres", "listen-addresses=*", "listen_addresses"},
		{"postgres", "LISTEN_ADDRESSES=0.0.0.0", "listen_addresses"},
		{"postgres", "hba-file=/tmp/trust_hba.conf", "hba_file"},
		{"postgres", "Unix-Socket-Permissions=0777", "unix_socket_permissions"},
		{"postgres", "include_if_exists=/tmp/more.conf", "include_if_exists"},
		{"postgres", "shared_preload_libraries=/tmp/evil.so", "shared_preload_libraries"},
		{"postgres", "archive_command=sh -c id", "archive_command"},
		{"mariadb", "bind=0.0.0.0", "bind-address"},
		{"mariadb", "bind_address=0.0.0.0", "bind-address"},
		{"mariadb", "skip-grant-tables=1", "skip-grant-tables"},
		{"mariadb", "skip_grant=1", "skip-grant-tables"},
		{"mariadb", "loose-enable-skip-grant-tables=", "skip-grant-tables"},
		{"mariadb", "disable-skip-networking=", "skip-networking"},
		{"mariadb", "plugin-innodb-data-home-dir=/", "innodb-data-home-dir"},
		{"mariadb", "USER=root", "user"},
	} {
		t.Run(c.engine+"/"+c.set, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			r := oltplab(t, env, "instance", "start", "--engine", c.engine, "--data-dir", dir, "--set", c.set)
			if r.code != exitUsage {
				t.Errorf("exit code: got %d, want %d", r.code, exitUsage)
			}
			name, _, _ := strings.Cut(c.set, "=")
			if lines := strings.Split(strings.TrimSpace(r.err), "\n"); len(lines) != 1 ||
				!strings.HasPrefix(lines[0], "oltplab: ") || !strings.Contains(lines[0], "setting "+name) || !strings.Contains(lines[0], c.canonical) {
				t.Errorf("stderr: got %q, want one line naming %s and %s", r.err, name, c.canonical)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("data directory %s: %v, want it never created", dir, err)
			}
		})
	}
}

// TestInstanceBadInput: each bad instance spec gets one line on stderr
// and its own exit code, and nothing starts.
func TestInstanceBadInput(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	env := append(storeEnv(t), "XDG_RUNTIME_DIR="+t.TempDir())
	dir := reachableDir(t)
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	shm := filepath.Join("/dev/shm", "oltplab-cli-test-"+strconv.Itoa(os.Getpid()))
	defer os.RemoveAll(shm)
	start := []string{"instance", "start", "--engine", "postgres"}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"no subcommand", []string{"instance"}, exitUsage},
		{"unknown subcommand", []string{"instance", "restart"}, exitUsage},
		{"no engine", []string{"instance", "start", "--data-dir", dir}, exitUsage},
		{"unknown engine", []string{"instance", "start", "--engine", "oracle", "--data-dir", dir}, exitUsage},
		{"sqlite", []string{"instance", "start", "--engine", "sqlite", "--data-dir", dir}, exitUsage},
		{"no data dir", start, exitUsage},
		{"bad size", append(start, "--data-dir", dir, "--memory", "lots"), exitUsage},
		{"bad setting", append(start, "--data-dir", dir, "--set", "nonsense"), exitUsage},
		{"managed setting", append(start, "--data-dir", dir, "--set", "port=5432"), exitUsage},
		{"bad latency", append(start, "--data-dir", dir, "--latency", "read=4"), exitUsage},
		{"latency with I/O caps", append(start, "--data-dir", dir, "--latency", "read=1ms", "--write-iops", "100"), exitUsage},
		{"binary missing", append(start, "--data-dir", dir, "--bin-dir", "/nonexistent/bin"), exitBinary},
		{"directory unusable", append(start, "--data-dir", filepath.Join(file, "data")), exitDirectory},
		{"cpus beyond the host", append(start, "--data-dir", dir, "--cpus", "0-4096"), exitCPUs},
		{"io_limit without a device", append(start, "--data-dir", shm, "--write-iops", "100"), exitNoDevice},
		{"stop unknown", []string{"instance", "stop", "nosuch"}, exitUsage},
		{"port taken", append(start, "--data-dir", dir, "--port", takenPort), exitUsage},
		{"port out of range", append(start, "--data-dir", dir, "--port", "70000"), exitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := oltplab(t, env, c.args...)
			if r.code != c.want {
				t.Errorf("exit code: got %d, want %d", r.code, c.want)
			}
			if lines := strings.Split(strings.TrimSpace(r.err), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "oltplab: ") {
				t.Errorf("stderr: want one line, got %q", r.err)
			}
			if strings.Contains(r.err, "goroutine ") {
				t.Errorf("stack trace on stderr: %s", r.err)
			}
		})
	}
	if r := oltplab(t, env, "instance", "list"); r.code != 0 || !strings.Contains(r.out, "no managed instances") {
		t.Errorf("list after failures: %d %q", r.code, r.out)
	}
}

// TestInstanceExitCodes: every kind of managed-instance failure has its
// own exit code (those the host cannot be made to produce included).
func TestInstanceExitCodes(t *testing.T) {
	seen := map[int]instance.Kind{}
	for _, k := range []instance.Kind{instance.KindSpec, instance.KindBinary, instance.KindDirectory,
		instance.KindCPUs, instance.KindDevice, instance.KindControl, instance.KindStart} {
		err := fmt.Errorf("start: %w", &instance.Error{Kind: k, Err: errors.New("x")})
		code := exitCode(err)
		if code == exitFailure || code == exitOK {
			t.Errorf("%s: exit code %d", k, code)
		}
		if prev, ok := seen[code]; ok {
			t.Errorf("%s and %s share exit code %d", prev, k, code)
		}
		seen[code] = k
	}
}

// TestInstanceForeground: `instance start` runs as its own process,
// prints a target that works with the password file, shows in `instance
// list`, and `instance stop` ends it (exit 0) with nothing left running.
func TestInstanceForeground(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres, testenv.Subprocess)
	dir := reachableDir(t)
	env := append(storeEnv(t), "XDG_RUNTIME_DIR="+t.TempDir())
	cmd := exec.Command(os.Args[0], "instance", "start", "--engine", "postgres", "--name", "cli-pg",
		"--data-dir", filepath.Join(dir, "pg"), "--memory", "32MB", "--max-connections", "40", "--set", "fsync=off")
	cmd.Env = append(append(os.Environ(), env...), asCLIEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var stdout strings.Builder
	var target, pwFile string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		stdout.WriteString(line + "\n")
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "target:"); ok {
			target = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "password file:"); ok {
			pwFile, _, _ = strings.Cut(strings.TrimSpace(v), " ")
		}
		if strings.HasPrefix(line, "Stop with") {
			break
		}
	}
	if target == "" || pwFile == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no target or password file printed:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	done := make(chan struct{})
	go func() {
		for sc.Scan() {
			stdout.WriteString(sc.Text() + "\n")
		}
		close(done)
	}()
	if fi, err := os.Stat(pwFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("password file %s: %v, want mode 0600", pwFile, err)
	}
	tg, err := dialect.ParseTarget(target, pwFile)
	if err != nil {
		t.Fatal(err)
	}
	u := *tg.URL
	port := u.Port()
	pw := tg.Password.Reveal()
	conn, err := pgx.Connect(context.Background(), dbtest.RawURL(tg))
	if err != nil {
		t.Fatalf("connect with the password file: %v", err)
	}
	var maxConn string
	if err := conn.QueryRow(context.Background(), "SELECT current_setting('max_connections')").Scan(&maxConn); err != nil || maxConn != "50" {
		t.Errorf("max_connections: got %q, %v; want 50", maxConn, err)
	}
	conn.Close(context.Background())

	list := oltplab(t, env, "instance", "list")
	if list.code != 0 || !strings.Contains(list.out, "cli-pg") || !strings.Contains(list.out, "running") {
		t.Errorf("list: %d %q", list.code, list.out)
	}
	if r := oltplab(t, env, "instance", "start", "--engine", "postgres", "--name", "cli-pg", "--data-dir", filepath.Join(dir, "other")); r.code != exitUsage {
		t.Errorf("second instance of the same name: exit %d, want %d", r.code, exitUsage)
	}
	if r := oltplab(t, env, "instance", "stop", "cli-pg"); r.code != 0 {
		t.Errorf("stop: exit %d", r.code)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("instance start exited with %v; stderr:\n%s", err, stderr.String())
	}
	<-done
	if !strings.Contains(stdout.String(), "instance cli-pg stopped") {
		t.Errorf("no stop message in:\n%s", stdout.String())
	}
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), time.Second); err == nil {
		c.Close()
		t.Errorf("port %s still accepts connections", port)
	}
	if _, err := os.Stat(pwFile); err == nil {
		t.Error("password file left behind")
	}
	for _, s := range []string{stdout.String(), stderr.String(), list.out, list.err} {
		if strings.Contains(s, pw) {
			t.Error("the password appears in the output")
		}
	}
	if r := oltplab(t, env, "instance", "list"); !strings.Contains(r.out, "no managed instances") {
		t.Errorf("list after stop: %q", r.out)
	}
}
