package experiment

import (
	"os"
	"testing"

	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/scenario"
)

// TestMain: a managed instance's latency layer is served by this binary
// again; and these tests share the host with other packages' servers,
// which are foreign CPU to their runs: only the tests of contamination
// judge it, turning it on for themselves (scenario.JudgeInterference).
func TestMain(m *testing.M) {
	if latency.IsDaemon() {
		os.Exit(latency.DaemonMain())
	}
	scenario.JudgeInterference(false)
	os.Exit(m.Run())
}
