package mysql_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dbtest"
	_ "github.com/oltplab/oltplab/internal/dialect/mysql" // the dialect under test registers itself
)

// mariadb is MariaDB on the private server of scripts/testservers.sh, for
// the conformance suite every dialect runs (internal/conformance).
var mariadb = conformance.Dialect{
	Open:           dbtest.MySQL,
	SessionIDQuery: "SELECT CONNECTION_ID()",
	Counters: []string{"innodb_row_lock_waits", "innodb_row_lock_time_ms", "innodb_log_waits",
		"innodb_data_fsyncs", "innodb_buffer_pool_reads",
		"innodb_buffer_pool_read_requests", "innodb_data_read_bytes", "innodb_data_written_bytes"},
	GrowingCounters: []string{"innodb_row_lock_waits"},
	LookAlikes:      conformance.LookAlikes(dbtest.MySQLLookAlikes),
	BaselineExists:  dbtest.BaselineExists,
}

func TestConformance(t *testing.T) { conformance.Run(t, mariadb) }

// TestTPCHConformance builds SF 0.01 and 0.1 and compares the 22 answers
// with DuckDB's.
func TestTPCHConformance(t *testing.T) { conformance.RunTPCH(t, mariadb, "0.01", "0.1") }

func BenchmarkConformance(b *testing.B) { conformance.Bench(b, mariadb) }
