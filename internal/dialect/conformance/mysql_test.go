package conformance_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/dialect/conformance"
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
)

// TestMySQL runs the conformance suite on the private MariaDB server of
// scripts/testservers.sh: skipped without it, failed under CI.
func TestMySQL(t *testing.T) {
	conformance.Run(t, func(t *testing.T) dialect.Target { return dbtest.MySQL(t) })
}
