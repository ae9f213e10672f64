package scenario_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestProfileRefusesWhatTheHostCannotHold: with 64 MiB available (half
// of it for the run: 32 virtual users of driver.VUBytes), a profile whose
// largest step has 40 virtual users, a tpc-c step of 100,000 terminals,
// and a SQLite step of more sessions than it takes are refused before
// anything is stored or opened; a step that fits runs.
func TestProfileRefusesWhatTheHostCannotHold(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env, db, tg := sqliteEnv(t)
	env.MemAvailable = func() (int64, error) { return 64 << 20, nil }
	ctx := context.Background()
	tpcc := shortDriver()
	tpcc.Mode = driver.ModeTPCC
	tpcc.Sessions = 8
	sessions := tpcc
	sessions.Sessions = 300
	for _, c := range []struct {
		name  string
		steps []int
		d     driver.Options
		want  string
	}{
		{"40 virtual users", []int{1, 40}, shortDriver(), "40 virtual users need about 40 MiB"},
		{"a hundred thousand terminals", []int{100_000}, tpcc, "100000 terminals on 108 sessions need about 156.8 MiB"},
		{"300 SQLite sessions", []int{400}, sessions, "400 terminals on 301 sessions: sqlite takes at most 256 sessions"},
	} {
		_, err := env.Profile(ctx, db, tg, scenario.ProfileOptions{Label: "big", Steps: c.steps, Repeat: 1, Driver: c.d})
		var ce *scenario.CapacityError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a CapacityError saying %q", c.name, err, c.want)
		}
	}
	if ps, err := env.Store.ListProfiles(ctx, store.ProfileFilter{}); err != nil || len(ps) != 0 {
		t.Errorf("refused profiles stored %d profiles (%v), want none", len(ps), err)
	}
	if _, err := env.Profile(ctx, db, tg, scenario.ProfileOptions{Label: "fits", Steps: []int{2}, Repeat: 1, Driver: shortDriver()}); err != nil {
		t.Errorf("2 virtual users in 64 MiB: %v", err)
	}
}

// TestCapacityServers: a step of more virtual users than the private
// server's max_connections is refused, naming the limit; one that fits
// is not.
func TestCapacityServers(t *testing.T) {
	for _, c := range []struct {
		name   string
		target func(testing.TB) dialect.Target
	}{{"postgres", dbtest.Postgres}, {"mysql", dbtest.MySQL}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := dialect.Open(ctx, c.target(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			lim, err := db.(dialect.ConnectionLimiter).ConnectionLimit(ctx)
			if err != nil || lim.Available < 10 || !strings.Contains(lim.Detail, "max_connections") {
				t.Fatalf("ConnectionLimit: %+v, %v", lim, err)
			}
			t.Logf("%s: %d available (%s)", c.name, lim.Available, lim.Detail)
			env := &scenario.Env{MemAvailable: func() (int64, error) { return 1 << 40, nil }}
			err = env.CheckCapacity(ctx, db, shortDriver(), []int{4, lim.Available + 1}, 1)
			var ce *scenario.CapacityError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "max_connections") {
				t.Errorf("%d virtual users: got %v, want a CapacityError naming max_connections", lim.Available+1, err)
			}
			if err := env.CheckCapacity(ctx, db, shortDriver(), []int{4}, 1); err != nil {
				t.Errorf("4 virtual users: %v", err)
			}
		})
	}
}
