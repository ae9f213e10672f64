package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestImportTakesOnlyWhatOltplabSaved: a run whose store stayed locked
// leaves its result in a file. Copies of that file given new run
// identities, one with a negative NOPM, one with markup in its label and
// one larger than a saved result may be are each refused with a one-line
// error and exit 2, and nothing of them is stored; the file as written is
// stored once, and importing it again is refused.
func TestImportTakesOnlyWhatOltplabSaved(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	storePath := filepath.Join(dir, "results.db")
	target := "sqlite:" + filepath.Join(dir, "tpcc.db")
	env := []string{"OLTPLAB_RESULTS=" + storePath, "HOME=" + dir}
	if r := oltplab(t, env, "build", "--target", target); r.code != 0 {
		t.Fatalf("build: exit %d", r.code)
	}
	code, _, errs, lock := runWhileLocked(t, append(env, "OLTPLAB_STORE_WAIT=1s"), storePath, target, nil)
	if code != exitStore {
		t.Fatalf("run: exit %d, want %d", code, exitStore)
	}
	m := regexp.MustCompile("oltplab results import (\\S+)`").FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("stderr does not say how to load the saved result: %q", errs)
	}
	lock.release()
	saved := m[1]
	good, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	uid := regexp.MustCompile(`"UID":"([0-9a-f]{32})"`).FindSubmatch(good)
	if uid == nil {
		t.Fatalf("no run identity in the saved file")
	}

	// Each edited copy has a run identity of its own, as a copy made to
	// count one measurement several times would.
	copies := 0
	edited := func(edit func([]byte) []byte) string {
		copies++
		b := bytes.ReplaceAll(bytes.Clone(good), uid[1], []byte(fmt.Sprintf("%032x", copies)))
		b = edit(b)
		path := filepath.Join(dir, fmt.Sprintf("copy%d.json", copies))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	same := func(b []byte) []byte { return b }
	nopm := regexp.MustCompile(`"nopm":([0-9])`)
	cases := []struct {
		name string
		path string
		want string
	}{
		{"a copy with a new identity", edited(same), "changed after oltplab saved it"},
		{"another copy with a new identity", edited(same), "changed after oltplab saved it"},
		{"a negative NOPM", edited(func(b []byte) []byte {
			loc := nopm.FindIndex(b)
			if loc == nil {
				t.Fatal("no NOPM in the saved file")
			}
			return append(append(bytes.Clone(b[:loc[0]]), []byte(`"nopm":-`)...), b[loc[0]+len(`"nopm":`):]...)
		}), "changed after oltplab saved it"},
		{"markup in the label", edited(func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`"Label":"busy"`), []byte(`"Label":"<script>busy</script>"`))
		}), "changed after oltplab saved it"},
		{"larger than a saved result may be", func() string {
			path := edited(same)
			if err := os.Truncate(path, 1<<30+1); err != nil { // sparse: no disk used
				t.Fatal(err)
			}
			return path
		}(), "too large"},
	}
	for _, c := range cases {
		r := oltplab(t, env, "results", "import", c.path)
		if r.code != exitUsage || !strings.Contains(r.err, c.want) || strings.Count(r.err, "\n") != 1 || r.out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and one line saying %q", c.name, r.code, r.out, r.err, exitUsage, c.want)
		}
	}
	if n := finishedRuns(t, env); n != 0 {
		t.Fatalf("%d runs stored from refused files, want 0", n)
	}

	r := oltplab(t, env, "results", "import", saved)
	if r.code != 0 || !strings.Contains(r.out, "stored as run") {
		t.Fatalf("import of the file as written: exit %d, %q", r.code, r.out)
	}
	r = oltplab(t, env, "results", "import", saved)
	if r.code != exitUsage || !strings.Contains(r.err, "already stored") || strings.Count(r.err, "\n") != 1 {
		t.Errorf("second import: exit %d, %q; want exit %d, already stored", r.code, r.err, exitUsage)
	}
	if n := finishedRuns(t, env); n != 1 {
		t.Errorf("%d runs stored, want 1", n)
	}
}

// finishedRuns counts the finished runs of kind run in the store.
func finishedRuns(t *testing.T, env []string) int {
	t.Helper()
	r := oltplab(t, env, "results", "list", "--kind", "run", "--json")
	var runs []store.Run
	if err := json.Unmarshal([]byte(r.out), &runs); err != nil {
		t.Fatalf("results list: %v", err)
	}
	n := 0
	for _, run := range runs {
		if run.Status != store.StatusRunning && run.Status != store.StatusAbandoned {
			n++
		}
	}
	return n
}

// TestCheckImported: a saved result's labels obey --label's rules.
func TestCheckImported(t *testing.T) {
	failed := store.Outcome{Status: store.StatusFailed, Error: "connection refused"}
	for _, c := range []struct {
		run, profile string
		ok           bool
	}{
		{"nvme", "nvme", true},
		{"<script>alert(1)</script>", "nvme", false},
		{"nvme", "a&b", false},
		{"\x1b[31mred", "nvme", false},
		{strings.Repeat("x", maxLabel+1), "nvme", false},
	} {
		err := checkImported(store.SavedRun{Run: store.Run{Kind: store.KindRun, Label: c.run}, Profile: &store.Profile{Label: c.profile}, Outcome: failed})
		if (err == nil) != c.ok {
			t.Errorf("labels %q, %q: got %v, want ok %v", c.run, c.profile, err, c.ok)
		}
	}
}
