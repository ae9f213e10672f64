package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestCleanAndResetLeaveLookAlikes: what a user keeps at the name of
// oltplab's baseline copy (<db>_oltplab_base with a table in it, a file
// <file>.oltplab-base, a symbolic link there) survives `oltplab clean` and
// `run --reset-between`, which refuse with one line and exit 5; oltplab's
// own copy is still removed, at the end of a profile and by clean.
func TestCleanAndResetLeaveLookAlikes(t *testing.T) {
	testenv.Require(t, testenv.Long)
	for _, e := range []struct {
		name       string
		target     func(t *testing.T) dialect.Target
		lookAlikes []dbtest.LookAlike
	}{
		{"sqlite", func(t *testing.T) dialect.Target { return dbtest.SQLite(t) }, dbtest.SQLiteLookAlikes},
		{"postgres", func(t *testing.T) dialect.Target { return dbtest.Postgres(t) }, dbtest.PostgresLookAlikes},
		{"mysql", func(t *testing.T) dialect.Target { return dbtest.MySQL(t) }, dbtest.MySQLLookAlikes},
	} {
		t.Run(e.name, func(t *testing.T) {
			tg := e.target(t)
			target := dbtest.RawURL(tg)
			env := storeEnv(t)
			if r := oltplab(t, env, "build", "--target", target, "--warehouses", "1"); r.code != 0 {
				t.Fatalf("build: exit %d: %s", r.code, r.err)
			}
			run := []string{"run", "--target", target, "--vus", "1", "--rampup", "0s", "--duration", "1s", "--reset-between"}
			for _, la := range e.lookAlikes {
				intact, remove := la.Plant(t, tg)
				for _, args := range [][]string{{"clean", "--target", target}, run} {
					r := oltplab(t, env, args...)
					if r.code != exitSchema {
						t.Errorf("%s with %s at the baseline's name: exit %d, want %d", args[0], la.Name, r.code, exitSchema)
					}
					var errLines []string
					for _, l := range strings.Split(strings.TrimSpace(r.err), "\n") {
						if strings.HasPrefix(l, "oltplab: ") {
							errLines = append(errLines, l)
						}
					}
					if len(errLines) != 1 || !strings.Contains(errLines[0], "was not created by oltplab (no mark)") {
						t.Errorf("%s with %s: stderr %q, want one error line saying it was not created by oltplab", args[0], la.Name, r.err)
					}
					if err := intact(); err != nil {
						t.Errorf("%s changed %s of the user's: %v", args[0], la.Name, err)
					}
				}
				remove()
			}
			// oltplab's own copy: made and dropped by a profile, and left by
			// a killed one for clean to remove.
			if r := oltplab(t, env, append(run, "--repeat", "2")...); r.code != 0 {
				t.Fatalf("run --reset-between: exit %d: %s", r.code, r.err)
			}
			if dbtest.BaselineExists(t, tg) {
				t.Errorf("run --reset-between left its baseline copy")
			}
			db, err := dialect.Open(context.Background(), tg)
			if err != nil {
				t.Fatal(err)
			}
			err = db.(dialect.Resetter).SaveBaseline(context.Background())
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !dbtest.BaselineExists(t, tg) {
				t.Fatalf("no baseline copy to clean")
			}
			if r := oltplab(t, env, "clean", "--target", target); r.code != 0 {
				t.Fatalf("clean: exit %d: %s", r.code, r.err)
			}
			if dbtest.BaselineExists(t, tg) {
				t.Errorf("clean left oltplab's baseline copy")
			}
		})
	}
}
