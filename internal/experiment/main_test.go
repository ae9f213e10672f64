package experiment

import (
	"os"
	"testing"

	"github.com/oltplab/oltplab/internal/latency"
)

func TestMain(m *testing.M) {
	// A managed instance's latency layer is served by this binary again.
	if latency.IsDaemon() {
		os.Exit(latency.DaemonMain())
	}
	os.Exit(m.Run())
}
