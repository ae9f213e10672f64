package results

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/report"
)

// RecordedCores is the recorded host's logical CPUs when the profile's
// database ran on that host (embedded SQLite, or a server on loopback),
// with where the figure comes from; 0 otherwise, since the recorded host
// is then the load generator.
func RecordedCores(p report.Profile) (int, string) {
	n, err := strconv.Atoi(p.Context["host.LogicalCPUs"])
	if err != nil || n <= 0 {
		return 0, ""
	}
	local := p.Dialect == "sqlite" || strings.HasPrefix(p.Target, "sqlite:")
	if u, err := url.Parse(p.Target); err == nil && !local {
		switch u.Hostname() {
		case "127.0.0.1", "localhost", "::1":
			local = true
		}
	}
	if !local {
		return 0, ""
	}
	return n, "the logical CPUs of the host the profile recorded (its database ran there)"
}
