package sampler

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/store"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSummarize(t *testing.T) {
	h, d := store.SourceHost, store.SourceDB
	var in []store.Sample
	add := func(ms int64, src store.Source, metric, dev string, v float64) {
		in = append(in, store.Sample{TMillis: ms, Source: src, Metric: metric, Device: dev, Value: v})
	}
	add(0, h, "disk_role_data", "vda", 1)
	// Second 1 is before the window and must not count.
	add(1000, h, "cpu_busy_pct", "", 99)
	add(1000, h, "disk_latency_ms", "vda", 1000)
	lat := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 50} // seconds 2..11
	for i, l := range lat {
		ms := int64(2000 + 1000*i)
		add(ms, h, "cpu_busy_pct", "", float64(10*(i%2)+20)) // 20, 30, ...: mean 25
		add(ms, h, "cpu_iowait_pct", "", 5)
		add(ms, h, "disk_read_iops", "vda", 100)
		add(ms, h, "disk_write_iops", "vda", float64(200+i))
		add(ms, h, "disk_latency_ms", "vda", l)
		add(ms, h, "sampler_cpu_pct", "", 0.2)
		add(ms, d, "db_wait_samples", "", 5)
		add(ms, d, "db_active_sessions", "cpu", 3)
		add(ms, d, "db_active_sessions", "lock", 1)
		add(ms, d, "db_idle_sessions", "", 2)
		add(ms, d, "db_wait_event_sessions", "Lock:transactionid", 1)
	}
	// Two intervals of row lock waits: 1 wait of 10 ms, then 3 of 2 ms:
	// the weighted average is (10 + 6) / 4 = 4 ms, not (10 + 2) / 2.
	add(3000, d, "db_avg_wait_ms", "row_lock_wait", 10)
	add(3000, d, "db_wait_events_per_s", "row_lock_wait", 1)
	add(4000, d, "db_avg_wait_ms", "row_lock_wait", 2)
	add(4000, d, "db_wait_events_per_s", "row_lock_wait", 3)

	got := Summarize(in, time.Second, 11*time.Second)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"seconds", float64(got.Seconds), 10},
		{"cpu busy", got.CPU.BusyPct, 25},
		{"cpu iowait", got.CPU.IOWaitPct, 5},
		{"sampler cpu", got.SamplerCPUPct, 0.2},
		{"avg active sessions", got.AvgActiveSessions, 4},
		{"avg idle sessions", got.AvgIdleSessions, 2},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(got.Devices) != 1 {
		t.Fatalf("devices: got %+v, want vda only", got.Devices)
	}
	v := got.Devices[0]
	if v.Device != "vda" || len(v.Roles) != 1 || v.Roles[0] != "data" {
		t.Errorf("device: got %s roles %v, want vda [data]", v.Device, v.Roles)
	}
	if !near(v.LatencyMillis, 9.5) || !near(v.LatencyP99Millis, 50) || !near(v.WriteIOPS, 204.5) {
		t.Errorf("vda: got latency %v p99 %v write IOPS %v, want 9.5, 50, 204.5",
			v.LatencyMillis, v.LatencyP99Millis, v.WriteIOPS)
	}
	if len(got.Waits) != 2 || got.Waits[0].Name != "cpu" || !near(got.Waits[0].SharePct, 75) ||
		got.Waits[1].Name != "lock" || !near(got.Waits[1].SharePct, 25) {
		t.Errorf("waits: got %+v, want cpu 75%%, lock 25%%", got.Waits)
	}
	if len(got.TopEvents) != 1 || !near(got.TopEvents[0].SharePct, 25) {
		t.Errorf("top events: got %+v, want Lock:transactionid 25%%", got.TopEvents)
	}
	if len(got.AvgWaits) != 1 || !near(got.AvgWaits[0].AvgMillis, 4) {
		t.Errorf("avg waits: got %+v, want row_lock_wait 4 ms", got.AvgWaits)
	}
}

func TestPercentile(t *testing.T) {
	cases := []struct {
		name string
		in   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 99, 0},
		{"one", []float64{7}, 99, 7},
		{"hundred p99", seq(100), 99, 99},
		{"ten p99 is the max", seq(10), 99, 10},
		{"ten p50", seq(10), 50, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := percentile(c.in, c.p); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}

// TestSamplerLiveHost samples this host for a few short intervals.
func TestSamplerLiveHost(t *testing.T) {
	s := Start(context.Background(), Options{Interval: 50 * time.Millisecond, Dirs: map[string]string{"data": t.TempDir()}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(50 * time.Millisecond)
		s.mu.Lock()
		n := len(s.samples)
		s.mu.Unlock()
		if n > 50 || time.Now().After(deadline) {
			break
		}
	}
	r := s.Stop()
	seen := map[string]bool{}
	last := int64(math.MinInt64)
	for _, x := range r.Samples {
		seen[x.Metric] = true
		if x.Value < 0 || math.IsNaN(x.Value) {
			t.Errorf("%s %s: got %v, want >= 0", x.Metric, x.Device, x.Value)
		}
		if x.TMillis < last {
			t.Errorf("samples out of time order at %s", x.Metric)
		}
		last = x.TMillis
	}
	for _, m := range []string{"cpu_busy_pct", "mem_used_bytes", "net_rx_bytes_per_s", "sampler_cpu_pct"} {
		if !seen[m] {
			t.Errorf("metric %s missing (warnings %v)", m, r.Warnings)
		}
	}
	if r.WallSeconds <= 0 || r.SamplerCPUSeconds < 0 {
		t.Errorf("got wall %v s, CPU %v s", r.WallSeconds, r.SamplerCPUSeconds)
	}
}

func TestOwnRates(t *testing.T) {
	at := time.Unix(100, 0)
	prev := map[string]IOCount{"254:0": {ReadIOs: 10, WriteIOs: 100, ReadBytes: 4096, WriteBytes: 8e6}, "8:0": {WriteIOs: 50}}
	cur := map[string]IOCount{"254:0": {ReadIOs: 30, WriteIOs: 340, ReadBytes: 4096 + 2e6, WriteBytes: 8e6 + 4e6},
		"8:0":  {WriteIOs: 40}, // went back (a restart): no sample
		"8:16": {WriteIOs: 5},  // new: no earlier reading
	}
	got := map[string]float64{}
	for _, x := range ownRates(at, prev, cur, 2*time.Second) {
		if x.s.Device != "254:0" || !x.at.Equal(at) || x.s.Source != store.SourceHost {
			t.Errorf("unexpected sample %+v", x)
		}
		got[x.s.Metric] = x.s.Value
	}
	want := map[string]float64{"own_read_iops": 10, "own_write_iops": 120, "own_read_mbps": 1, "own_write_mbps": 2}
	for k, v := range want {
		if !near(got[k], v) {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want only %v", got, want)
	}
	if ownRates(at, prev, cur, 0) != nil {
		t.Errorf("rates over no time, want none")
	}
}

func TestSummarizeOwnIO(t *testing.T) {
	var in []store.Sample
	for i, w := range []float64{100, 120, 140} {
		ms := int64(1000 * (i + 1))
		in = append(in,
			store.Sample{TMillis: ms, Source: store.SourceHost, Metric: "own_write_iops", Device: "254:0", Value: w},
			store.Sample{TMillis: ms, Source: store.SourceHost, Metric: "own_write_iops", Device: "8:0", Value: 10},
			store.Sample{TMillis: ms, Source: store.SourceHost, Metric: "own_read_mbps", Device: "254:0", Value: 1.5})
	}
	got := Summarize(in, 0, 3*time.Second).OwnIO
	if got == nil || !near(got.WriteIOPS, 130) || !near(got.ReadMBps, 1.5) || got.ReadIOPS != 0 {
		t.Errorf("own I/O: got %+v, want 120 + 10 write IOPS and 1.5 read MB/s", got)
	}
	if Summarize(in[:0], 0, time.Second).OwnIO != nil {
		t.Errorf("own I/O without samples: want nil")
	}
}

// TestSamplerReadsOwnIO: the probe is read every interval and its rates
// are samples; a failing probe is a warning, not a failure.
func TestSamplerReadsOwnIO(t *testing.T) {
	var n uint64
	third := make(chan struct{})
	probe := func() (map[string]IOCount, error) { // called by the sampler's goroutine only
		n += 7
		if n == 21 {
			close(third)
		}
		return map[string]IOCount{"254:0": {WriteIOs: n}}, nil
	}
	s := Start(context.Background(), Options{Interval: 20 * time.Millisecond, OwnIO: probe})
	<-third // the first reading and two intervals
	r := s.Stop()
	writes := 0
	for _, x := range r.Samples {
		if x.Metric == "own_write_iops" && x.Device == "254:0" && x.Value > 0 {
			writes++
		}
	}
	if writes < 2 {
		t.Errorf("got %d own_write_iops samples, want at least 2 (of %d samples)", writes, len(r.Samples))
	}
	called := make(chan struct{})
	bad := Start(context.Background(), Options{Interval: 20 * time.Millisecond,
		OwnIO: func() (map[string]IOCount, error) { close(called); return nil, errors.New("no cgroup") }})
	<-called
	if r := bad.Stop(); len(r.Warnings) == 0 {
		t.Errorf("a failing probe left no warning")
	}
}
