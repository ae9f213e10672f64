package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestBuildRefusesWhatDoesNotFit: a build whose estimated size passes the
// free space under a local database is refused before anything is
// written (no database file, no build stored), exit 15. 100,000
// warehouses of SQLite are about 9 TB: more than this file system holds.
func TestBuildRefusesWhatDoesNotFit(t *testing.T) {
	env := storeEnv(t)
	file := filepath.Join(t.TempDir(), "big.db")
	r := oltplab(t, env, "build", "--target", "sqlite:"+file, "--warehouses", "100000")
	if r.code != exitNoSpace {
		t.Fatalf("exit code %d, want %d", r.code, exitNoSpace)
	}
	if !strings.Contains(r.err, "MiB free, the build needs about") {
		t.Errorf("stderr %q: want the free and needed space", r.err)
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("the database file was created: want nothing written")
	}
	if l := oltplab(t, env, "results", "list"); strings.Contains(l.out, "build") {
		t.Errorf("results list shows a build:\n%s", l.out)
	}
}

// TestTooManyFailures: metadata that claims two warehouses on a database
// of one makes most transactions fail (their rows do not exist). Such a
// run is measured and stored, with status failures and the count, and
// exits 19: it is not a success.
func TestTooManyFailures(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env := storeEnv(t)
	target, _ := builtSQLite(t)
	tg, err := dialect.ParseTarget(target, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "UPDATE "+tpcc.MetaTable+" SET v = '2' WHERE k = 'warehouses'"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	db.Close()

	r := oltplab(t, env, "run", "--target", target, "--vus", "2", "--rampup", "0s", "--duration", "2s")
	if r.code != exitFailures {
		t.Fatalf("run: exit %d, want %d", r.code, exitFailures)
	}
	if !strings.Contains(r.out, "FAILURES: ") || !strings.Contains(r.err, "failed too often") {
		t.Errorf("want the failure rate in the output and the error")
	}
	l := oltplab(t, env, "results", "list")
	if !strings.Contains(l.out, string(store.StatusFailures)) || !strings.Contains(l.out, "failed too often: ") {
		t.Errorf("results list: want the run with status %s and its failure count", store.StatusFailures)
	}
}
