package instance

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/dialect/mysql"
	"github.com/oltplab/oltplab/internal/dialect/postgres"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestBuildSurvivesServerCrash builds on a managed PostgreSQL whose
// commits are acknowledged before they are on disk (synchronous_commit
// off, the WAL writer asleep for 10 s), kills every process of the server
// the moment the build returns, and starts it again: the build must be
// whole (its metadata, written last, is there). Without the build's
// closing synchronous commit the metadata was lost and the next run
// refused the database as half-built.
//
// MariaDB the same way with innodb_flush_log_at_trx_commit = 0 (InnoDB
// flushes its log once every innodb_flush_log_at_timeout seconds, here 3).
func TestBuildSurvivesServerCrash(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		needEngine(t, Postgres)
		settings := map[string]string{"wal_writer_delay": "10s"}
		for k, v := range fastSettings {
			settings[k] = v
		}
		crashAfterBuild(t, Spec{Name: "pg-crash", Engine: Postgres, DataDir: fromTemplate(t, Postgres, "pg-crash"), Settings: settings}, postgres.Open)
	})
	t.Run("mariadb", func(t *testing.T) {
		needEngine(t, MariaDB)
		settings := map[string]string{"innodb_flush_log_at_trx_commit": "0", "innodb_flush_log_at_timeout": "3"}
		crashAfterBuild(t, Spec{Name: "my-crash", Engine: MariaDB, DataDir: filepath.Join(testRoot, "my-crash"), Settings: settings}, mysql.Open)
	})
}

func crashAfterBuild(t *testing.T, spec Spec, open func(context.Context, dialect.Target) (dialect.Database, error)) {
	ctx := context.Background()
	inst := startControlled(t, spec)
	defer inst.Stop(ctx)

	db, err := open(ctx, inst.Target())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 1, Seed: 7, ToolVersion: "test"}, nil); err != nil {
		db.Close()
		t.Fatalf("build: %v", err)
	}
	db.Close()
	for _, p := range descendants(inst.PID()) {
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
	select {
	case <-inst.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the killed server did not exit")
	}
	if _, err := inst.Restart(ctx, false); err != nil {
		t.Fatalf("start again after the crash: %v", err)
	}
	db, err = open(ctx, inst.Target())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := tpcc.ReadMeta(ctx, c)
	if err != nil {
		t.Fatalf("after the crash: %v", err)
	}
	if m.Warehouses != 1 {
		t.Errorf("after the crash the metadata says %d warehouses, want 1", m.Warehouses)
	}
}
