package report

import (
	"slices"
	"strconv"
	"strings"
)

// The device part names each source of I/O latency it shows: the
// device (the disk under all instances, as the kernel counts it), this
// instance's I/O as it saw it (a managed instance's latency layer, per
// operation, the delay included), and the database's own timing (the
// waits it measures itself: PostgreSQL's track_io_timing and WAL sync
// time, MariaDB's performance_schema file waits).

const (
	sourceDevice   = "Device (the disk under all instances)"
	sourceInstance = "This instance's I/O as it saw it"
	sourceDatabase = "The database's own timing"
)

// layerKinds are the kinds of operation the layer table shows, in order.
var layerKinds = []string{"read", "write", "fsync", "meta"}

// hasLayer reports whether any step of any profile has latency layer
// figures.
func (v *view) hasLayer() bool {
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			if s.Host != nil && s.Host.Layer != nil {
				return true
			}
		}
	}
	return false
}

// layerTable lists, per target, step and kind of operation, what the
// target's latency layer measured: the I/O as the instance saw it. It is
// empty when no target had a layer.
func (v *view) layerTable() table {
	if !v.hasLayer() {
		return table{}
	}
	t := table{ID: "layer", Title: sourceInstance + " (latency layer)",
		Note: "Every read, write and fsync the server's I/O made through the latency layer oltplab mounts under a managed instance's " +
			"directories, timed from the moment the layer took it to its answer: the delay the tier asks for, what the device below " +
			"took, and the layer's own cost. Reads and writes are what passed the server's page cache (with the writeback cache, writes " +
			"reach the layer when the kernel writes dirty pages back). Delay: the mean delay drawn. Layer's own: the mean beyond the delay " +
			"(the pass-through and the device below), in µs. Averages over the complete repeats of each step, percentiles included; " +
			"targets without a layer have no rows.",
		Header: []string{"Target", "Layer", "VUs", "Operation", "Per second", "Delay (ms)", "Mean (ms)", "p50 (ms)", "p99 (ms)", "p99.9 (ms)", "Layer's own (µs)", "Layer CPU per op (µs)"},
		Right:  []bool{false, false, true, false, true, true, true, true, true, true, true, true}}
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			if s.Host == nil || s.Host.Layer == nil {
				continue
			}
			l := s.Host.Layer
			kinds := slices.Clone(layerKinds)
			for k := range l.Kinds {
				if !slices.Contains(kinds, k) {
					kinds = append(kinds, k)
				}
			}
			for _, k := range kinds {
				f, ok := l.Kinds[k]
				if !ok {
					continue
				}
				delay := "0"
				if f.DelayMeanMillis > 0 {
					delay = formatMillis(f.DelayMeanMillis)
				}
				t.Rows = append(t.Rows, row{Cells: texts(p.Name, l.Settings, strconv.Itoa(s.VUs), k, formatNumber(f.PerSecond), delay,
					formatMillis(f.MeanMillis), formatMillis(f.P50Millis), formatMillis(f.P99Millis), formatMillis(f.P999Millis),
					formatNumber(f.OwnMeanMicros), formatNumber(l.CPUMicrosPerOp))})
			}
		}
	}
	return t
}

// dbTimingTable is the database's own timing: the average waits the
// engine measures itself, per target and step.
func (v *view) dbTimingTable() table {
	t := v.avgWaitTable()
	if len(t.Header) == 0 {
		return t
	}
	t.ID = "db-timing"
	t.Title = sourceDatabase + " (ms per wait)"
	t.Note = "What the database measured itself, averaged over the complete repeats of each step: PostgreSQL's track_io_timing " +
		"(data_block_read: a block read past shared buffers) and WAL I/O timing (wal_sync, wal_write), MariaDB's performance_schema " +
		"file waits and row lock waits, on in managed instances. Each is the whole wait as the server saw it: a latency layer's delay, " +
		"a throttle's queue, and reads the page cache answered are all in it. — where the engine recorded none."
	return t
}

// throttleNote says, for targets whose I/O was capped by a throttle and
// not on a latency layer, that the device's latency leaves out the time
// their I/O waited in the throttle; "" when there are none.
func (v *view) throttleNote() string {
	var names []string
	for _, p := range v.profiles {
		if p.Throttle == "" {
			continue
		}
		layered := slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Host != nil && s.Host.Layer != nil })
		if !layered {
			names = append(names, p.Name+" ("+p.Throttle+")")
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "Throttled: " + strings.Join(names, ", ") + ". The device latency does not include the throttling delay: the cgroup " +
		"I/O throttle holds each I/O before it reaches the device, and the device times it only from then on. What the database " +
		"waited is in its own timing below and in the transactions' latency."
}
