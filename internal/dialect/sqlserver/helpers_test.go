package sqlserver

import (
	"context"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/load"
)

// openTest opens a fresh database on the private T-SQL server.
func openTest(t testing.TB) (*DB, dialect.Database) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := open(ctx, dbtest.SQLServer(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d, d.withAbilities()
}

// buildTest opens a fresh database and builds one warehouse in it, as
// `oltplab build` does.
func buildTest(t testing.TB) *DB {
	t.Helper()
	d, db := openTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 2, Seed: 42, ToolVersion: "test"}, nil); err != nil {
		t.Fatalf("build one warehouse: %v", err)
	}
	return d
}
