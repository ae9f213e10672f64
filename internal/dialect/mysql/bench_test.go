package mysql_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dialect/mysql"
)

// The benchmarks every dialect shares are BenchmarkConformance
// (conformance_test.go); these measure the alternatives this dialect
// rejected.

// BenchmarkBuildVariants measures the alternatives the loader rejected:
// multi-row INSERT instead of LOAD DATA, and primary keys added after the
// load (compare with BenchmarkConformance/build).
func BenchmarkBuildVariants(b *testing.B) {
	b.Run("insert", func(b *testing.B) { conformance.BenchBuild(b, mariadb, mysql.UseInsertLoad) })
	b.Run("pk-after-load", func(b *testing.B) { conformance.BenchBuild(b, mariadb, mysql.UsePrimaryKeysAfterLoad) })
}

// BenchmarkCallText measures the sessions with CALLs sent as text instead
// of prepared (compare with BenchmarkConformance/session).
func BenchmarkCallText(b *testing.B) {
	conformance.BenchSessions(b, mariadb, mysql.UseCallText)
}
