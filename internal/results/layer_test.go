package results

import (
	"testing"

	"github.com/oltplab/oltplab/internal/summary"
)

// TestLayerFigures: a step's latency layer figures average its repeats'
// (a kind one repeat did not see counts as none per second there, and its
// latencies are the others'); no layer in any repeat is no figures.
func TestLayerFigures(t *testing.T) {
	mon := func(seconds float64, kinds map[string]summary.LayerKind) *summary.Monitor {
		m := &summary.Monitor{}
		m.Seconds = int(seconds)
		m.LatencyLayer = &summary.LatencyLayer{Settings: summary.LayerSettings{Text: "read=5ms"},
			LayerWindow: summary.LayerWindow{Seconds: seconds, All: kinds, CPUMicrosPerOp: 40}}
		return m
	}
	ms := []*summary.Monitor{
		mon(10, map[string]summary.LayerKind{"read": {Count: 1000, P50Millis: 5, P99Millis: 7, DelayMeanMillis: 5}, "fsync": {Count: 50, P99Millis: 2}}),
		mon(20, map[string]summary.LayerKind{"read": {Count: 4000, P50Millis: 5.5, P99Millis: 9, DelayMeanMillis: 5}}),
		{},
	}
	ms[2].Seconds = 10 // sampled, without a layer
	h := hostFigures(ms)
	if h == nil || h.Layer == nil {
		t.Fatalf("no layer figures: %+v", h)
	}
	l := h.Layer
	read, fsync := l.Kinds["read"], l.Kinds["fsync"]
	if l.Settings != "read=5ms" || read.PerSecond != 150 || read.P50Millis != 5.25 || read.P99Millis != 8 || read.DelayMeanMillis != 5 {
		t.Errorf("reads: got %+v (settings %q), want 150/s, p50 5.25, p99 8, delay 5", read, l.Settings)
	}
	if fsync.PerSecond != 2.5 || fsync.P99Millis != 2 {
		t.Errorf("fsyncs: got %+v, want 2.5/s (5/s in one of two repeats), p99 2", fsync)
	}
	if h := hostFigures([]*summary.Monitor{ms[2]}); h == nil || h.Layer != nil {
		t.Errorf("without a layer: got %+v, want host figures without layer figures", h)
	}
}
