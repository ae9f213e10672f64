// Package testenv decides, in one place, whether a test may run here:
// what it needs from its surroundings (a server, a program, root) and
// whether it is long.
//
// The rule: `go test -short` skips every test that starts a server or a
// process, or builds and drives a TPC-C database (the fast path a
// contributor runs). Otherwise a test whose need is missing skips on a
// developer machine, and fails where everything is required: under CI
// (CI set) or OLTPLAB_REQUIRE_SERVERS=1, as `make test` sets it, so that
// CI never passes by skipping the server tests.
//
// Only _test.go files and test-only packages import it. It imports
// nothing of oltplab.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Need is something a test needs from the machine it runs on.
type Need string

const (
	// Postgres, MariaDB and SQLServer are the private servers
	// scripts/testservers.sh starts (make test) and names in
	// OLTPLAB_TEST_POSTGRES, OLTPLAB_TEST_MYSQL, OLTPLAB_TEST_SQLSERVER
	// (Babelfish for PostgreSQL for the SQL Server dialect).
	Postgres  Need = "postgres"
	MariaDB   Need = "mariadb"
	SQLServer Need = "sqlserver"
	// ManagedPostgres and ManagedMariaDB are the installed server
	// binaries a test starts managed instances from (internal/instance):
	// Debian's PostgreSQL 15 and MariaDB packages.
	ManagedPostgres Need = "managed-postgres"
	ManagedMariaDB  Need = "managed-mariadb"
	// Fio is the fio program; Chromium a headless browser; Python
	// python3, with which scripts/tpchref.sh installs the reference
	// TPC-H implementations into a virtual environment.
	Fio      Need = "fio"
	Chromium Need = "chromium"
	Python   Need = "python"
	// Root is running as root: tests that play another user against
	// oltplab as root, or that make cgroups (CI runs the tests as root).
	Root Need = "root"
	// Subprocess is the test binary run again as a process of its own
	// (oltplab's command line, another store writer): always there, but
	// a process, so -short skips it.
	Subprocess Need = "subprocess"
	// Long is a test that builds a TPC-C database or drives a timed run:
	// seconds of CPU each, minutes on a loaded machine. Always there;
	// -short skips it.
	Long Need = "long"
)

// Require skips t under -short, and otherwise unless each of needs is
// here: a missing one skips t on a developer machine and fails it where
// CI requires everything (Required).
func Require(t testing.TB, needs ...Need) {
	t.Helper()
	for _, n := range needs {
		if !known[n] {
			t.Fatalf("testenv: unknown need %q", string(n))
		}
	}
	if testing.Short() && len(needs) > 0 {
		t.Skipf("-short: needs %v", needs)
	}
	for _, n := range needs {
		if why := missing(n); why != "" {
			Unavailable(t, n, why)
		}
	}
}

// Unavailable is Require's verdict on a need that t found missing itself
// (a script that found no Python, a host that cannot make cgroups): it
// skips t on a developer machine and fails it where CI requires
// everything, saying why.
func Unavailable(t testing.TB, n Need, why any) {
	t.Helper()
	if Required() {
		t.Fatalf("%s: %v (CI or OLTPLAB_REQUIRE_SERVERS=1 requires it: run the tests through `make test`, which installs and starts what they need)", n, why)
	}
	t.Skipf("%s: %v (`make test` installs and starts what the tests need)", n, why)
}

// Required reports whether a missing need fails a test instead of
// skipping it: under CI (CI set) or OLTPLAB_REQUIRE_SERVERS=1.
func Required() bool {
	return os.Getenv("CI") != "" || os.Getenv("OLTPLAB_REQUIRE_SERVERS") == "1"
}

// Env returns the value of a server need's variable (the admin URL
// scripts/testservers.sh exported), after Require(t, n).
func Env(t testing.TB, n Need) string {
	t.Helper()
	Require(t, n)
	return os.Getenv(serverEnv[n])
}

var serverEnv = map[Need]string{
	Postgres:  "OLTPLAB_TEST_POSTGRES",
	MariaDB:   "OLTPLAB_TEST_MYSQL",
	SQLServer: "OLTPLAB_TEST_SQLSERVER",
}

// missing says why n is not here, "" when it is.
func missing(n Need) string {
	switch n {
	case Postgres, MariaDB, SQLServer:
		if os.Getenv(serverEnv[n]) == "" {
			return serverEnv[n] + " is not set: scripts/testservers.sh starts the private servers"
		}
	case ManagedPostgres:
		if !anyExecutable("/usr/lib/postgresql/15/bin/postgres") {
			return "PostgreSQL 15 is not installed (/usr/lib/postgresql/15/bin/postgres; Debian package postgresql-15)"
		}
	case ManagedMariaDB:
		if _, err := exec.LookPath("mariadbd"); err != nil && !anyExecutable("/usr/sbin/mariadbd") {
			return "MariaDB is not installed (mariadbd; Debian package mariadb-server)"
		}
	case Fio:
		if _, err := exec.LookPath("fio"); err != nil {
			return "fio is not installed (Debian package fio)"
		}
	case Chromium:
		if ChromiumPath() == "" {
			return "chromium is not installed (Debian package chromium)"
		}
	case Python:
		if _, err := exec.LookPath("python3"); err != nil {
			return "python3 is not installed (Debian packages python3, python3-venv)"
		}
	case Root:
		if os.Geteuid() != 0 {
			return "not running as root"
		}
	}
	return ""
}

var known = map[Need]bool{Postgres: true, MariaDB: true, SQLServer: true, ManagedPostgres: true, ManagedMariaDB: true,
	Fio: true, Chromium: true, Python: true, Root: true, Subprocess: true, Long: true}

// ChromiumPath returns the headless browser's path, "" without one.
func ChromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func anyExecutable(paths ...string) bool {
	for _, p := range paths {
		if fi, err := os.Stat(filepath.Clean(p)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}
