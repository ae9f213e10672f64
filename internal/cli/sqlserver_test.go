package cli

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/selftest"
)

// TestWorkflowSQLServer: build, both styles, check, on the T-SQL test
// server (Babelfish; the conformance suite checks the build itself). It
// lacks SQL Server's views and commands: each absence is said in one
// labelled line, TPM is the driver's own count, and rebuild and backup
// refuse to run.
func TestWorkflowSQLServer(t *testing.T) {
	t.Parallel()
	tg := dbtest.SQLServer(t)
	env := storeEnv(t)
	target := dbtest.RawURL(tg)
	if r := oltplab(t, env, "build", "--target", target, "--warehouses", "1", "--workers", "2", "--seed", "7"); r.code != 0 {
		t.Fatalf("build: exit %d", r.code)
	}
	for _, style := range []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL} {
		// The workflow is what this test checks, on the shared test server
		// under the whole suite's load: a stall there is judged by the
		// server-failure tests, not here.
		args := []string{"run", "--target", target, "--vus", "4", "--rampup", "1s", "--duration", "8s", "--json", "--max-stall", "100"}
		if style == dialect.StyleClientSQL {
			args = append(args, "--client-sql")
		}
		r := oltplab(t, env, args...)
		if r.code != 0 {
			t.Fatalf("%s run: exit %d", style, r.code)
		}
		var got struct {
			Result *driver.Result `json:"result"`
		}
		if err := json.Unmarshal([]byte(r.out), &got); err != nil {
			t.Fatalf("run --json: %v", err)
		}
		assertRun(t, got.Result)
		if got.Result.Options.Style != style {
			t.Errorf("style %s, want %s", got.Result.Options.Style, style)
		}
		if strings.Contains(r.err, "absent on this server: sys.dm_os_performance_counters") && got.Result.TPMSource != driver.DriverTPMSource {
			t.Errorf("TPM source %q without the server's counter, want %q", got.Result.TPMSource, driver.DriverTPMSource)
		}
	}
	r := oltplab(t, env, "check", "--target", target, "--json")
	assertChecks(t, r, false)
	if strings.Contains(r.err, "absent on this server: ALTER INDEX") {
		// Babelfish: what needs SQL Server's own commands is refused.
		for _, args := range [][]string{
			{"rebuild", "--target", target},
			{"backup", target, "--to", t.TempDir(), "--cycles", "1"},
		} {
			if r := oltplab(t, env, args...); r.code != exitUsage || !strings.Contains(r.err, "absent on this server: ") {
				t.Errorf("%s on a server without it: exit %d, want %d after the absences", args[0], r.code, exitUsage)
			}
		}
	}
	assertPasswordParameterNeverStored(t, env, tg)
}

// TestSelftest runs oltplab selftest on the T-SQL test server: every check
// passes or is absent, the scratch database is gone afterwards, and the
// password appears nowhere.
func TestSelftest(t *testing.T) {
	t.Parallel()
	admin := dbtest.SQLServerAdmin(t)
	pw := dbtest.Password(admin)
	r := oltplab(t, storeEnv(t), "selftest", "--target", dbtest.RawURL(admin), "--json")
	if r.code != 0 {
		t.Fatalf("selftest: exit %d", r.code)
	}
	var out struct {
		Scratch string           `json:"scratch"`
		Checks  []selftest.Check `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.out), &out); err != nil {
		t.Fatalf("selftest --json: %v", err)
	}
	passed := map[string]bool{}
	for _, c := range out.Checks {
		passed[c.Name] = c.Status == selftest.Passed
	}
	for _, name := range []string{"connect", "build 1 warehouse", "procedures: New-Order (TPC-C 2.4)", "client-sql: New-Order rollback (TPC-C 2.4.2.3)",
		"consistency after the transactions (TPC-C 3.3.2)", "CPU calibration"} {
		if !passed[name] {
			t.Errorf("check %q did not pass", name)
		}
	}
	if strings.Contains(r.out+r.err, pw) {
		t.Errorf("the password appears in selftest's output")
	}
	// The scratch database is gone: opening it fails for want of it.
	u, err := url.Parse(out.Scratch)
	if err != nil || !strings.HasPrefix(u.Query().Get("database"), "oltplab_selftest_") {
		t.Fatalf("scratch %q: not a scratch database's target", out.Scratch)
	}
	q := admin.URL.Query()
	q.Set("database", u.Query().Get("database"))
	gone := *admin.URL
	gone.RawQuery = q.Encode()
	tg := admin
	tg.URL = &gone
	if r := oltplab(t, storeEnv(t), "check", "--target", dbtest.RawURL(tg)); r.code != exitConnect {
		t.Errorf("check on the dropped scratch database: exit %d, want %d (no such database)", r.code, exitConnect)
	}
}
