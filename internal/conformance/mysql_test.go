package conformance_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dbtest"
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
)

// mysql is MariaDB on the private server of scripts/testservers.sh:
// skipped without it, failed under CI.
var mysql = conformance.Dialect{
	Open:           dbtest.MySQL,
	SessionIDQuery: "SELECT CONNECTION_ID()",
	Counters: []string{"innodb_row_lock_waits", "innodb_row_lock_time_ms", "innodb_log_waits",
		"innodb_data_fsyncs", "innodb_buffer_pool_reads",
		"innodb_buffer_pool_read_requests", "innodb_data_read_bytes", "innodb_data_written_bytes"},
	GrowingCounters: []string{"innodb_row_lock_waits"},
	LookAlikes:      lookAlikes(dbtest.MySQLLookAlikes),
	BaselineExists:  dbtest.BaselineExists,
}

func TestMySQL(t *testing.T) {
	conformance.Run(t, mysql)
}

func BenchmarkMySQL(b *testing.B) { conformance.Bench(b, mysql) }
