package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestNeighboursCommand: `oltplab neighbours` refuses bad input with one
// line and exit code 2, and prints the plan it would run: managed
// instances on the given directory, built, the last one noisy.
func TestNeighboursCommand(t *testing.T) {
	env := storeEnv(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"engine without directory", []string{"neighbours", "--engine", "postgres"}, "go together"},
		{"embedded engine", []string{"neighbours", "--engine", "sqlite", "--data-dir", dir}, "want postgres or mariadb"},
		{"one instance", []string{"neighbours", "--engine", "postgres", "--data-dir", dir, "--instances", "1"}, "at least 2"},
		{"both forms", []string{"neighbours", "--engine", "postgres", "--data-dir", dir, "--on", "sqlite:a.db"}, "not both"},
		{"targets without noisy", []string{"neighbours", "--on", "sqlite:a.db", "--on", "sqlite:b.db"}, "--noisy is required"},
		{"bad method", []string{"neighbours", "--engine", "postgres", "--data-dir", dir, "--backup-method", "rsync"}, "want basebackup"},
		{"unknown noisy", []string{"neighbours", "--engine", "postgres", "--data-dir", dir, "--noisy", "n9", "--print-plan=false", "--dry-run"}, `no target named "n9"`},
		{"bad interval", []string{"neighbours", "--engine", "postgres", "--data-dir", dir, "--interval", "10ms", "--dry-run"}, "interval must be at least 1s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := oltplab(t, env, c.args...)
			if r.code != exitUsage {
				t.Errorf("exit code: got %d, want %d", r.code, exitUsage)
			}
			if lines := strings.Split(strings.TrimRight(r.err, "\n"), "\n"); len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("stderr: got %q, want one line saying %q", r.err, c.want)
			}
		})
	}
	r := oltplab(t, env, "neighbours", "--engine", "postgres", "--data-dir", dir, "--instances", "3", "--memory", "64MB",
		"--cycles", "3", "--interval", "20s", "--vus", "2", "--print-plan")
	for _, want := range []string{"name: n3", "data_dir: " + filepath.Join(dir, "n2"), "memory: 64MiB", "noisy: [n3]",
		"cycles: 3", "interval: 20s", "steps: [build, neighbours]"} {
		if r.code != 0 || !strings.Contains(r.out, want) {
			t.Errorf("--print-plan (exit %d) lacks %q:\n%s", r.code, want, r.out)
		}
	}
}
