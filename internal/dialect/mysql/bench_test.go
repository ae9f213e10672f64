package mysql_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect/mysql"
)

// mariadb is the private MariaDB server of scripts/testservers.sh. The
// benchmarks every dialect shares run in internal/conformance; these
// measure the alternatives this dialect rejected.
var mariadb = conformance.Dialect{Open: dbtest.MySQL}

// BenchmarkBuildVariants measures the alternatives the loader rejected:
// multi-row INSERT instead of LOAD DATA, and primary keys added after the
// load (compare with BenchmarkMySQL/build of internal/conformance).
func BenchmarkBuildVariants(b *testing.B) {
	b.Run("insert", func(b *testing.B) { conformance.BenchBuild(b, mariadb, mysql.UseInsertLoad) })
	b.Run("pk-after-load", func(b *testing.B) { conformance.BenchBuild(b, mariadb, mysql.UsePrimaryKeysAfterLoad) })
}

// BenchmarkCallText measures the sessions with CALLs sent as text instead
// of prepared (compare with BenchmarkMySQL/session of internal/conformance).
func BenchmarkCallText(b *testing.B) {
	conformance.BenchSessions(b, mariadb, mysql.UseCallText)
}
