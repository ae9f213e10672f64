package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
	"time"
)

func monitorFixture() Monitor {
	m := Monitor{RunID: 9, Label: "noon", Target: "postgres://bench:" + fixtureSecret + "@10.0.0.5:5432/tpcc",
		Started: time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC), Seconds: 3,
		Figures: &HostFigures{CPUBusyPct: 40, CPUIdlePct: 55, CPUIOWaitPct: 5, DataDevice: "vda", DiskIOPS: 300,
			LoadGeneratorOnly: true, DatabaseHost: "10.0.0.5"}}
	for s := 1; s <= 3; s++ {
		m.Points = append(m.Points, SeriesPoint{TSeconds: float64(s), CPUBusyPct: 40, CPUIOWaitPct: 5, DiskIOPS: 300, DiskLatencyMillis: 0.4})
	}
	return m
}

// TestMonitorsReport: a report of a monitor alone has its table and
// charts, no profile tables, and no password; CSV gives one row per
// second, and refuses profiles and monitors together.
func TestMonitorsReport(t *testing.T) {
	in := Input{Title: "monitors", Monitors: []Monitor{monitorFixture()}}
	var md bytes.Buffer
	if err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if !strings.Contains(out, "## Monitors") || strings.Contains(out, "## Profiles") || strings.Contains(out, fixtureSecret) {
		t.Errorf("Markdown of a monitor:\n%s", out)
	}
	if !strings.Contains(out, "the database at 10.0.0.5 was not measured") {
		t.Errorf("Markdown does not say the database host was not measured")
	}
	var html bytes.Buffer
	if err := HTML(&html, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `id="chart-monitor-0-cpu"`) || !strings.Contains(html.String(), `id="chart-monitor-0-disk"`) {
		t.Errorf("HTML of a monitor lacks its charts")
	}
	var c bytes.Buffer
	if err := CSV(&c, in); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(rows) != 4 || rows[1][3] != "1.000" {
		t.Errorf("monitor CSV: %v rows %q", err, rows)
	}
	mixed := fixture()
	mixed.Monitors = []Monitor{monitorFixture()}
	if err := CSV(&bytes.Buffer{}, mixed); !errors.Is(err, ErrMixedCSV) {
		t.Errorf("CSV of profiles and monitors: got %v, want ErrMixedCSV", err)
	}
}
