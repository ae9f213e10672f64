package sqlserver_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dbtest"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlserver" // the dialect under test registers itself
)

// sqlserver is the SQL Server dialect on the private T-SQL server of
// scripts/testservers.sh, Babelfish for PostgreSQL, for the conformance
// suite every dialect runs (internal/conformance). Babelfish lacks SQL
// Server's dynamic management views, ALTER INDEX and BACKUP, so the
// dialect opened on it implements no dialect.TxCounter, WaitSampler,
// IndexRebuilder or Checkpointer and the suite skips those abilities; the
// package's own tests check that they are found missing, and `oltplab
// selftest` checks them on a real server.
var sqlserver = conformance.Dialect{
	Open:            dbtest.SQLServer,
	SessionIDQuery:  "SELECT @@SPID",
	Counters:        []string{"lock_waits", "lock_wait_ms", "writelog_waits", "writelog_wait_ms"},
	GrowingCounters: []string{"lock_waits"},
}

func TestConformance(t *testing.T) { conformance.Run(t, sqlserver) }

func BenchmarkConformance(b *testing.B) { conformance.Bench(b, sqlserver) }
