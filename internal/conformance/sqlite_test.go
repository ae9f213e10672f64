package conformance_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dbtest"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
)

// sqlite is a temporary SQLite file.
var sqlite = conformance.Dialect{Open: dbtest.SQLite,
	LookAlikes: lookAlikes(dbtest.SQLiteLookAlikes), BaselineExists: dbtest.BaselineExists}

func TestSQLite(t *testing.T) {
	conformance.Run(t, sqlite)
}

func BenchmarkSQLite(b *testing.B) { conformance.Bench(b, sqlite) }
