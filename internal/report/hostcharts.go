package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// hostValues picks one host figure of profile pi at every step size of
// the report; nil where the step is missing, was not sampled, or pick
// reports no figure.
func (v *view) hostValues(pi int, pick func(*HostFigures) (float64, bool)) []*float64 {
	out := make([]*float64, len(v.vus))
	for i, vus := range v.vus {
		s, ok := v.step(pi, vus)
		if !ok || s.Host == nil {
			continue
		}
		if x, ok := pick(s.Host); ok {
			out[i] = num(x)
		}
	}
	return out
}

// cpuChart plots every sampled profile's CPU idle (solid) and iowait
// (dashed, paler) share against virtual users.
func (v *view) cpuChart() chartSpec {
	c := chartSpec{ID: "chart-cpu", Title: "CPU idle and iowait vs virtual users", YLabel: "% of CPU time", X: xs(v.vus), ZeroY: true,
		Note: "Host CPU time, averaged over the complete repeats of each step: idle solid, iowait (idle while I/O was outstanding) dashed."}
	for pi, p := range v.profiles {
		if !v.hasHost(pi) {
			continue
		}
		if remote, addr := v.loadGeneratorOnly(pi); remote {
			c.Note += " " + p.Name + ": the database ran on another machine (" + addr +
				"), which was not measured; its curves are the load generator's CPU."
		}
		c.Series = append(c.Series,
			seriesSpec{Label: p.Name + " idle", Color: color(pi), Role: "value",
				Values: v.hostValues(pi, func(h *HostFigures) (float64, bool) { return h.CPUIdlePct, true })},
			seriesSpec{Label: p.Name + " iowait", Color: lighten(color(pi)), Role: "value", Dash: true,
				Values: v.hostValues(pi, func(h *HostFigures) (float64, bool) { return h.CPUIOWaitPct, true })})
	}
	return c
}

// diskLatencyChart plots every sampled profile's average data-disk
// latency (solid) and the p99 of its per-second averages (dashed).
func (v *view) diskLatencyChart() chartSpec {
	c := chartSpec{ID: "chart-disk-latency", Title: "Data disk latency vs virtual users", YLabel: "ms", X: xs(v.vus), ZeroY: true,
		Note: "Average latency of the data device over the step (solid) and, dashed, the 99th percentile of its per-second average latencies: " +
			diskP99Note + "; it shows how slow the worst seconds were."}
	for pi, p := range v.profiles {
		if !v.hasHost(pi) {
			continue
		}
		if remote, addr := v.loadGeneratorOnly(pi); remote {
			c.Note += " " + p.Name + ": the database ran on another machine (" + addr +
				"), which was not measured; its curve is the load generator's busiest device."
		}
		// No I/O in a step leaves no latency: a gap, not a zero.
		c.Series = append(c.Series,
			seriesSpec{Label: p.Name + " avg", Color: color(pi), Role: "value",
				Values: v.hostValues(pi, func(h *HostFigures) (float64, bool) { return h.DiskLatencyMillis, h.DiskLatencyMillis > 0 })},
			seriesSpec{Label: p.Name + " " + diskP99Note, Color: lighten(color(pi)), Role: "value", Dash: true,
				Values: v.hostValues(pi, func(h *HostFigures) (float64, bool) { return h.DiskLatencyP99Millis, h.DiskLatencyP99Millis > 0 })})
	}
	return c
}

// iopsChart plots every sampled profile's data-device read IOPS (solid)
// and write IOPS (dashed, paler) against virtual users, with the caps the
// targets were given as reference lines.
func (v *view) iopsChart() chartSpec {
	c := chartSpec{ID: "chart-disk-iops", Title: "Data disk IOPS vs virtual users", YLabel: "IOPS", X: xs(v.vus), ZeroY: true,
		Note: "I/O operations per second on the device under the data directory, averaged over the complete repeats of each step: " +
			"reads solid, writes dashed; thin dotted lines are the I/O caps a target was given. The whole device is counted, so other users of it add to it; " +
			"\"own write\" (darker, dashed) is a managed instance's own writes as its cgroup counts them (" + ownIONote + ")."}
	onDevice := func(f func(*HostFigures) float64) func(*HostFigures) (float64, bool) {
		return func(h *HostFigures) (float64, bool) { return f(h), h.DataDevice != "" }
	}
	for pi, p := range v.profiles {
		if !v.hasHost(pi) {
			continue
		}
		c.Series = append(c.Series,
			seriesSpec{Label: p.Name + " read", Color: color(pi), Role: "value",
				Values: v.hostValues(pi, onDevice(func(h *HostFigures) float64 { return h.DiskReadIOPS }))},
			seriesSpec{Label: p.Name + " write", Color: lighten(color(pi)), Role: "value", Dash: true,
				Values: v.hostValues(pi, onDevice(func(h *HostFigures) float64 { return h.DiskWriteIOPS }))})
		if v.hasOwnIO(pi) {
			c.Series = append(c.Series, seriesSpec{Label: p.Name + " own write", Color: darken(color(pi)), Role: "value", Dash: true,
				Values: v.hostValues(pi, func(h *HostFigures) (float64, bool) { return h.OwnWriteIOPS, h.OwnIO })})
		}
	}
	// The caps, as reference lines; a cap far above every value (one set
	// only to have the instance's own I/O counted) would flatten the chart.
	top := 0.0
	for _, s := range c.Series {
		for _, x := range s.Values {
			if x != nil {
				top = max(top, *x)
			}
		}
	}
	for pi, p := range v.profiles {
		if !v.hasHost(pi) {
			continue
		}
		for _, k := range []string{"read_iops", "write_iops"} {
			limit, ok := p.Limits[k]
			if !ok || limit <= 0 || limit > 4*top {
				continue
			}
			line := make([]*float64, len(v.vus))
			for i := range line {
				line[i] = num(limit)
			}
			c.Series = append(c.Series, seriesSpec{Label: p.Name + " " + strings.TrimSuffix(k, "_iops") + " cap", Color: color(pi),
				Values: line, Role: "ref", Dash: true})
		}
	}
	return c
}

// ownIONote says what a managed instance's own I/O counts.
const ownIONote = "with cgroup v1, the direct and synchronous I/O its processes issue, such as WAL and data-file flushes, not the kernel's later writeback"

// hasOwnIO reports whether any step of profile pi has the database's own I/O.
func (v *view) hasOwnIO(pi int) bool {
	return slices.ContainsFunc(v.profiles[pi].Steps, func(s Step) bool { return s.Host != nil && s.Host.OwnIO })
}

// darken mixes a #rrggbb colour 35% towards black.
func darken(hex string) string {
	x, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil {
		return hex
	}
	mix := func(c uint64) uint64 { return c * 65 / 100 }
	return fmt.Sprintf("#%02x%02x%02x", mix(x>>16&0xff), mix(x>>8&0xff), mix(x&0xff))
}

// waitChart plots the share of sampled database session time of every
// wait class of profile pi against virtual users.
func (v *view) waitChart(pi int) chartSpec {
	p := v.profiles[pi]
	c := chartSpec{ID: "chart-waits-" + strconv.Itoa(pi), Title: "Wait classes vs virtual users: " + p.Name,
		YLabel: "% of DB time", X: xs(v.vus), ZeroY: true}
	set := map[string]bool{}
	for _, s := range p.Steps {
		if s.Host != nil {
			for k := range s.Host.WaitSharePct {
				set[k] = true
			}
		}
	}
	for i, class := range orderWaitClasses(set) {
		c.Series = append(c.Series, seriesSpec{Label: class, Color: waitClassColor(class, i), Role: "value",
			Values: v.hostValues(pi, func(h *HostFigures) (float64, bool) {
				// A sampled step without this class spent no time in it.
				return h.WaitSharePct[class], h.WaitSharePct != nil
			})})
	}
	return c
}

// hostCharts returns the host and database charts against virtual
// users; none when no profile was sampled.
func (v *view) hostCharts() []chartSpec {
	sampled := false
	for pi := range v.profiles {
		sampled = sampled || v.hasHost(pi)
	}
	if !sampled {
		return nil
	}
	all := []chartSpec{v.cpuChart(), v.diskLatencyChart(), v.iopsChart()}
	for pi := range v.profiles {
		if v.hasHost(pi) {
			all = append(all, v.waitChart(pi))
		}
	}
	return drawable(all)
}

// seriesCharts returns, for every profile with a per-second series, three
// small charts sharing one cursor: throughput with transaction p99
// latency, CPU busy and iowait, data-disk IOPS and latency.
func (v *view) seriesCharts() []chartSpec {
	var all []chartSpec
	for pi, p := range v.profiles {
		if p.Series == nil || len(p.Series.Points) == 0 {
			continue
		}
		pts := slices.Clone(p.Series.Points)
		slices.SortStableFunc(pts, func(a, b SeriesPoint) int { return cmp.Compare(a.TSeconds, b.TSeconds) })
		x := make([]float64, len(pts))
		for i, pt := range pts {
			x[i] = pt.TSeconds
		}
		col := func(pick func(SeriesPoint) (float64, bool)) []*float64 {
			out := make([]*float64, len(pts))
			for i, pt := range pts {
				if f, ok := pick(pt); ok {
					out[i] = num(f)
				}
			}
			return out
		}
		always := func(f func(SeriesPoint) float64) func(SeriesPoint) (float64, bool) {
			return func(pt SeriesPoint) (float64, bool) { return f(pt), true }
		}
		// A second without transactions or without I/O has no latency.
		positive := func(f func(SeriesPoint) float64) func(SeriesPoint) (float64, bool) {
			return func(pt SeriesPoint) (float64, bool) { return f(pt), f(pt) > 0 }
		}
		of := fmt.Sprintf("%s at %d VUs (run %d)", p.Name, p.Series.VUs, p.Series.RunID)
		id := "chart-series-" + strconv.Itoa(pi)
		sync := "series-" + strconv.Itoa(pi)
		base := chartSpec{XKind: "seconds", X: x, ZeroY: true, Height: 240, Sync: sync, Spans: spanSpecs(p.Series.Faults)}

		tput := base
		tput.ID, tput.Title, tput.YLabel, tput.Y2Label = id+"-throughput", "Throughput per second: "+of, "per minute", "p99 ms"
		tput.Note = fmt.Sprintf("One run of %s, second by second from the start of its measured window; the three charts share a cursor. "+
			"Throughput as per-minute rates; dashed: the p99 latency of the transactions completed in that second.", of)
		if len(p.Series.Faults) > 0 {
			tput.Note += " Shaded red: the run's outages and stalls."
		}
		tput.Series = []seriesSpec{
			{Label: "TPM", Color: "#0072b2", Role: "value", Values: col(always(func(pt SeriesPoint) float64 { return pt.TPM }))},
			{Label: "NOPM", Color: "#009e73", Role: "value", Values: col(always(func(pt SeriesPoint) float64 { return pt.NOPM }))},
			{Label: "p99 latency (ms)", Color: "#d55e00", Role: "value", Dash: true, Scale: "y2",
				Values: col(positive(func(pt SeriesPoint) float64 { return pt.P99Millis }))},
		}

		cpu, disk := hostSecondCharts(base, id, of, pts)
		all = append(all, tput, cpu, disk)
	}
	return drawable(all)
}

// hostSecondCharts are the per-second CPU (busy, iowait) and data-disk
// (IOPS, latency) charts of pts, from the chart template base.
func hostSecondCharts(base chartSpec, id, of string, pts []SeriesPoint) (cpu, disk chartSpec) {
	col := func(pick func(SeriesPoint) float64, positiveOnly bool) []*float64 {
		out := make([]*float64, len(pts))
		for i, pt := range pts {
			if f := pick(pt); !positiveOnly || f > 0 {
				out[i] = num(f)
			}
		}
		return out
	}
	cpu = base
	cpu.ID, cpu.Title, cpu.YLabel = id+"-cpu", "CPU per second: "+of, "% of CPU time"
	cpu.Series = []seriesSpec{
		{Label: "CPU busy", Color: "#0072b2", Role: "value", Values: col(func(pt SeriesPoint) float64 { return pt.CPUBusyPct }, false)},
		{Label: "CPU iowait", Color: "#d55e00", Role: "value", Dash: true, Values: col(func(pt SeriesPoint) float64 { return pt.CPUIOWaitPct }, false)},
	}
	disk = base
	disk.ID, disk.Title, disk.YLabel, disk.Y2Label = id+"-disk", "Data disk per second: "+of, "IOPS", "latency ms"
	disk.Series = []seriesSpec{
		{Label: "IOPS", Color: "#0072b2", Role: "value", Values: col(func(pt SeriesPoint) float64 { return pt.DiskIOPS }, false)},
		// A second without I/O has no latency: a gap, not a zero.
		{Label: "latency (ms)", Color: "#d55e00", Role: "value", Dash: true, Scale: "y2",
			Values: col(func(pt SeriesPoint) float64 { return pt.DiskLatencyMillis }, true)},
	}
	return cpu, disk
}
