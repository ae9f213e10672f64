package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestShardFlag: a wrong --shard is a usage error naming the flag, before
// any database work.
func TestShardFlag(t *testing.T) {
	env := storeEnv(t)
	missing := "sqlite:" + filepath.Join(t.TempDir(), "nope.db")
	for _, args := range [][]string{{"--shard", "2/2"}, {"--shard", "x"}, {"--shard", "0/2", "--reset-between"}} {
		r := oltplab(t, env, append([]string{"run", "--target", missing}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.err, "--shard") {
			t.Errorf("run %v: exit %d, %q; want %d naming --shard", args, r.code, r.err, exitUsage)
		}
	}
}
