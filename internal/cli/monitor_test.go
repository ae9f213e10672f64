package cli

import (
	"strings"
	"testing"
)

// TestMonitorWithoutTarget: monitor samples the host alone when no target
// is given (it used to fail describing a database that was not there).
func TestMonitorWithoutTarget(t *testing.T) {
	r := oltplab(t, storeEnv(t), "monitor", "--duration", "1s", "--json")
	if r.code != 0 {
		t.Fatalf("exit code: got %d, want 0", r.code)
	}
	if !strings.Contains(r.out, `"run_id"`) {
		t.Errorf("output: got %q, want the stored run id", r.out)
	}
}
