package load_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// TestBuildNeverDropsForeignTables: a database holding the user's own
// table with a TPC-C name (customer) and no oltplab metadata is refused,
// with --drop or not, and the table keeps its rows.
func TestBuildNeverDropsForeignTables(t *testing.T) {
	for _, c := range []struct {
		name   string
		target func(testing.TB) dialect.Target
	}{{"sqlite", dbtest.SQLite}, {"postgres", dbtest.Postgres}, {"mysql", dbtest.MySQL}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			tg := c.target(t)
			if tg.Scheme == "sqlite" {
				// The dialect opens only files it built; the user made this one.
				raw, err := sql.Open("sqlite", tg.URL.Opaque+tg.URL.Path)
				if err == nil {
					_, err = raw.Exec("CREATE TABLE oltplab_probe (x INT); DROP TABLE oltplab_probe")
					raw.Close()
				}
				if err != nil {
					t.Fatalf("create the SQLite file: %v", err)
				}
			}
			db, err := dialect.Open(ctx, tg)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer db.Close()
			conn, err := db.Connect(ctx)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			for _, stmt := range []string{"CREATE TABLE customer (name VARCHAR(20))", "INSERT INTO customer VALUES ('mine')"} {
				if _, err := conn.Exec(ctx, stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			conn.Close()
			for _, drop := range []bool{false, true} {
				_, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 1, Seed: 1, Drop: drop}, nil)
				var fe *load.ForeignTablesError
				if !errors.As(err, &fe) {
					t.Fatalf("Build (drop %v): got %v, want a ForeignTablesError", drop, err)
				}
				if got := fmt.Sprint(fe.Tables); got != "[customer]" {
					t.Errorf("conflicting tables: got %s, want [customer]", got)
				}
				if !strings.Contains(err.Error(), "customer") || strings.Contains(err.Error(), "already holds") {
					t.Errorf("message %q does not name the user's table", err)
				}
				if n := count(t, db, "SELECT COUNT(*) FROM customer"); n != 1 {
					t.Errorf("after Build (drop %v): the user's customer table holds %d rows, want 1", drop, n)
				}
			}
		})
	}
}
