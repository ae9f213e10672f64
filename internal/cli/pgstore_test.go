package cli

import (
	"fmt"
	neturl "net/url"
	"strings"
	"sync"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
)

// TestResultsInPostgres: with OLTPLAB_RESULTS (or --results) naming a
// PostgreSQL database, four oltplab commands at once store their results
// there, `results list` shows every one, and no output line holds the
// store's password.
func TestResultsInPostgres(t *testing.T) {
	tg := dbtest.Postgres(t)
	url, password := dbtest.RawURL(tg), dbtest.Password(tg)
	env := []string{"OLTPLAB_RESULTS=" + url, "HOME=" + t.TempDir()}
	const writers = 4
	var wg sync.WaitGroup
	results := make([]result, writers)
	for i := range writers {
		wg.Go(func() {
			results[i] = oltplab(t, env, "monitor", "--duration", "1s", "--interval", "500ms", "--label", fmt.Sprintf("w%d", i))
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.code != exitOK {
			t.Errorf("monitor %d: exit %d", i, r.code)
		}
	}
	list := oltplab(t, []string{"HOME=" + t.TempDir()}, "results", "list", "--results", url)
	if list.code != exitOK {
		t.Fatalf("results list --results URL: exit %d", list.code)
	}
	for i := range writers {
		if !strings.Contains(list.out, fmt.Sprintf("w%d", i)) {
			t.Errorf("results list does not show monitor w%d:\n%s", i, list.out)
		}
	}
	for i, r := range append(results, list) {
		if strings.Contains(r.out+r.err, password) {
			t.Errorf("output %d holds the store's password", i)
		}
	}
	// A store that cannot be reached is the store's exit code, and the
	// message holds no password either.
	bad := *tg.URL
	bad.User = neturl.UserPassword(tg.URL.User.Username(), password)
	bad.Host = fmt.Sprintf("127.0.0.1:%d", closedPort(t))
	r := oltplab(t, env, "results", "list", "--results", bad.String())
	if r.code != exitStore || strings.Contains(r.out+r.err, password) {
		t.Errorf("an unreachable store: exit %d (want %d), or the password in %q", r.code, exitStore, r.err)
	}
}
