package load_test

import (
	"context"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	"github.com/oltplab/oltplab/internal/load"
)

// TestBuildServers builds two warehouses on two load connections, the
// parallel path SQLite (one writer) does not take, on each server dialect.
func TestBuildServers(t *testing.T) {
	for _, c := range []struct {
		name   string
		target func(testing.TB) dialect.Target
	}{{"postgres", dbtest.Postgres}, {"mysql", dbtest.MySQL}} {
		t.Run(c.name, func(t *testing.T) { testBuildServer(t, c.target(t)) })
	}
}

func testBuildServer(t *testing.T, target dialect.Target) {
	ctx := context.Background()
	db, err := dialect.Open(ctx, target)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer db.Close()
	res, err := load.Build(ctx, db, load.Options{Warehouses: 2, Workers: 2, Seed: 9, ToolVersion: "test"}, nil)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if got, want := res.Workers, 2; got != want {
		t.Errorf("Workers: got %d, want %d", got, want)
	}
	checkCounts(t, db, res, 2)
	m, err := readMeta(t, db)
	if err != nil {
		t.Fatalf("ReadMeta: %v", err)
	}
	if !m.Procedures || !res.Procedures {
		t.Errorf("procedures: meta %v, result %v; want installed", m.Procedures, res.Procedures)
	}
	t.Logf("2 warehouses: %d rows, load %.1f s (%.0f rows/s), index %.1f s, procedures %.1f s, analyze %.1f s, total %.1f s",
		res.TotalRows, res.LoadSeconds, res.RowsPerSec, res.IndexSeconds, res.ProceduresSeconds, res.AnalyzeSeconds, res.TotalSeconds)
}
