package sampler

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	"github.com/oltplab/oltplab/internal/store"
)

func openPostgres(t *testing.T) dialect.Database {
	t.Helper()
	ctx := context.Background()
	db, err := dialect.Open(ctx, dbtest.Postgres(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestSamplerSeesLockWait runs the sampler against PostgreSQL while one
// session blocks on a row another holds: the DB series show lock time.
func TestSamplerSeesLockWait(t *testing.T) {
	db := openPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	setup, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	for _, q := range []string{"CREATE TABLE w (id int PRIMARY KEY, v int)", "INSERT INTO w VALUES (1, 0)"} {
		if _, err := setup.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	holder, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	waiter, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()

	s := Start(ctx, Options{Interval: 200 * time.Millisecond, WaitInterval: 50 * time.Millisecond, DB: db})
	if _, err := holder.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, "UPDATE w SET v = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "UPDATE w SET v = 2 WHERE id = 1")
		done <- err
	}()
	for !s.has(store.SourceDB, "db_active_sessions", "lock") && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := holder.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for !s.has(store.SourceDB, "db_xact_commit_per_s", "") && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	r := s.Stop()
	if r.WaitSource == "" || len(r.Warnings) > 0 {
		t.Errorf("got wait source %q, warnings %v; want a source and no warnings", r.WaitSource, r.Warnings)
	}
	sum := Summarize(r.Samples, -time.Hour, time.Hour)
	var lock bool
	for _, w := range sum.Waits {
		lock = lock || (w.Name == "lock" && w.SharePct > 0)
	}
	if !lock {
		t.Errorf("summary waits: got %+v, want a share of lock", sum.Waits)
	}
}

func (s *Sampler) has(src store.Source, metric, dev string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.samples {
		if x.s.Source == src && x.s.Metric == metric && x.s.Device == dev {
			return true
		}
	}
	return false
}

// TestSamplerOverhead measures the sampler's own CPU at the default 1 s
// interval (and 200 ms waits when a PostgreSQL server is available) over
// OLTPLAB_SAMPLER_OVERHEAD (e.g. 30s). It reports; it asserts nothing on
// time. Skipped unless the variable is set.
func TestSamplerOverhead(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("OLTPLAB_SAMPLER_OVERHEAD"))
	if err != nil || d <= 0 {
		t.Skip("set OLTPLAB_SAMPLER_OVERHEAD=30s to measure")
	}
	opts := Options{Dirs: map[string]string{"data": t.TempDir()}}
	if os.Getenv("OLTPLAB_TEST_POSTGRES") != "" {
		opts.DB = openPostgres(t)
	}
	s := Start(context.Background(), opts)
	time.Sleep(d)
	r := s.Stop()
	t.Logf("sampler CPU %.4f s over %.1f s wall = %.3f%% of one core (db: %v, %d samples)",
		r.SamplerCPUSeconds, r.WallSeconds, r.SamplerCPUPct, opts.DB != nil, len(r.Samples))
}
