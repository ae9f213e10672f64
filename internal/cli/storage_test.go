package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

func resultsPath(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OLTPLAB_RESULTS="); ok {
			return v
		}
	}
	return ""
}

func storedRuns(t *testing.T, env []string) []store.Run {
	t.Helper()
	path := resultsPath(env)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.ListRuns(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		t.Errorf("left in %s: %s", dir, e.Name())
	}
}

// TestStorageBench measures two profiles for a second each on a 16 MiB
// file and checks what is printed and stored.
func TestStorageBench(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	env := storeEnv(t)
	dir := t.TempDir()
	r := oltplab(t, env, "storage", "bench", dir, "--profile", "oltp-4k-qd8,seq-write-128k", "--runtime", "1s", "--size", "16M",
		"--fio-option", "norandommap=1", "--label", "local", "--json")
	if r.code != 0 {
		t.Fatalf("exit code: got %d, want 0", r.code)
	}
	emptyDir(t, dir)
	var got scenario.StorageOutcome
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("output is not the JSON result: %v", err)
	}
	if got.Status != store.StatusOK || len(got.Profiles) != 2 || !strings.HasPrefix(got.FioVersion, "fio-") || got.FileSizeBytes != 16<<20 {
		t.Fatalf("result: status %s, %d profiles, version %q, size %d", got.Status, len(got.Profiles), got.FioVersion, got.FileSizeBytes)
	}
	wantDirs := []string{"read,write", "write"}
	last := int64(-1)
	if got.Layout != nil {
		last = got.Layout.ToMillis
	}
	for i, p := range got.Profiles {
		var dirs []string
		for _, d := range p.Directions {
			dirs = append(dirs, d.Direction)
			l := d.CompletionLatency
			if d.IOPS <= 0 || !(l.P50Millis > 0 && l.P50Millis <= l.P99Millis && l.P99Millis <= l.P999Millis) {
				t.Errorf("%s %s: IOPS %v, latency %+v", p.Profile, d.Direction, d.IOPS, l)
			}
		}
		if strings.Join(dirs, ",") != wantDirs[i] {
			t.Errorf("%s: directions %v, want %s", p.Profile, dirs, wantDirs[i])
		}
		if p.Window.FromMillis < last || p.Window.ToMillis <= p.Window.FromMillis {
			t.Errorf("%s: window %+v after %d ms: want ordered, non-empty windows", p.Profile, p.Window, last)
		}
		last = p.Window.ToMillis
		if p.Options[len(p.Options)-1] != "norandommap=1" {
			t.Errorf("%s: options %v: want the --fio-option last", p.Profile, p.Options)
		}
	}

	runs := storedRuns(t, env)
	if len(runs) != 1 || runs[0].Kind != store.KindStorage || runs[0].Label != "local" || runs[0].ID != got.RunID || runs[0].Target != dir {
		t.Fatalf("stored runs: got %+v, want one storage run labelled local on %s", runs, dir)
	}
	var params struct {
		FioVersion string `json:"fio_version"`
		Device     *struct{ FSType string }
		Extra      []string `json:"extra_options"`
	}
	if err := json.Unmarshal(runs[0].Params, &params); err != nil || params.FioVersion != got.FioVersion ||
		params.Device == nil || params.Device.FSType == "" || strings.Join(params.Extra, " ") != "norandommap=1" {
		t.Errorf("params: got %s (%v)", runs[0].Params, err)
	}
	st, err := store.Open(context.Background(), resultsPath(env))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	samples, err := st.Samples(context.Background(), got.RunID, store.SampleFilter{Source: store.SourceHost, Metric: "cpu_busy_pct"})
	if err != nil || len(samples) == 0 {
		t.Errorf("host samples: got %d (%v), want some", len(samples), err)
	}
	roles, _ := st.Samples(context.Background(), got.RunID, store.SampleFilter{Metric: "disk_role_test_file"})
	if len(roles) == 0 {
		t.Error("the device under the directory is not marked (disk_role_test_file)")
	}

	// The table, as a person reads it.
	r = oltplab(t, env, "storage", "bench", dir, "--profile", "seq-read-128k", "--runtime", "1s", "--size", "16M")
	if r.code != 0 {
		t.Fatalf("exit code: got %d, want 0", r.code)
	}
	for _, want := range []string{"IOPS", "MB/s", "p99.9 ms", "seq-read-128k", "read", "stored as result 2"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	emptyDir(t, dir)
}

// TestStorageBenchInterrupted: Ctrl-C during the second profile stops
// fio, stores the first profile marked partial, removes the test file and
// exits 130.
func TestStorageBenchInterrupted(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	env := storeEnv(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	running := func(name string) bool {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(dir)) && bytes.Contains(b, []byte("--name="+name)) {
				return true
			}
		}
		return false
	}
	saw := make(chan bool, 1)
	go func() {
		for range 3000 {
			if running("oltp-4k-qd8") {
				saw <- true
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		saw <- false
	}()
	var out, errb bytes.Buffer
	code := testMain(ctx, []string{"storage", "bench", dir, "--profile", "seq-read-128k,oltp-4k-qd8", "--runtime", "2s", "--size", "16M"},
		env, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	if !<-saw {
		t.Fatal("the second profile's fio never appeared")
	}
	if code != exitInterrupted {
		t.Errorf("exit code: got %d, want %d", code, exitInterrupted)
	}
	if lines := strings.Split(strings.TrimSpace(errb.String()), "\n"); !strings.HasPrefix(lines[len(lines)-1], "oltplab: interrupted") {
		t.Errorf("last stderr line: got %q, want the interruption", lines[len(lines)-1])
	}
	if running("oltp-4k-qd8") {
		t.Error("fio still runs")
	}
	emptyDir(t, dir)
	runs := storedRuns(t, env)
	if len(runs) != 1 || runs[0].Status != store.StatusPartial {
		t.Fatalf("stored runs: got %+v, want one partial run", runs)
	}
	var sum summary.Storage
	if err := json.Unmarshal(runs[0].Summary, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || len(sum.Profiles) != 1 || sum.Profiles[0].Profile != "seq-read-128k" {
		t.Errorf("summary: interrupted %v, %d profiles: want the first profile only, interrupted", sum.Interrupted, len(sum.Profiles))
	}
}

// TestStorageBadInput: mistakes get one line and exit 2 (fio missing: 1),
// and nothing is stored.
func TestStorageBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args    []string
		want    int
		wantErr string
		fio     bool // needs fio to get that far
	}{
		{[]string{"storage"}, exitUsage, "want a subcommand", false},
		{[]string{"storage", "frob"}, exitUsage, "unknown subcommand", false},
		{[]string{"storage", "bench"}, exitUsage, "exactly one directory", false},
		{[]string{"storage", "bench", dir, dir}, exitUsage, "exactly one directory", false},
		{[]string{"storage", "bench", dir, "--profile", "oltp"}, exitUsage, "unknown profile \"oltp\" (want all or one or more of oltp-4k-qd8, oltp-4k-qd32, sql-8k, rand-64k, seq-read-128k, seq-write-128k, seq-read-256k, seq-write-256k)", false},
		{[]string{"storage", "bench", dir, "--runtime", "500ms"}, exitUsage, "at least 1s", false},
		{[]string{"storage", "bench", dir, "--runtime", "1500ms"}, exitUsage, "whole seconds", false},
		{[]string{"storage", "bench", dir, "--size", "lots"}, exitUsage, "size \"lots\"", false},
		{[]string{"storage", "bench", dir, "--size", "4K"}, exitUsage, "at least 1 MiB", false},
		{[]string{"storage", "bench", dir, "--fio-option", "rwmixread"}, exitUsage, "want KEY=VALUE", false},
		{[]string{"storage", "bench", dir, "--fio-option", "filename=/dev/vda"}, exitUsage, "set by oltplab", false},
		{[]string{"storage", "bench", filepath.Join(dir, "nope")}, exitUsage, "does not exist", true},
		{[]string{"storage", "bench", file}, exitUsage, "is not a directory", true},
		{[]string{"storage", "bench", dir, "--size", "1000T"}, exitUsage, "choose a smaller --size", true},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[1:], "_"), func(t *testing.T) {
			if c.fio {
				testenv.Require(t, testenv.Fio)
			}
			env := storeEnv(t)
			r := oltplab(t, env, c.args...)
			if r.code != c.want {
				t.Errorf("exit code: got %d, want %d", r.code, c.want)
			}
			if lines := strings.Split(strings.TrimRight(r.err, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "oltplab: ") || !strings.Contains(lines[0], c.wantErr) {
				t.Errorf("stderr: got %q, want one line with %q", r.err, c.wantErr)
			}
			if runs := storedRuns(t, env); len(runs) != 0 {
				t.Errorf("stored %d runs, want none", len(runs))
			}
		})
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("files in %s: got %d, want only a-file", dir, len(es))
	}
}

// TestStorageWithoutFio: without fio on the PATH the command says which
// package to install, in one line.
func TestStorageWithoutFio(t *testing.T) {
	env := append(storeEnv(t), "PATH="+t.TempDir())
	r := oltplab(t, env, "storage", "bench", t.TempDir(), "--runtime", "1s")
	if r.code != exitFailure || r.err != "oltplab: fio is not installed (Debian package fio)\n" {
		t.Errorf("got exit %d, stderr %q; want 1 and the package to install", r.code, r.err)
	}
}
