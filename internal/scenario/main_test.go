package scenario_test

import (
	"os"
	"testing"

	"github.com/oltplab/oltplab/internal/scenario"
)

// TestMain: these tests share the host with other packages' servers,
// which are foreign CPU to their runs; only the tests of contamination
// judge it, turning it on for themselves (scenario.JudgeInterference).
func TestMain(m *testing.M) {
	scenario.JudgeInterference(false)
	os.Exit(m.Run())
}
