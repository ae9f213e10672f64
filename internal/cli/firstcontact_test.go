package cli

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestMissingDatabase: build on a database the server does not have
// failed with the driver's TLS attempts in the message and exit 5 (as if
// the schema were missing). It exits 3 and says how to create it.
func TestMissingDatabase(t *testing.T) {
	for _, c := range []struct {
		name   string
		target func(testing.TB) dialect.Target
		create string
	}{
		{"postgres", dbtest.Postgres, `CREATE DATABASE "no_such_db"`},
		{"mysql", dbtest.MySQL, "CREATE DATABASE `no_such_db`"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, err := url.Parse(dbtest.RawURL(c.target(t)))
			if err != nil {
				t.Fatal(err)
			}
			u.Path = "/no_such_db"
			q := u.Query()
			q.Del("sslmode") // as a user types it: pgx then tries TLS first
			u.RawQuery = q.Encode()
			r := oltplab(t, storeEnv(t), "build", "--target", u.String())
			if r.code != exitConnect {
				t.Errorf("exit %d, want %d", r.code, exitConnect)
			}
			if !strings.Contains(r.err, c.create) {
				t.Errorf("stderr %q does not say how to create the database (%s)", r.err, c.create)
			}
			if strings.Contains(r.err, "tls") || strings.Contains(r.err, "TLS") {
				t.Errorf("stderr carries the driver's TLS attempts: %q", r.err)
			}
		})
	}
}

// TestTargetGivenTwice: a repeated --target silently kept the last one.
func TestTargetGivenTwice(t *testing.T) {
	r := oltplab(t, storeEnv(t), "run", "--target", "sqlite:a.db", "--target", "postgres://u:s3cret@127.0.0.1/x")
	if r.code != exitUsage {
		t.Errorf("exit %d, want %d", r.code, exitUsage)
	}
	if !strings.Contains(r.err, "--target given twice") {
		t.Errorf("stderr %q does not say --target was given twice", r.err)
	}
	if strings.Contains(r.err, "s3cret") {
		t.Errorf("stderr shows the password")
	}
	// The environment's target is a default, not a first value.
	env := append(storeEnv(t), "OLTPLAB_TARGET=sqlite:env.db")
	if r := oltplab(t, env, "run", "--target", "sqlite:"+t.TempDir()+"/flag.db", "--duration", "1s"); r.code == exitUsage {
		t.Errorf("--target over OLTPLAB_TARGET refused: %q", r.err)
	}
}

// TestResultsShowAndProfiles: results show printed no latency table
// without --json, and results list --kind profile was refused.
func TestResultsShowAndProfiles(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env := storeEnv(t)
	target := "sqlite:" + t.TempDir() + "/tpcc.db"
	if r := oltplab(t, env, "build", "--target", target); r.code != 0 {
		t.Fatalf("build: exit %d", r.code)
	}
	if r := oltplab(t, env, "run", "--target", target, "--vus", "1", "--rampup", "0s", "--duration", "1s", "--label", "lat"); r.code != 0 {
		t.Fatalf("run: exit %d", r.code)
	}
	r := oltplab(t, env, "results", "show", "2")
	for _, want := range []string{"p99 ms", "new_order", "stock_level", "NOPM"} {
		if r.code != 0 || !strings.Contains(r.out, want) {
			t.Errorf("results show 2: exit %d, lacks %q", r.code, want)
		}
	}
	r = oltplab(t, env, "results", "list", "--kind", "profile")
	if r.code != 0 || !strings.Contains(r.out, "lat") || !strings.Contains(r.out, "1 ok") {
		t.Errorf("results list --kind profile: exit %d, want the profile 'lat' with its run", r.code)
	}
}

// TestResetBetweenDocumentedAndCleanable: --reset-between's copy and its
// handling of other sessions are in run --help, and oltplab clean removes
// a copy left behind.
func TestResetBetweenDocumentedAndCleanable(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env := storeEnv(t)
	r := oltplab(t, env, "run", "--help")
	for _, want := range []string{"Keeps a full copy", "free space", "oltplab clean", "-terminate-sessions", "never another user's",
		"fresh from oltplab build"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
	target, file := builtSQLite(t)
	dir := filepath.Dir(file)
	tg, _ := dialect.ParseTarget(target, "")
	db, err := dialect.Open(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.(dialect.Resetter).SaveBaseline(context.Background()); err != nil { // as a killed profile leaves it
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(dir + "/tpcc.db.oltplab-base"); err != nil {
		t.Fatalf("no baseline copy to clean: %v", err)
	}
	if r := oltplab(t, env, "clean", "--target", target); r.code != 0 {
		t.Fatalf("clean: exit %d", r.code)
	}
	if _, err := os.Stat(dir + "/tpcc.db.oltplab-base"); !os.IsNotExist(err) {
		t.Errorf("the baseline copy is still there after clean: %v", err)
	}
	if r := oltplab(t, env, "run", "--target", target, "--terminate-sessions"); r.code != exitUsage {
		t.Errorf("--terminate-sessions without --reset-between: exit %d, want %d", r.code, exitUsage)
	}
}

// TestWorkloadSaid: the tool said "TPC-C" without saying that its default
// workload is TPROC-C style (no keying or think time), whose figures are
// not tpmC.
func TestWorkloadSaid(t *testing.T) {
	r := oltplab(t, storeEnv(t), "--help")
	for _, want := range []string{"TPROC-C style", "no keying", "not tpmC", "3.3.2"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("oltplab --help lacks %q", want)
		}
	}
}
