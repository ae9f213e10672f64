// Package dbtest gives tests a fresh, private database on the servers that
// scripts/testservers.sh started (PostgreSQL, MariaDB, Babelfish for the
// SQL Server dialect) or in a temporary SQLite file. It never touches
// another server: it only reads the admin URLs the script exported
// (OLTPLAB_TEST_POSTGRES, OLTPLAB_TEST_MYSQL, OLTPLAB_TEST_SQLSERVER).
//
// Whether a test without its server skips or fails is testenv.Require's
// decision.
//
// Only _test.go files import this package. It imports dialect, instance,
// testenv and tpcc only (the build benchmarks' files from tpcc's
// generator: WriteTPCCFiles).
package dbtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	mssql "github.com/microsoft/go-mssqldb"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/testenv"
)

func uniqueName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t_" + hex.EncodeToString(b[:])
}

// Postgres creates an empty database on the private PostgreSQL server and
// returns a target for it (password included, as a user would give it). The
// database is dropped when the test ends.
func Postgres(t testing.TB) dialect.Target {
	t.Helper()
	admin := testenv.Env(t, testenv.Postgres)
	name := uniqueName()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to the private PostgreSQL server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, admin); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(ctx)
		}
	})
	return parse(t, withPath(admin, "/"+name))
}

// MySQL creates an empty database on the private MariaDB server and returns
// a target for it. The database is dropped when the test ends.
func MySQL(t testing.TB) dialect.Target {
	t.Helper()
	admin := testenv.Env(t, testenv.MariaDB)
	name := uniqueName()
	db := openMySQLAdmin(t, admin)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		db := openMySQLAdmin(t, admin)
		defer db.Close()
		_, _ = db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name)
	})
	return parse(t, withPath(admin, "/"+name))
}

func openMySQLAdmin(t testing.TB, admin string) *sql.DB {
	t.Helper()
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("parse OLTPLAB_TEST_MYSQL: not a URL")
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatalf("open the private MariaDB server: %v", err)
	}
	return db
}

// SQLServer creates an empty database on the private T-SQL server
// (Babelfish for PostgreSQL, started by scripts/testservers.sh) and
// returns a target for it. The database is dropped when the test ends.
func SQLServer(t testing.TB) dialect.Target {
	t.Helper()
	admin := testenv.Env(t, testenv.SQLServer)
	name := uniqueName()
	db := openSQLServerAdmin(t, admin)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		db := openSQLServerAdmin(t, admin)
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE "+name); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("parse OLTPLAB_TEST_SQLSERVER: not a URL")
	}
	q := u.Query()
	q.Set("database", name)
	u.RawQuery = q.Encode()
	return parse(t, u.String())
}

// SQLServerAdmin returns the private T-SQL server's admin target (its
// master database), for tests that create and drop databases themselves.
func SQLServerAdmin(t testing.TB) dialect.Target {
	t.Helper()
	return parse(t, testenv.Env(t, testenv.SQLServer))
}

func openSQLServerAdmin(t testing.TB, admin string) *sql.DB {
	t.Helper()
	c, err := mssql.NewConnector(admin)
	if err != nil {
		t.Fatalf("parse OLTPLAB_TEST_SQLSERVER: %v", strings.ReplaceAll(err.Error(), admin, "<url>"))
	}
	return sql.OpenDB(c)
}

// SQLite returns a target for a new database file in the test's temporary directory.
func SQLite(t testing.TB) dialect.Target {
	t.Helper()
	return parse(t, "sqlite:"+filepath.Join(t.TempDir(), "tpcc.db"))
}

// Password returns the password of a server target, for tests that prove it
// never appears in any output.
func Password(t dialect.Target) string { return t.Password.Reveal() }

// RawURL returns the target as a user would type it, password included.
func RawURL(t dialect.Target) string {
	if !t.PasswordSet || t.URL == nil {
		return t.String()
	}
	u := *t.URL
	u.User = url.UserPassword(u.User.Username(), t.Password.Reveal())
	return u.String()
}

func withPath(raw, path string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = path
	return u.String()
}

func parse(t testing.TB, raw string) dialect.Target {
	t.Helper()
	tg, err := dialect.ParseTarget(raw, "")
	if err != nil {
		t.Fatalf("parse test target: %v", strings.ReplaceAll(err.Error(), raw, "<target>"))
	}
	return tg
}

// PrivateMySQL starts a MariaDB server of the test's own (a managed
// instance in a temporary directory) and returns a target for its
// database. Its global counters (Com_commit, Com_rollback) then count
// this test's transactions alone, which a server shared with other test
// packages cannot promise. The server stops when the test ends.
func PrivateMySQL(t testing.TB) dialect.Target {
	t.Helper()
	_, tg := PrivateServer(t, instance.MariaDB)
	return tg
}

// PrivateServer starts a server of the test's own, as PrivateMySQL does,
// and returns it with a target for its database: a test that crashes or
// restarts a server (the fault suite) does it to this one, never to the
// servers other packages share.
func PrivateServer(t testing.TB, e instance.Engine) (*instance.Instance, dialect.Target) {
	t.Helper()
	testenv.Require(t, managed[e])
	// The server runs as its own user, who must reach the data directory:
	// t.TempDir's parent is private to this user.
	dir, err := os.MkdirTemp("", "oltplab-private-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The instance lives as long as the context it started with: the test.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	inst, err := instance.Start(ctx, instance.Spec{Engine: e, DataDir: filepath.Join(dir, "data"), MaxConnections: 50,
		Settings: testSettings[e]}, nil)
	if err != nil {
		t.Fatalf("start a private %s server: %v", e, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := inst.Stop(ctx); err != nil {
			t.Errorf("stop the private %s server: %v", e, err)
		}
	})
	return inst, inst.Target()
}

// crashSignal is how CrashRestart kills each engine: PostgreSQL's
// immediate shutdown (SIGQUIT to the postmaster, what `pg_ctl stop -m
// immediate` sends: no checkpoint, crash recovery at the next start) and
// SIGKILL for MariaDB (InnoDB recovers from its redo log).
var crashSignal = map[instance.Engine]syscall.Signal{
	instance.Postgres: syscall.SIGQUIT,
	instance.MariaDB:  syscall.SIGKILL,
}

// CrashRestart kills a private server (PrivateServer) as a crash would,
// waits for it to exit and starts it again on the same port with the same
// password; it returns when the server accepts connections again. It
// returns an error rather than failing the test, so that a test may call
// it from another goroutine while a run goes on.
func CrashRestart(inst *instance.Instance) error {
	done := inst.Done()
	if err := syscall.Kill(inst.PID(), crashSignal[inst.Spec().Engine]); err != nil {
		return fmt.Errorf("kill the private server: %w", err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		return errors.New("the private server did not exit within a minute of its kill")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := inst.Restart(ctx, false); err != nil {
		return fmt.Errorf("restart the private server after its crash: %w", err)
	}
	return nil
}

// managed is what starting a private server of each engine needs.
var managed = map[instance.Engine]testenv.Need{instance.Postgres: testenv.ManagedPostgres, instance.MariaDB: testenv.ManagedMariaDB}

// testSettings trade durability for speed, as scripts/testservers.sh
// does for the shared servers: tests do not measure. InnoDB writes its log
// at each commit (2, not 0): a build's end then need not wait for the
// timed flush (dialect.Syncer), and a killed server keeps its commits.
var testSettings = map[instance.Engine]map[string]string{
	instance.MariaDB: {"innodb_flush_log_at_trx_commit": "2", "innodb_doublewrite": "0", "local_infile": "1"},
}

// Freeze stops a private server (PrivateServer) with SIGSTOP, as a hung
// host or a paused virtual machine would: the server process and every
// process it forked (PostgreSQL's postmaster and each backend and helper,
// which sit in process groups of their own; MariaDB's mariadbd).
// Connections stay open and nothing answers. The returned resume sends
// SIGCONT to the same processes; it may be called more than once, and the
// test must call it whatever happens (defer it): a frozen server never
// ends on its own, and its Stop would wait for it.
func Freeze(inst *instance.Instance) (resume func() error, err error) {
	pid := inst.PID()
	if pid <= 0 {
		return nil, errors.New("the private server is not running")
	}
	// The server first, so that it forks nothing new meanwhile.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("freeze the private server: %w", err)
	}
	tree := descendants(pid)
	resume = func() error {
		var errs []error
		for _, p := range tree {
			if err := syscall.Kill(p, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("resume the private server: %w", err)
		}
		return nil
	}
	for _, p := range tree[1:] {
		if err := syscall.Kill(p, syscall.SIGSTOP); err != nil && !errors.Is(err, syscall.ESRCH) {
			_ = resume()
			return nil, fmt.Errorf("freeze process %d of the private server: %w", p, err)
		}
	}
	return resume, nil
}

// descendants returns pid and every process it forked, parents first,
// from /proc.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	out := []int{pid}
	for k := 0; k < len(out); k++ {
		out = append(out, children[out[k]]...)
	}
	return out
}
