package report

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Monitors in a report: one summary table for all, and per monitor the
// per-second CPU and disk charts (HTML). They have no steps, so the
// profile tables and charts leave them out.

// monitorTable lists every monitor with its averages; empty without
// monitors.
func (v *view) monitorTable() table {
	if len(v.monitors) == 0 {
		return table{}
	}
	t := table{ID: "monitors", Title: "Monitors",
		Note: "Host (and database) figures sampled while something else made the load (oltplab monitor), averaged over " +
			"the whole monitor. CPU: share of the host's CPU time; disk: the data device when the database was on this " +
			"machine, else the busiest device; wait classes from the database itself, top three.",
		Header: []string{"Result", "Label", "Target", "Started", "Seconds", "Host", "CPU busy", "CPU idle", "CPU iowait",
			"Disk", "Disk IOPS", "Disk MB/s", "Disk latency avg (ms)", "Top wait classes"},
		Right: []bool{true, false, false, false, true, false, true, true, true, false, true, true, true, false}}
	for _, m := range v.monitors {
		secs := strconv.FormatFloat(m.Seconds, 'f', 0, 64)
		if m.Partial {
			secs += " (stopped early)"
		}
		target := m.Target
		if target == "" {
			target = "host only"
		}
		cells := texts(strconv.FormatInt(m.RunID, 10), m.Label, target, formatTime(m.Started), secs)
		h := m.Figures
		if h == nil {
			for range len(t.Header) - len(cells) {
				cells = append(cells, cell{Text: dash})
			}
			t.Rows = append(t.Rows, row{Cells: cells})
			continue
		}
		host := "this machine"
		switch {
		case h.LoadGeneratorOnly:
			host = "this machine only: the database at " + h.DatabaseHost + " was not measured"
		case h.Agent != "":
			host = "the database's host, by oltplab agent at " + h.Agent
		}
		dev := h.DataDevice
		if dev == "" {
			dev = dash
		}
		cells = append(cells, texts(host, formatPct(h.CPUBusyPct), formatPct(h.CPUIdlePct), formatPct(h.CPUIOWaitPct), dev,
			formatNumber(h.DiskIOPS), formatNumber(h.DiskMBps), formatMillis(h.DiskLatencyMillis),
			formatWaitShares(h.WaitSharePct))...)
		cells[5].Warn = h.LoadGeneratorOnly
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}

// monitorCharts are, per monitor with samples, its per-second CPU and
// disk charts sharing a cursor.
func (v *view) monitorCharts() []chartSpec {
	var all []chartSpec
	for i, m := range v.monitors {
		if len(m.Points) == 0 {
			continue
		}
		pts := slices.Clone(m.Points)
		slices.SortStableFunc(pts, func(a, b SeriesPoint) int { return cmp.Compare(a.TSeconds, b.TSeconds) })
		x := make([]float64, len(pts))
		for j, p := range pts {
			x[j] = p.TSeconds
		}
		name := m.Label
		if name == "" {
			name = "result " + strconv.FormatInt(m.RunID, 10)
		}
		id := "chart-monitor-" + strconv.Itoa(i)
		base := chartSpec{XKind: "seconds", X: x, ZeroY: true, Height: 240, Sync: "monitor-" + strconv.Itoa(i)}
		cpu, disk := hostSecondCharts(base, id, "monitor "+name, pts)
		cpu.Note = fmt.Sprintf("Monitor %s, second by second from its start; the two charts share a cursor.", name)
		all = append(all, cpu, disk)
	}
	return drawable(all)
}

// monitorCSVHeader is the stable column list of a CSV of monitors: one
// row per monitor and second. Columns are only ever appended.
var monitorCSVHeader = []string{"run_id", "label", "target", "t_s", "cpu_busy_pct", "cpu_iowait_pct", "disk_iops", "disk_latency_ms",
	"load_generator_only"}

// monitorCSV writes the monitors' per-second series.
func monitorCSV(w io.Writer, v *view) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(monitorCSVHeader); err != nil {
		return fmt.Errorf("write csv header: %w", err)
	}
	for _, m := range v.monitors {
		remote := m.Figures != nil && m.Figures.LoadGeneratorOnly
		for _, p := range m.Points {
			rec := []string{strconv.FormatInt(m.RunID, 10), m.Label, m.Target, csvFloat(p.TSeconds), csvFloat(p.CPUBusyPct),
				csvFloat(p.CPUIOWaitPct), csvFloat(p.DiskIOPS), csvFloat(p.DiskLatencyMillis), strconv.FormatBool(remote)}
			if err := cw.Write(rec); err != nil {
				return fmt.Errorf("write csv row of monitor %d: %w", m.RunID, err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}
