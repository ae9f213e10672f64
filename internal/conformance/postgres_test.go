package conformance_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dbtest"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
)

// postgres is PostgreSQL on the private server of scripts/testservers.sh:
// skipped without it, failed under CI.
var postgres = conformance.Dialect{
	Open:           dbtest.Postgres,
	SessionIDQuery: "SELECT pg_backend_pid()",
	Counters:       []string{"xact_commit", "blks_hit", "wal_records", "wal_bytes", "checkpoints_timed", "deadlocks"},
	// A backend publishes its statistics when it exits.
	GrowingCounters: []string{"xact_commit", "wal_records", "wal_bytes"},
	LockWaitEvent:   "Lock:transactionid",
	LookAlikes:      lookAlikes(dbtest.PostgresLookAlikes),
	BaselineExists:  dbtest.BaselineExists,
}

func TestPostgres(t *testing.T) {
	conformance.Run(t, postgres)
}

func BenchmarkPostgres(b *testing.B) { conformance.Bench(b, postgres) }
