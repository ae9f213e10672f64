package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestBackupSQLite: `oltplab backup` on embedded SQLite runs its cycles,
// checks each restored copy, stores one result of kind backup, and
// refuses bad input with one line and exit code 2.
func TestBackupSQLite(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env := storeEnv(t)
	target, _ := builtSQLite(t)
	to := t.TempDir()
	r := oltplab(t, env, "backup", target, "--to", to, "--cycles", "1", "--label", "bk", "--json")
	if r.code != 0 {
		t.Fatalf("backup: exit %d: %s", r.code, r.err)
	}
	var out scenario.BackupOutcome
	if err := json.Unmarshal([]byte(r.out), &out); err != nil {
		t.Fatalf("backup --json: %v", err)
	}
	if len(out.Cycles) != 1 || out.Cycles[0].Check == nil || !out.Cycles[0].Check.Passed || out.Cycles[0].Backup.Bytes == 0 {
		t.Errorf("cycles: %+v, want one whose restored copy passed the check", out.Cycles)
	}
	runs := storedRuns(t, env)
	var kinds []string
	for _, run := range runs {
		kinds = append(kinds, string(run.Kind))
	}
	if !strings.Contains(strings.Join(kinds, ","), string(store.KindBackup)) {
		t.Errorf("stored kinds %v, want a backup", kinds)
	}
	if r := oltplab(t, env, "results", "list", "--kind", "backup"); r.code != 0 || !strings.Contains(r.out, "1 backup(s): ") {
		t.Errorf("results list --kind backup: exit %d, %q", r.code, r.out)
	}
	if r := oltplab(t, env, "backup", target, "--to", to, "--cycles", "1", "--restore=false"); r.code != 0 || !strings.Contains(r.out, "cycle") {
		t.Errorf("backup --restore=false: exit %d", r.code)
	}
	if entries, _ := os.ReadDir(to); len(entries) != 0 {
		t.Errorf("%s holds %d entries, want none (no --keep)", to, len(entries))
	}

	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"no --to", []string{"backup", target}, exitUsage},
		{"no target", []string{"backup", "--to", to}, exitUsage},
		{"zero cycles", []string{"backup", target, "--to", to, "--cycles", "0"}, exitUsage},
		{"unknown method", []string{"backup", target, "--to", to, "--method", "tar"}, exitUsage},
		{"two targets", []string{"backup", target, target + "x", "--to", to}, exitUsage},
		{"server method on sqlite", []string{"backup", target, "--to", to, "--method", "dump"}, exitUsage},
		{"cap on sqlite", []string{"backup", target, "--to", to, "--write-iops", "100"}, exitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := oltplab(t, env, c.args...)
			if r.code != c.want {
				t.Errorf("exit code: got %d, want %d", r.code, c.want)
			}
			if lines := strings.Count(strings.TrimSpace(r.err), "\n") + 1; lines != 1 || !strings.HasPrefix(r.err, "oltplab: ") {
				t.Errorf("stderr: got %d lines %q, want one", lines, r.err)
			}
		})
	}
}

// TestBackupExitCodes: a failed backup has its own exit code; a cause
// with its own code (a missing tool, an interruption) keeps it.
func TestBackupExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{&scenario.BackupError{Cycle: 1, Phase: "backup", Err: errors.New("pg_basebackup failed")}, exitBackup},
		{&scenario.BackupError{Cycle: 2, Phase: "restore", Err: &instance.Error{Kind: instance.KindStart, Err: errors.New("x")}}, exitServer},
		{fmt.Errorf("backup: %w", &instance.Error{Kind: instance.KindBinary, Err: errors.New("pg_basebackup not found")}), exitBinary},
		{&scenario.BackupError{Cycle: 1, Phase: "backup", Err: context.Canceled}, exitInterrupted},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("%v: exit code %d, want %d", c.err, got, c.want)
		}
	}
}

// TestBackupOfAPostgresItDoesNotManage: a base backup of a PostgreSQL
// cluster oltplab does not manage (its only superuser is alice: the
// restored copy has no role of oltplab's) is restored and checked as
// alice, over the restored instance's private socket: exit 0, the check
// passed. A role that is neither superuser nor REPLICATION is refused
// before pg_basebackup runs: exit 17, naming the privilege.
func TestBackupOfAPostgresItDoesNotManage(t *testing.T) {
	tg := dbtest.ForeignPostgres(t, "alice")
	env := storeEnv(t)
	target := dbtest.RawURL(tg)
	if r := oltplab(t, env, "build", "--target", target, "--warehouses", "1"); r.code != 0 {
		t.Fatalf("build: exit %d", r.code)
	}
	// The tools run as the server's account, which must reach it.
	to, err := os.MkdirTemp("", "oltplab-backups-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(to) })
	if err := os.Chmod(to, 0o755); err != nil {
		t.Fatal(err)
	}
	r := oltplab(t, env, "backup", target, "--to", to, "--cycles", "1", "--json")
	if r.code != 0 {
		t.Fatalf("backup: exit %d: %s", r.code, r.err)
	}
	var out scenario.BackupOutcome
	if err := json.Unmarshal([]byte(r.out), &out); err != nil {
		t.Fatalf("backup --json: %v", err)
	}
	if len(out.Cycles) != 1 || out.Cycles[0].Check == nil || !out.Cycles[0].Check.Passed {
		t.Errorf("cycles: %+v, want one whose restored copy passed the check", out.Cycles)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbtest.RawURL(tg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"CREATE ROLE bob LOGIN PASSWORD 'bob-secret-1'", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO bob"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	u := *tg.URL
	u.User = url.UserPassword("bob", "bob-secret-1")
	r = oltplab(t, env, "backup", u.String(), "--to", to, "--cycles", "1")
	if r.code != exitPermission || !strings.Contains(r.err, "REPLICATION") || strings.Count(r.err, "\n") != 1 {
		t.Errorf("backup as a role without REPLICATION: exit %d, %q; want exit %d naming REPLICATION", r.code, r.err, exitPermission)
	}
}
