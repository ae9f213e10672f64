package cli

import (
	"strings"
	"testing"
)

// TestListSaysWhatItFiltered: an empty list says whether nothing is
// stored yet or nothing matches its filters.
func TestListSaysWhatItFiltered(t *testing.T) {
	env := storeEnv(t)
	if r := oltplab(t, env, "results", "list"); r.code != 0 || !strings.Contains(r.out, "no results in") || !strings.Contains(r.out, "yet") {
		t.Errorf("an empty store: exit %d, %q", r.code, r.out)
	}
	if r := oltplab(t, env, "monitor", "--duration", "1s", "--interval", "500ms", "--label", "noon"); r.code != 0 {
		t.Fatalf("monitor: exit %d", r.code)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--label", "nonexistent"}, `no results with the label "nonexistent" in `},
		{[]string{"--kind", "run"}, "no results of kind run in "},
		{[]string{"--kind", "monitor", "--label", "midnight"}, `no results of kind monitor and with the label "midnight" in `},
		{[]string{"--kind", "profile", "--label", "noon"}, `no profiles with the label "noon" in `},
	} {
		r := oltplab(t, env, append([]string{"results", "list"}, c.args...)...)
		if r.code != 0 || !strings.Contains(r.out, c.want) || strings.Contains(r.out, "yet") {
			t.Errorf("results list %s: exit %d, %q; want %q", strings.Join(c.args, " "), r.code, r.out, c.want)
		}
	}
}
