package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestRebuildAndCPUBadInput: each mistake gets one line on stderr and its
// own exit code, and nothing is measured.
func TestRebuildAndCPUBadInput(t *testing.T) {
	env := append(storeEnv(t), "XDG_RUNTIME_DIR="+t.TempDir())
	missing := "sqlite:" + filepath.Join(t.TempDir(), "nope.db")
	empty := reachableDir(t)
	port := closedPort(t)
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"rebuild"}, exitUsage},
		{[]string{"rebuild", "--target", missing, "--engine", "sqlite", "--data-dir", empty}, exitUsage},
		{[]string{"rebuild", "--target", missing, "--warehouses", "1"}, exitUsage},
		{[]string{"rebuild", "--target", missing, "--read-iops", "100"}, exitUsage},
		{[]string{"rebuild", "--target", missing, "--repeat", "0"}, exitUsage},
		{[]string{"rebuild", "--engine", "oracle", "--data-dir", empty}, exitUsage},
		{[]string{"rebuild", "--engine", "postgres"}, exitUsage},
		{[]string{"rebuild", "--engine", "sqlite", "--data-dir", empty, "--read-iops", "5"}, exitUsage},
		{[]string{"rebuild", "--engine", "sqlite", "--data-dir", empty, "--warehouses", "-1"}, exitUsage},
		{[]string{"rebuild", "--target", missing}, exitSchema},
		{[]string{"rebuild", "--engine", "sqlite", "--data-dir", empty}, exitSchema},
		{[]string{"rebuild", "--target", fmt.Sprintf("postgres://bench:s3cret@127.0.0.1:%d/tpcc", port)}, exitConnect},
		{[]string{"cpu", "--repeat", "0"}, exitUsage},
		{[]string{"cpu", "--client-iterations", "-1"}, exitUsage},
		{[]string{"cpu", "--server-iterations", "5"}, exitUsage},
		{[]string{"cpu", "--target", missing, "--server-iterations", "9999999999999"}, exitUsage},
		{[]string{"cpu", "--target", fmt.Sprintf("mysql://bench:s3cret@127.0.0.1:%d/tpcc", port)}, exitConnect},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, "_"), func(t *testing.T) {
			r := oltplab(t, env, c.args...)
			if r.code != c.want {
				t.Errorf("exit code: got %d, want %d", r.code, c.want)
			}
			lines := strings.Split(strings.TrimRight(r.err, "\n"), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "oltplab: ") {
				t.Errorf("stderr: got %q, want a last line starting with \"oltplab: \"", r.err)
			}
			for _, bad := range []string{"goroutine ", "panic", "s3cret"} {
				if strings.Contains(r.out+r.err, bad) {
					t.Errorf("output contains %q", bad)
				}
			}
		})
	}
	r := oltplab(t, env, "results", "list", "--json")
	if r.code != 0 || strings.TrimSpace(r.out) != "null" {
		t.Errorf("results after bad input: %q (exit %d), want none", r.out, r.code)
	}
}

// TestRebuildAndCPU: a managed (embedded) instance built and rebuilt cold
// and warm in one command, a second command that asks for another scale,
// the same database rebuilt as a target (warm only), checked intact, and
// the CPU calibration on it, all stored and listed.
func TestRebuildAndCPU(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env := append(storeEnv(t), "XDG_RUNTIME_DIR="+t.TempDir())
	dir := reachableDir(t)
	r := oltplab(t, env, "rebuild", "--engine", "sqlite", "--data-dir", dir, "--warehouses", "1", "--json")
	if r.code != 0 {
		t.Fatalf("rebuild on a managed instance: exit %d", r.code)
	}
	var managed scenario.RebuildOutcome
	if err := json.Unmarshal([]byte(r.out), &managed); err != nil {
		t.Fatalf("rebuild --json: %v", err)
	}
	if len(managed.Phases) != 2 || managed.Phases[0].Cache != summary.CacheCold || managed.Phases[1].Cache != summary.CacheWarm ||
		managed.Phases[0].ServerCPUSeconds == nil || managed.CPUSource == "" {
		t.Errorf("managed rebuild: phases %+v, CPU source %q: want cold then warm with CPU time", managed.Phases, managed.CPUSource)
	}
	if r := oltplab(t, env, "rebuild", "--engine", "sqlite", "--data-dir", dir, "--warehouses", "2"); r.code != exitSchema {
		t.Errorf("rebuild asking for another scale: exit %d, want %d", r.code, exitSchema)
	}

	target := "sqlite:" + filepath.Join(dir, instance.SQLiteFile)
	r = oltplab(t, env, "rebuild", "--target", target, "--cold", "--label", "tgt")
	if r.code != 0 {
		t.Fatalf("rebuild on a target: exit %d", r.code)
	}
	for _, want := range []string{"cold cache is not possible", "warm", "stored as result"} {
		if !strings.Contains(r.out+r.err, want) {
			t.Errorf("rebuild on a target: output lacks %q", want)
		}
	}
	if r := oltplab(t, env, "check", "--target", target); r.code != 0 {
		t.Errorf("check after the rebuilds: exit %d, want 0", r.code)
	}

	r = oltplab(t, env, "cpu", "--target", target, "--repeat", "2", "--server-iterations", "2000", "--client-iterations", "100000", "--json")
	if r.code != 0 {
		t.Fatalf("cpu: exit %d", r.code)
	}
	var cpu scenario.CPUOutcome
	if err := json.Unmarshal([]byte(r.out), &cpu); err != nil {
		t.Fatalf("cpu --json: %v", err)
	}
	if cpu.Server == nil || len(cpu.Server.Runs) != 2 || len(cpu.Client.Runs) != 2 || cpu.Server.Iterations != 2000 || cpu.Client.Iterations != 100000 {
		t.Errorf("cpu: server %+v client %+v: want 2 runs of 2000 and of 100000 rounds", cpu.Server, cpu.Client)
	}

	r = oltplab(t, env, "results", "list", "--kind", "rebuild")
	if r.code != 0 || strings.Count(r.out, "\n") != 3 || !strings.Contains(r.out, "cold ") || !strings.Contains(r.out, "tgt") {
		t.Errorf("results list --kind rebuild: %q, want a header and two rebuilds with their cold and warm times", r.out)
	}
	r = oltplab(t, env, "results", "show", fmt.Sprint(managed.RunID))
	for _, want := range []string{`rebuild of index ` + managed.Index, `server CPU s`, `(?m)^\s+1\s+cold\s`, `(?m)^\s+1\s+warm\s`, `server CPU: `} {
		if r.code != 0 || !regexp.MustCompile(want).MatchString(r.out) {
			t.Errorf("results show of the managed rebuild: %q (exit %d), want it to match %q", r.out, r.code, want)
		}
	}
	r = oltplab(t, env, "results", "show", fmt.Sprint(cpu.RunID))
	for _, want := range []string{`rounds per CPU s`, `(?m)^\s*server\s+2000\s+2\s`, `(?m)^\s*client\s+100000\s+2\s`, `server: `} {
		if r.code != 0 || !regexp.MustCompile(want).MatchString(r.out) {
			t.Errorf("results show of the calibration: %q (exit %d), want it to match %q", r.out, r.code, want)
		}
	}
	// A result measured after the calibration carries it in its context.
	r = oltplab(t, env, "results", "show", fmt.Sprint(cpu.RunID+1), "--json")
	if r.code != exitUsage {
		t.Errorf("results show of a result not measured yet: exit %d, want %d", r.code, exitUsage)
	}
	if r := oltplab(t, env, "check", "--target", target, "--json"); r.code != 0 {
		t.Fatalf("check: exit %d", r.code)
	}
	r = oltplab(t, env, "results", "show", fmt.Sprint(cpu.RunID+1), "--json")
	var after struct {
		Context struct {
			Calibration *scenario.Calibration `json:"calibration"`
		}
	}
	if err := json.Unmarshal([]byte(r.out), &after); err != nil || after.Context.Calibration == nil || after.Context.Calibration.RunID != cpu.RunID {
		t.Errorf("context of the check after the calibration: %+v, %v; want calibration %d", after.Context.Calibration, err, cpu.RunID)
	}
	if _, err := os.Stat(filepath.Join(dir, instance.SQLiteFile)); err != nil {
		t.Errorf("the database file: %v", err)
	}
}
