package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstanceStateDirectory: the instances `instance start` runs are
// listed in the state directory ($HOME/.local/state/oltplab/instances
// here), not beside the results store; a folder an earlier oltplab
// listed them in (instances beside $OLTPLAB_RESULTS, often ./instances)
// is still read, with a note saying so, and left as it is.
func TestInstanceStateDirectory(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	work := filepath.Join(tmp, "work")
	env := []string{"HOME=" + home, "OLTPLAB_RESULTS=" + filepath.Join(work, "results.db")}
	state := filepath.Join(home, ".local", "state", "oltplab", "instances")
	legacy := filepath.Join(work, "instances")
	// Entries whose process is gone (no process has this pid).
	entry := func(dir, name string) string {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name+".json")
		js := `{"name": "` + name + `", "engine": "postgres", "owner_pid": 999999999, "target": "postgres://oltplab@127.0.0.1:1/tpcc"}`
		if err := os.WriteFile(f, []byte(js), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	current := entry(state, "current")
	old := entry(legacy, "old")

	r := oltplab(t, env, "instance", "list")
	if r.code != 0 || !strings.Contains(r.out, "current") || !strings.Contains(r.out, "old") {
		t.Fatalf("list: exit %d, stdout %q; want both instances listed", r.code, r.out)
	}
	if !strings.Contains(r.err, "note: "+legacy) || !strings.Contains(r.err, "new ones are listed in "+state) {
		t.Errorf("list: stderr %q, want a note naming %s and %s", r.err, legacy, state)
	}

	r = oltplab(t, env, "instance", "stop", "old")
	if r.code != 0 || !strings.Contains(r.out, "left as it is") {
		t.Errorf("stop old: exit %d, stdout %q", r.code, r.out)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the earlier oltplab's entry: %v, want it left", err)
	}
	r = oltplab(t, env, "instance", "stop", "current")
	if r.code != 0 || !strings.Contains(r.out, "entry removed") {
		t.Errorf("stop current: exit %d, stdout %q", r.code, r.out)
	}
	if _, err := os.Stat(current); !os.IsNotExist(err) {
		t.Errorf("the stale entry in the state directory: %v, want it removed", err)
	}
	if st, err := os.Stat(legacy); err != nil || !st.IsDir() {
		t.Errorf("the earlier oltplab's folder: %v, want it kept", err)
	}
}

// TestInstanceForeignFolder: an ./instances-like folder of another
// program's JSON files is no registry: nothing listed, no note.
func TestInstanceForeignFolder(t *testing.T) {
	tmp := t.TempDir()
	work := filepath.Join(tmp, "work")
	if err := os.MkdirAll(filepath.Join(work, "instances"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "instances", "web.json"), []byte(`{"name": "other", "replicas": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + filepath.Join(tmp, "home"), "OLTPLAB_RESULTS=" + filepath.Join(work, "results.db")}
	r := oltplab(t, env, "instance", "list")
	if r.code != 0 || !strings.Contains(r.out, "no managed instances running") || r.err != "" {
		t.Errorf("list: exit %d, stdout %q, stderr %q; want nothing listed and no note", r.code, r.out, r.err)
	}
}
