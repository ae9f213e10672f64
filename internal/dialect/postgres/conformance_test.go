package postgres_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dbtest"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres" // the dialect under test registers itself
)

// pgsuite is PostgreSQL on the private server of scripts/testservers.sh,
// for the conformance suite every dialect runs (internal/conformance).
var pgsuite = conformance.Dialect{
	Open:           dbtest.Postgres,
	SessionIDQuery: "SELECT pg_backend_pid()",
	Counters:       []string{"xact_commit", "blks_hit", "wal_records", "wal_bytes", "checkpoints_timed", "deadlocks"},
	// A backend publishes its statistics when it exits.
	GrowingCounters: []string{"xact_commit", "wal_records", "wal_bytes"},
	LockWaitEvent:   "Lock:transactionid",
	LookAlikes:      conformance.LookAlikes(dbtest.PostgresLookAlikes),
	BaselineExists:  dbtest.BaselineExists,
}

func TestConformance(t *testing.T) { conformance.Run(t, pgsuite) }

// TestTPCHConformance builds SF 0.01 and 0.1 and compares the 22 answers
// with DuckDB's.
func TestTPCHConformance(t *testing.T) { conformance.RunTPCH(t, pgsuite, "0.01", "0.1") }

func BenchmarkConformance(b *testing.B) { conformance.Bench(b, pgsuite) }
