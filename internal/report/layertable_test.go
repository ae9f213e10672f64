package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestDeviceSources: the device part names each source of I/O latency;
// targets on a latency layer get rows of what the instance saw through it
// (the baseline with zero delays among them), the database's own timing
// is shown beside them, and a throttled target without a layer is said to
// have a device latency that leaves out the throttle's delay (and only
// it).
func TestDeviceSources(t *testing.T) {
	host := func(layer *LayerFigures) *HostFigures {
		return &HostFigures{CPUBusyPct: 50, DataDevice: "vda", DiskIOPS: 900, DiskLatencyMillis: 0.4, DiskLatencyP99Millis: 0.9,
			AvgWaitMillis: map[string]float64{"wal_sync": 5.6, "data_block_read": 5.2}, Layer: layer}
	}
	prof := func(id int64, name, throttle string, layer *LayerFigures) Profile {
		return Profile{ID: id, Label: name, Target: name, Dialect: "postgres", Throttle: throttle,
			Steps: []Step{{VUs: 4, Repeats: []Repeat{{RunID: id, NOPM: 1000, TPM: 2300}}, Host: host(layer)}}}
	}
	base := &LayerFigures{Settings: "0", CPUMicrosPerOp: 48, Kinds: map[string]LayerKindFigures{
		"read":  {PerSecond: 800, MeanMillis: 0.15, P50Millis: 0.12, P99Millis: 0.6, P999Millis: 1.4, OwnMeanMicros: 150},
		"fsync": {PerSecond: 120, MeanMillis: 0.9, P50Millis: 0.8, P99Millis: 2.1, P999Millis: 3.3, OwnMeanMicros: 900}}}
	slow := &LayerFigures{Settings: "read=5ms,write=5ms,fsync=5ms", CPUMicrosPerOp: 51, Kinds: map[string]LayerKindFigures{
		"read":  {PerSecond: 160, MeanMillis: 5.2, P50Millis: 5.1, P99Millis: 6.4, P999Millis: 9.8, DelayMeanMillis: 5, OwnMeanMicros: 200},
		"fsync": {PerSecond: 90, MeanMillis: 6.1, P50Millis: 5.9, P99Millis: 8.2, P999Millis: 12.5, DelayMeanMillis: 5, OwnMeanMicros: 1100}}}
	in := Input{Experiment: &Experiment{ID: 1, Name: "tiers", Status: "ok", Baseline: "base",
		Targets: []ExperimentTarget{{Name: "base"}, {Name: "5ms"}, {Name: "capped"}, {Name: "capped-layer"}},
		Sections: []Section{{Title: "Step 1: profile", Kind: "profile", Profiles: []Profile{
			prof(1, "base", "", base), prof(2, "5ms", "", slow), prof(3, "capped", "write 120 IOPS", nil), prof(4, "capped-layer", "write 120 IOPS", base),
		}}}}}
	var buf bytes.Buffer
	if err := Markdown(&buf, in); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		sourceDevice, sourceInstance + " (latency layer)", sourceDatabase + " (ms per wait)",
		"| base | 0 | 4 | read | 800 | 0 | 0.15 | 0.12 | 0.60 | 1.40 | 150 | 48.0 |",
		"| 5ms | read=5ms,write=5ms,fsync=5ms | 4 | fsync | 90.0 | 5.00 | 6.10 | 5.90 | 8.20 | 12.5 | 1,100 | 51.0 |",
		"Throttled: capped (write 120 IOPS). The device latency does not include the throttling delay",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(md, "capped-layer (write") {
		t.Errorf("a throttled target on a layer is named among those whose device latency leaves out the throttle")
	}
}
