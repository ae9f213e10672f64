package conformance_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/dialect/conformance"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
)

// TestPostgres runs the conformance suite on the private PostgreSQL
// server of scripts/testservers.sh: skipped without it, failed under CI.
func TestPostgres(t *testing.T) {
	conformance.Run(t, func(t *testing.T) dialect.Target { return dbtest.Postgres(t) })
}
