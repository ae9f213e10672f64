package scenario_test

import (
	"context"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/scenario"
)

// TestLocalServerCPU: a server on this host given by URL (the test
// servers) names its processes (PostgreSQL: pg_backend_pid() and its
// postmaster; MariaDB: @@pid_file); the run's CPU account reads their CPU
// time, which a query that works the server makes grow.
func TestLocalServerCPU(t *testing.T) {
	for _, c := range []struct {
		name string
		tg   func(testing.TB) dialect.Target
		how  string
		work string
	}{
		{"postgres", dbtest.Postgres, "pg_backend_pid()", "SELECT count(*) FROM generate_series(1, 3000000)"},
		{"mysql", dbtest.MySQL, "pid file", "SELECT BENCHMARK(3000000, MD5('oltplab'))"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := dialect.Open(ctx, c.tg(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			probe, how, err := scenario.LocalServerCPU(ctx, db)
			if err != nil {
				t.Fatalf("the local server's CPU: %v", err)
			}
			if !strings.Contains(how, c.how) {
				t.Errorf("found as %q, want from %s", how, c.how)
			}
			before, err := probe()
			if err != nil {
				t.Fatal(err)
			}
			conn, err := db.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var v int64
			if err := conn.QueryRow(ctx, c.work).Scan(&v); err != nil {
				t.Fatal(err)
			}
			after, err := probe()
			if err != nil {
				t.Fatal(err)
			}
			if after <= before {
				t.Errorf("the server's CPU time went from %g s to %g s over a query that worked it: want it to grow", before, after)
			}
		})
	}
}
