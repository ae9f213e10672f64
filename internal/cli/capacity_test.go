package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestRunRefusesWhatCannotBeHeld: a run whose virtual users the database
// would not take (more than SQLite's bound of sessions; more than the
// private PostgreSQL server's max_connections of 200) is refused before
// it opens anything, with one line naming the limit, exit 2, and nothing
// stored.
func TestRunRefusesWhatCannotBeHeld(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	env := []string{"OLTPLAB_RESULTS=" + filepath.Join(dir, "results.db"), "HOME=" + dir}
	pg := dbtest.RawURL(dbtest.Postgres(t)) // before the builds: skipped without the server, it builds nothing
	sqlite, _ := builtSQLite(t)
	if r := oltplab(t, env, "build", "--target", pg); r.code != 0 {
		t.Fatalf("build: exit %d", r.code)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--target", sqlite, "--vus", "300"}, "sqlite takes at most 256 sessions"},
		{[]string{"run", "--target", sqlite, "--mode", "tpc-c", "--terminals", "400", "--sessions", "300"}, "sqlite takes at most 256 sessions"},
		{[]string{"run", "--target", pg, "--vus", "4,250"}, "max_connections 200"},
	} {
		r := oltplab(t, env, append(c.args, "--rampup", "0s", "--duration", "1s", "--grace", "0s")...)
		if r.code != exitUsage || !strings.Contains(r.err, c.want) || strings.Count(r.err, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and one line saying %q", strings.Join(c.args[3:], " "), r.code, r.err, exitUsage, c.want)
		}
	}
	if n := finishedRuns(t, env); n != 0 {
		t.Errorf("%d runs stored, want none", n)
	}
}
