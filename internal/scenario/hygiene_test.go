package scenario_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestResetBetweenChecksFreeSpace: --reset-between made a full copy of the
// database without looking at the free space. It checks first, says what
// the copy takes, and refuses when it would not fit.
func TestResetBetweenChecksFreeSpace(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env, db, tg := sqliteEnv(t)
	var notes []string
	env.Observer.Note = func(m string) { notes = append(notes, m) }
	env.FreeBytes = func(string) (int64, error) { return 1 << 20, nil } // 1 MiB free
	_, err := env.Profile(context.Background(), db, tg, scenario.ProfileOptions{Steps: []int{1, 1}, Repeat: 1, Reset: true, Driver: shortDriver()})
	var se *scenario.SpaceError
	if !errors.As(err, &se) || se.Free != 1<<20 || se.Need <= se.Free {
		t.Fatalf("profile with 1 MiB free: got %v, want a SpaceError", err)
	}
	runs, err := env.Store.ListRuns(context.Background(), storeRunFilter())
	if err != nil || len(runs) != 0 {
		t.Errorf("a run started without room for the baseline: %d runs (%v)", len(runs), err)
	}

	env.FreeBytes = nil // the real file system
	if _, err := env.Profile(context.Background(), db, tg, scenario.ProfileOptions{Steps: []int{1, 1}, Repeat: 1, Reset: true, Driver: shortDriver()}); err != nil {
		t.Fatalf("profile: %v", err)
	}
	found := false
	for _, n := range notes {
		if strings.Contains(n, "keeps a copy of the database") && strings.Contains(n, "free in") {
			found = true
		}
	}
	if !found {
		t.Errorf("no note of the copy's size and the free space: %q", notes)
	}
}

func storeRunFilter() store.RunFilter { return store.RunFilter{Kind: store.KindRun} }
