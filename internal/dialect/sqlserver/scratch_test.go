package sqlserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
)

// TestScratch: a scratch database is created, marked, usable and dropped;
// a database without the mark, or not named as a scratch one, is never
// dropped.
func TestScratch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := open(ctx, dbtest.SQLServerAdmin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	exists := func(name string) bool {
		var n int64
		if err := admin.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys.databases WHERE name = @p1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	tg, err := admin.CreateScratch(ctx)
	if err != nil {
		t.Fatalf("CreateScratch: %v", err)
	}
	cfg, _, _ := config(tg)
	if !exists(cfg.Database) {
		t.Fatalf("CreateScratch returned %s, which does not exist", tg)
	}
	s, err := open(ctx, tg)
	if err != nil {
		t.Fatalf("open the scratch database: %v", err)
	}
	if err := s.CreateTables(ctx); err != nil {
		t.Errorf("create tables in the scratch database: %v", err)
	}
	s.Close()
	if err := admin.DropScratch(ctx, tg); err != nil {
		t.Fatalf("DropScratch: %v", err)
	}
	if exists(cfg.Database) {
		t.Errorf("%s still exists after DropScratch", cfg.Database)
	}

	// Not oltplab's: a database named as a scratch one without the mark,
	// and one of another name (the test's own).
	unmarked := scratchPrefix + randomSuffix()
	if _, err := admin.db.ExecContext(ctx, "CREATE DATABASE "+unmarked); err != nil {
		t.Fatal(err)
	}
	defer admin.db.ExecContext(context.Background(), "DROP DATABASE "+unmarked)
	other := dbtest.SQLServer(t)
	for _, tg := range []dialect.Target{admin.targetOf(unmarked), other} {
		if err := admin.DropScratch(ctx, tg); !errors.Is(err, dialect.ErrNotScratch) {
			t.Errorf("DropScratch(%s) = %v, want %v", tg, err, dialect.ErrNotScratch)
		}
	}
	if !exists(unmarked) {
		t.Errorf("DropScratch dropped %s, which carries no mark", unmarked)
	}
}
