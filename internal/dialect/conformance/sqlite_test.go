package conformance_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/dialect/conformance"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
)

// TestSQLite runs the conformance suite on a temporary SQLite file.
func TestSQLite(t *testing.T) {
	conformance.Run(t, func(t *testing.T) dialect.Target { return dbtest.SQLite(t) })
}
