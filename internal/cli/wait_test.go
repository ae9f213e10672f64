package cli

import (
	"testing"
	"time"
)

// waitFor polls cond (at most 60 s) and then calls then. It waits for a
// state, it does not assert on time.
func waitFor(t *testing.T, cond func() bool, then func()) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			then()
			t.Fatalf("condition not reached")
		}
		time.Sleep(100 * time.Millisecond)
	}
	then()
}
