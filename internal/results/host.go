package results

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// hostFigures averages the monitor summaries of a step's complete repeats
// into the report's per-step host figures; nil when none was sampled.
func hostFigures(ms []*summary.Monitor) *report.HostFigures {
	var n, own float64
	h := &report.HostFigures{WaitSharePct: map[string]float64{}, AvgWaitMillis: map[string]float64{}}
	for _, m := range ms {
		if m == nil || m.Seconds == 0 {
			continue
		}
		n++
		// The database's host: measured here, by its agent, or not at all
		// (then the figures are the load generator's).
		hs := &m.StepSummary
		localNoDevice := m.Dirs["data"] != "" // the data directory is local: no busiest-device guess
		switch {
		case m.DatabaseHost != nil:
			hs, h.Agent, h.DatabaseHost = m.DatabaseHost, m.Agent, m.DatabaseAddress
			localNoDevice = false
		case m.HostRole != "" && !m.DatabaseHostMeasured:
			h.LoadGeneratorOnly, h.DatabaseHost = true, m.DatabaseAddress
		}
		h.CPUBusyPct += hs.CPU.BusyPct
		h.CPUIdlePct += hs.CPU.IdlePct
		h.CPUIOWaitPct += hs.CPU.IOWaitPct
		if d := dataDevice(hs.Devices, localNoDevice); d != nil {
			h.DataDevice = d.Device
			h.DiskIOPS += d.ReadIOPS + d.WriteIOPS
			h.DiskReadIOPS += d.ReadIOPS
			h.DiskWriteIOPS += d.WriteIOPS
			h.DiskMBps += d.ReadMBps + d.WriteMBps
			h.DiskReadMBps += d.ReadMBps
			h.DiskWriteMBps += d.WriteMBps
			h.DiskLatencyMillis += d.LatencyMillis
			h.DiskLatencyP99Millis += d.LatencyP99Millis
		}
		if m.OwnIO != nil {
			own++
			h.OwnReadIOPS += m.OwnIO.ReadIOPS
			h.OwnWriteIOPS += m.OwnIO.WriteIOPS
		}
		for _, w := range m.Waits {
			h.WaitSharePct[w.Name] += w.SharePct
		}
		for _, w := range m.AvgWaits {
			h.AvgWaitMillis[w.Label] += w.AvgMillis
		}
	}
	if n == 0 {
		return nil
	}
	h.Layer = layerFigures(ms)
	h.CPUBusyPct /= n
	h.CPUIdlePct /= n
	h.CPUIOWaitPct /= n
	h.DiskIOPS /= n
	h.DiskReadIOPS /= n
	h.DiskWriteIOPS /= n
	h.DiskMBps /= n
	h.DiskReadMBps /= n
	h.DiskWriteMBps /= n
	h.DiskLatencyMillis /= n
	h.DiskLatencyP99Millis /= n
	if own > 0 {
		h.OwnIO = true
		h.OwnReadIOPS /= own
		h.OwnWriteIOPS /= own
	}
	for k := range h.WaitSharePct {
		h.WaitSharePct[k] /= n
	}
	for k := range h.AvgWaitMillis {
		h.AvgWaitMillis[k] /= n
	}
	return h
}

// dataDevice is the device under the database's data directory, or the
// busiest one when that is unknown (a remote server); nil when the data
// directory is local but on no block device (tmpfs, localDataDir): then
// no device's I/O is the database's.
func dataDevice(ds []sampler.DeviceSummary, localDataDir bool) *sampler.DeviceSummary {
	var best *sampler.DeviceSummary
	for i := range ds {
		d := &ds[i]
		for _, r := range d.Roles {
			if r == "data" {
				return d
			}
		}
		if best == nil || d.ReadIOPS+d.WriteIOPS > best.ReadIOPS+best.WriteIOPS {
			best = d
		}
	}
	if localDataDir {
		return nil
	}
	return best
}

// stepSeries reads the per-second series of one run: the workload's own
// figures with the CPU and data-device figures of host (store.SourceHost,
// or store.SourceDBHost for the database host's agent) on the same axis.
func stepSeries(ctx context.Context, st *store.Store, runID int64, vus int, dev string, host store.Source) (*report.StepSeries, error) {
	samples, err := st.Samples(ctx, runID, store.SampleFilter{})
	if err != nil {
		return nil, storeErr(fmt.Sprintf("read the samples of run %d", runID), err)
	}
	// The driver's seconds end on (about) whole seconds of the window; the
	// host's intervals end wherever the sampler's ticker fired. A sample
	// belongs to the whole second nearest to the end of its interval.
	byT := map[int64]*report.SeriesPoint{}
	point := func(tMillis int64) *report.SeriesPoint {
		sec := (tMillis + 500) / 1000
		p := byT[sec]
		if p == nil {
			p = &report.SeriesPoint{TSeconds: float64(sec)}
			byT[sec] = p
		}
		return p
	}
	for _, s := range samples {
		if s.TMillis <= 0 {
			continue // before the measured window
		}
		switch {
		case s.Source == store.SourceWorkload && s.Metric == summary.MetricTPM:
			point(s.TMillis).TPM = s.Value
		case s.Source == store.SourceWorkload && s.Metric == summary.MetricNOPM:
			point(s.TMillis).NOPM = s.Value
		case s.Source == store.SourceWorkload && s.Metric == summary.MetricP99Millis:
			point(s.TMillis).P99Millis = s.Value
		case s.Source == host && s.Metric == sysstat.MetricCPUBusyPct:
			point(s.TMillis).CPUBusyPct = s.Value
		case s.Source == host && s.Metric == sysstat.MetricCPUIOWaitPct:
			point(s.TMillis).CPUIOWaitPct = s.Value
		case s.Source == host && s.Device == dev && s.Metric == sysstat.MetricDiskReadIOPS:
			point(s.TMillis).DiskIOPS += s.Value
		case s.Source == host && s.Device == dev && s.Metric == sysstat.MetricDiskWriteIOPS:
			point(s.TMillis).DiskIOPS += s.Value
		case s.Source == host && s.Device == dev && s.Metric == sysstat.MetricDiskLatencyMillis:
			point(s.TMillis).DiskLatencyMillis = s.Value
		}
	}
	if len(byT) == 0 {
		return nil, nil
	}
	out := &report.StepSeries{VUs: vus, RunID: runID}
	for _, p := range byT {
		out.Points = append(out.Points, *p)
	}
	sort.Slice(out.Points, func(i, j int) bool { return out.Points[i].TSeconds < out.Points[j].TSeconds })
	if out.Faults, err = faultSpans(ctx, st, runID); err != nil {
		return nil, err
	}
	return out, nil
}

// faultSpans are the outages and stalls of a run, in seconds from the
// start of its measured window, for the per-second charts to shade.
func faultSpans(ctx context.Context, st *store.Store, runID int64) ([]report.Span, error) {
	r, err := st.GetRun(ctx, runID)
	if err != nil {
		return nil, storeErr(fmt.Sprintf("read run %d", runID), err)
	}
	if r.Kind != store.KindRun || len(r.Summary) == 0 {
		return nil, nil
	}
	s, err := summary.DecodeRun(r.Summary)
	if err != nil || s.Result == nil || s.Window.Start.IsZero() {
		return nil, nil // its series is drawn without them
	}
	ws := s.Window.Start
	var out []report.Span
	for i, o := range s.Outages {
		end := o.End
		if o.Ongoing || end.IsZero() {
			end = o.Start.Add(time.Duration(o.Seconds * float64(time.Second)))
		}
		out = append(out, report.Span{Label: fmt.Sprintf("outage %d", i+1), From: o.Start.Sub(ws).Seconds(), To: end.Sub(ws).Seconds(), Kind: report.SpanFault})
	}
	for i, x := range s.Stalls {
		out = append(out, report.Span{Label: fmt.Sprintf("stall %d", i+1), From: x.Start.Sub(ws).Seconds(), To: x.End.Sub(ws).Seconds(), Kind: report.SpanFault})
	}
	return out, nil
}

// seriesSource is the source of the host series behind h: the database
// host's agent when it measured, else this machine.
func seriesSource(h *report.HostFigures) store.Source {
	if h != nil && h.Agent != "" {
		return store.SourceDBHost
	}
	return store.SourceHost
}

// layerFigures averages the latency layer's figures over the monitors
// that have them; nil when none has.
func layerFigures(ms []*summary.Monitor) *report.LayerFigures {
	var n float64
	out := &report.LayerFigures{Kinds: map[string]report.LayerKindFigures{}}
	seen := map[string]float64{}
	for _, m := range ms {
		if m == nil || m.LatencyLayer == nil || m.LatencyLayer.Seconds <= 0 {
			continue
		}
		l := m.LatencyLayer
		n++
		out.Settings = l.Settings.Text
		out.CPUMicrosPerOp += l.CPUMicrosPerOp
		for k, f := range l.All {
			if f.Count == 0 {
				continue
			}
			seen[k]++
			a := out.Kinds[k]
			a.PerSecond += float64(f.Count) / l.Seconds
			a.MeanMillis += f.MeanMillis
			a.P50Millis += f.P50Millis
			a.P99Millis += f.P99Millis
			a.P999Millis += f.P999Millis
			a.DelayMeanMillis += f.DelayMeanMillis
			a.OwnMeanMicros += f.OwnMeanMicros
			out.Kinds[k] = a
		}
	}
	if n == 0 {
		return nil
	}
	out.CPUMicrosPerOp /= n
	for k, a := range out.Kinds {
		c := seen[k]
		// A repeat without an operation of the kind did none per second.
		a.PerSecond /= n
		a.MeanMillis /= c
		a.P50Millis /= c
		a.P99Millis /= c
		a.P999Millis /= c
		a.DelayMeanMillis /= c
		a.OwnMeanMicros /= c
		out.Kinds[k] = a
	}
	return out
}

// cpuShares averages who used the CPU over the windows of ms; nil when
// none was sampled.
func cpuShares(ms []*summary.Monitor) *report.CPUShares {
	var out report.CPUShares
	var server, foreign, setForeign float64
	var nServer, nForeign, nSet int
	for _, m := range ms {
		u := m.CPUUse
		if u == nil || u.HostCores <= 0 {
			continue
		}
		out.Runs++
		out.HostCores += u.HostCores
		out.OltplabCores += u.OltplabCores
		out.StealCores += u.StealCores
		out.IdleCores += max(0, u.HostCores-u.UsedCores-u.StealCores)
		if u.ServerCores != nil {
			server += *u.ServerCores
			nServer++
		}
		if u.ForeignCores != nil {
			foreign += *u.ForeignCores
			nForeign++
		}
		if u.CPUSetForeignPct != nil {
			setForeign += *u.CPUSetForeignPct
			nSet++
			out.CPUSet = u.CPUSet
		}
		if out.ServerSource == "" {
			out.ServerSource = u.ServerSource
		}
	}
	if out.Runs == 0 {
		return nil
	}
	n := float64(out.Runs)
	out.HostCores /= n
	out.OltplabCores /= n
	out.StealCores /= n
	out.IdleCores /= n
	// A share measured in only some windows would not add up with the
	// others: it is given only when every window has it.
	if nServer == out.Runs {
		v := server / n
		out.ServerCores = &v
	}
	if nForeign == out.Runs {
		v := foreign / n
		out.ForeignCores = &v
	}
	if nSet == out.Runs {
		v := setForeign / n
		out.CPUSetForeignPct = &v
	}
	return &out
}
