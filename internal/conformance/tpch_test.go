package conformance_test

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
)

// The TPC-H suite at SF 0.01 and 0.1 on every dialect.

func TestTPCHPostgres(t *testing.T) { conformance.RunTPCH(t, postgres, "0.01", "0.1") }

func TestTPCHSQLite(t *testing.T) { conformance.RunTPCH(t, sqlite, "0.01", "0.1") }

func TestTPCHMySQL(t *testing.T) { conformance.RunTPCH(t, mysql, "0.01", "0.1") }
