package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/dialect/postgres"
	"github.com/oltplab/oltplab/internal/load"
)

// TestResetLeavesOtherSessionsAlone: --reset-between ended every other
// session of the same database user ("FATAL: terminating connection due
// to administrator command"). A reset now fails naming them and leaves
// them be; only with EndOtherSessions (--terminate-sessions) does it end
// them.
func TestResetLeavesOtherSessionsAlone(t *testing.T) {
	ctx := context.Background()
	tg := dbtest.Postgres(t)
	d, err := postgres.Open(ctx, tg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, err := load.Build(ctx, d, load.Options{Warehouses: 1, Workers: 2, Seed: 11, ToolVersion: "test"}, nil); err != nil {
		t.Fatalf("build: %v", err)
	}
	rs := d.(dialect.Resetter)
	t.Cleanup(func() { _ = rs.DropBaseline(context.Background()) })
	if err := rs.SaveBaseline(ctx); err != nil {
		t.Fatalf("save baseline: %v", err)
	}
	// Another client of the same user, as psql would be.
	other, err := pgx.Connect(ctx, dbtest.RawURL(tg))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	alive := func() bool { return other.Ping(ctx) == nil }

	err = rs.Reset(ctx)
	if !errors.Is(err, dialect.ErrInUse) || !strings.Contains(err.Error(), "--terminate-sessions") {
		t.Errorf("reset with another session connected: got %v, want ErrInUse naming --terminate-sessions", err)
	}
	if !alive() {
		t.Fatalf("the other session was ended without --terminate-sessions")
	}
	d.(dialect.SessionEnder).EndOtherSessions(true)
	if err := rs.Reset(ctx); err != nil {
		t.Fatalf("reset with EndOtherSessions: %v", err)
	}
	if alive() {
		t.Errorf("the other session survived a reset with EndOtherSessions")
	}
}
