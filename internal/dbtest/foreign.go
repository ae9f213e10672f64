package dbtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/testenv"
)

// ForeignPostgres starts, for the test, a PostgreSQL cluster that
// oltplab does not manage, as a user's own server would be: initdb with
// role as its only superuser (none of oltplab's), SCRAM passwords on
// loopback, replication allowed, from the installed binaries; the server
// is a child of the test process (it dies with it) and is stopped when
// the test ends. It returns role's target for a new database, tpcc.
// Needs PostgreSQL's binaries (testenv.ManagedPostgres).
func ForeignPostgres(t testing.TB, role string) dialect.Target {
	t.Helper()
	testenv.Require(t, testenv.ManagedPostgres)
	bin := ""
	for _, d := range append([]string{"/usr/lib/postgresql/15/bin"}, globSorted("/usr/lib/postgresql/*/bin")...) {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			bin = d
			break
		}
	}
	if bin == "" {
		testenv.Unavailable(t, testenv.ManagedPostgres, "PostgreSQL's initdb is not installed")
	}
	// The server's own account, when the test runs as root.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("oltplab's tests run as root and PostgreSQL must not: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "oltplab-foreign-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	password := uniqueName()
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		for _, p := range []string{dir, filepath.Join(dir, "pw")} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	command := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(bin, name), args...)
		c.Dir = dir
		c.Env = []string{"LANG=C.UTF-8", "HOME=" + dir}
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
		return c
	}
	data := filepath.Join(dir, "data")
	if out, err := command("initdb", "-D", data, "-U", role, "--pwfile="+filepath.Join(dir, "pw"), "-A", "scram-sha-256",
		"-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	server := command("postgres", "-D", data, "-c", "listen_addresses=127.0.0.1", "-c", "port="+strconv.Itoa(port),
		"-c", "unix_socket_directories="+dir, "-c", "fsync=off", "-c", "max_connections=50")
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	server.Stdout, server.Stderr = log, log
	// The parent-death signal belongs to the thread that forks, not to the
	// test process: a thread the runtime later hands to a goroutine that
	// ends locked (as instance's children do) would take the server with
	// it. So one locked thread forks it and lives until it has exited.
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := server.Start()
		started <- err
		if err == nil {
			_ = server.Wait()
			close(done)
		}
	}()
	if err := <-started; err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		_ = server.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = server.Process.Kill()
			<-done
		}
	})
	admin := url.URL{Scheme: "postgres", User: url.UserPassword(role, password), Host: fmt.Sprintf("127.0.0.1:%d", port),
		Path: "/postgres", RawQuery: "sslmode=disable"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var conn *pgx.Conn
	for {
		if conn, err = pgx.Connect(ctx, admin.String()); err == nil {
			break
		}
		select {
		case <-done:
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Fatalf("PostgreSQL exited: %s", b)
		case <-ctx.Done():
			t.Fatalf("PostgreSQL did not accept connections: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE tpcc"); err != nil {
		t.Fatalf("create database tpcc: %v", err)
	}
	admin.Path = "/tpcc"
	return parse(t, admin.String())
}

func globSorted(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}
