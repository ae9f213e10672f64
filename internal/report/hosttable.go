package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// diskP99Note explains the p99 disk latency figure wherever it is shown:
// the samplers see one average latency per second, so its percentile is
// over seconds, not over I/Os.
const diskP99Note = "p99 of per-second averages, not a per-I/O percentile"

// hasHost reports whether any step of profile pi has host figures.
func (v *view) hasHost(pi int) bool {
	return slices.ContainsFunc(v.profiles[pi].Steps, func(s Step) bool { return s.Host != nil })
}

// formatPct formats a figure that already is a percentage.
func formatPct(pct float64) string {
	if math.IsNaN(pct) || math.IsInf(pct, 0) {
		return dash
	}
	return strconv.FormatFloat(pct, 'f', 1, 64) + "%"
}

// formatWaitShares lists the top three wait classes with their shares:
// "data_io 41.0%, cpu 30.2%, lock 12.1%".
func formatWaitShares(shares map[string]float64) string {
	var parts []string
	for _, c := range topWaitClasses(shares, 3) {
		parts = append(parts, c+" "+formatPct(shares[c]))
	}
	if len(parts) == 0 {
		return dash
	}
	return strings.Join(parts, ", ")
}

// formatAvgWaits lists the engine's own average wait times, longest
// first: "row lock wait 3.40 ms; WAL sync 1.20 ms".
func formatAvgWaits(waits map[string]float64) string {
	labels := slices.SortedFunc(maps.Keys(waits), func(a, b string) int {
		return cmp.Or(cmp.Compare(waits[b], waits[a]), cmp.Compare(a, b))
	})
	var parts []string
	for _, l := range labels {
		parts = append(parts, l+" "+formatMillis(waits[l])+" ms")
	}
	if len(parts) == 0 {
		return dash
	}
	return strings.Join(parts, "; ")
}

// hostTable lists the host and database figures of profile pi per step;
// it is empty when no step was sampled.
func (v *view) hostTable(pi int) table {
	if !v.hasHost(pi) {
		return table{}
	}
	p := v.profiles[pi]
	devices := map[string]bool{}
	for _, s := range p.Steps {
		if s.Host != nil && s.Host.DataDevice != "" {
			devices[s.Host.DataDevice] = true
		}
	}
	// One data device (the usual case) is named in the note; several get
	// a column.
	deviceColumn := len(devices) > 1
	note := "Averages over the complete repeats of each step. CPU: share of the host's CPU time. Disk: the data device"
	if remote, addr := v.loadGeneratorOnly(pi); remote {
		note = "The database ran on another machine (" + addr + "), which was not measured: CPU and disk figures are " +
			"the load generator's, the machine oltplab ran on. Averages over the complete repeats of each step. " +
			"CPU: share of the load generator's CPU time. Disk: its busiest device"
	} else if agent, addr := v.agentMeasured(pi); agent != "" {
		note = "The database ran on another machine (" + addr + "); its CPU and disk figures were measured there by " +
			"oltplab agent at " + agent + ". Averages over the complete repeats of each step. CPU: share of the database " +
			"host's CPU time. Disk: its data device"
	}
	if len(devices) == 1 {
		note += " (" + slices.Collect(maps.Keys(devices))[0] + ")"
	}
	note += "; latency p99 is the " + diskP99Note + "; no figures (—) when the data is on no block device (tmpfs). Wait classes (from the database itself): share of sampled database " +
		"session time, top three. Average waits: wait times the engine measures itself."
	title := "Host and database: " + p.Name
	if remote, _ := v.loadGeneratorOnly(pi); remote {
		title = "Load generator (database host not measured) and database: " + p.Name
	} else if agent, _ := v.agentMeasured(pi); agent != "" {
		title = "Database host (oltplab agent at " + agent + ") and database: " + p.Name
	}
	t := table{ID: fmt.Sprintf("host-%d", pi), Title: title, Note: note,
		Header: []string{"VUs", "CPU busy", "CPU idle", "CPU iowait"},
		Right:  []bool{true, true, true, true}}
	if deviceColumn {
		t.Header = append(t.Header, "Data device")
		t.Right = append(t.Right, false)
	}
	t.Header = append(t.Header, "Disk IOPS", "Read IOPS", "Write IOPS", "Disk MB/s", "Disk latency avg (ms)", "Disk latency p99 of per-second avg (ms)")
	t.Right = append(t.Right, true, true, true, true, true, true)
	own := v.hasOwnIO(pi)
	if own {
		t.Header = append(t.Header, "Own read IOPS", "Own write IOPS")
		t.Right = append(t.Right, true, true)
		t.Note += " Own IOPS: the managed instance's own I/O as its cgroup counts it (" + ownIONote + "), whatever else used the device."
	}
	t.Header = append(t.Header, "Top wait classes", "Average waits")
	t.Right = append(t.Right, false, false)
	for _, s := range p.Steps {
		cells := texts(strconv.Itoa(s.VUs))
		h := s.Host
		if h == nil {
			for range len(t.Header) - 1 {
				cells = append(cells, cell{Text: dash})
			}
			t.Rows = append(t.Rows, row{Cells: cells})
			continue
		}
		cells = append(cells, texts(formatPct(h.CPUBusyPct), formatPct(h.CPUIdlePct), formatPct(h.CPUIOWaitPct))...)
		if deviceColumn {
			dev := h.DataDevice
			if dev == "" {
				dev = dash
			}
			cells = append(cells, cell{Text: dev})
		}
		if h.DataDevice == "" {
			// The data is on no block device (tmpfs): no device's I/O is its.
			cells = append(cells, texts(dash, dash, dash, dash, dash, dash)...)
		} else {
			cells = append(cells, texts(formatNumber(h.DiskIOPS), formatNumber(h.DiskReadIOPS), formatNumber(h.DiskWriteIOPS),
				formatNumber(h.DiskMBps), formatMillis(h.DiskLatencyMillis), formatMillis(h.DiskLatencyP99Millis))...)
		}
		if own {
			if h.OwnIO {
				cells = append(cells, texts(formatNumber(h.OwnReadIOPS), formatNumber(h.OwnWriteIOPS))...)
			} else {
				cells = append(cells, texts(dash, dash)...)
			}
		}
		cells = append(cells, texts(formatWaitShares(h.WaitSharePct), formatAvgWaits(h.AvgWaitMillis))...)
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}

// loadGeneratorOnly reports whether profile pi's host figures are the
// load generator's because the database ran elsewhere, and where.
func (v *view) loadGeneratorOnly(pi int) (bool, string) {
	for _, s := range v.profiles[pi].Steps {
		if s.Host != nil && s.Host.LoadGeneratorOnly {
			return true, s.Host.DatabaseHost
		}
	}
	return false, ""
}

// agentMeasured returns the agent that measured profile pi's database
// host, and the database's address; "" when none did.
func (v *view) agentMeasured(pi int) (agent, addr string) {
	for _, s := range v.profiles[pi].Steps {
		if s.Host != nil && s.Host.Agent != "" {
			return s.Host.Agent, s.Host.DatabaseHost
		}
	}
	return "", ""
}
