package instance

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := Registry{Dir: filepath.Join(t.TempDir(), "instances")}
	if err := r.Reserve("pg1"); err != nil {
		t.Fatal(err)
	}
	if err := r.Reserve("pg1"); !errors.Is(err, ErrNameInUse) {
		t.Errorf("second reserve: got %v, want ErrNameInUse", err)
	}
	if err := r.Update(Entry{Name: "pg1", Engine: Postgres, ServerPID: 42, Target: "postgres://oltplab@127.0.0.1:5/oltplab"}); err != nil {
		t.Fatal(err)
	}

	// An entry whose process is gone is stale, and its name free again.
	dead := exec.Command("/bin/true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(Entry{Name: "old", OwnerPID: dead.Process.Pid})
	if err := os.WriteFile(filepath.Join(r.Dir, "old.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	list, err := r.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("list: got %v, %v", list, err)
	}
	if list[0].Name != "old" || !list[0].Stale || list[1].Name != "pg1" || list[1].Stale || list[1].ServerPID != 42 {
		t.Errorf("list: got %+v", list)
	}
	if err := r.Reserve("old"); err != nil {
		t.Errorf("reserve a stale name: %v", err)
	}
	r.Remove("pg1")
	if _, err := r.Get("pg1"); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("get removed: got %v", err)
	}
}
