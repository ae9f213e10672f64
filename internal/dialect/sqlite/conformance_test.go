package sqlite_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dbtest"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite" // the dialect under test registers itself
	"github.com/oltplab/oltplab/internal/testenv"
)

// sqlite is a temporary SQLite file, for the conformance suite every
// dialect runs (internal/conformance).
var sqlite = conformance.Dialect{Open: dbtest.SQLite,
	LookAlikes: conformance.LookAlikes(dbtest.SQLiteLookAlikes), BaselineExists: dbtest.BaselineExists}

func TestConformance(t *testing.T) {
	testenv.Require(t, testenv.Long)
	conformance.Run(t, sqlite)
}

// TestTPCHConformance builds SF 0.01 and 0.1 and compares the 22 answers
// with DuckDB's.
func TestTPCHConformance(t *testing.T) {
	testenv.Require(t, testenv.Long)
	conformance.RunTPCH(t, sqlite, "0.01", "0.1")
}

func BenchmarkConformance(b *testing.B) { conformance.Bench(b, sqlite) }
