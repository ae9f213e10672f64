package sysstat

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// sampleFixtures runs a HostSampler over two captured trees, dt apart.
func sampleFixtures(t *testing.T, t0, t1 string, dt time.Duration) map[string]float64 {
	t.Helper()
	// The sampler reads through one FS: point it at t0, then swap the
	// root to t1 for the second reading.
	h := NewFS(t0).NewHostSampler()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	first, err := h.Sample(start)
	if err != nil {
		t.Fatalf("first reading: %v", err)
	}
	if len(first) != 0 {
		t.Errorf("first reading: got %d samples, want none", len(first))
	}
	h.fs = NewFS(t1)
	got, err := h.Sample(start.Add(dt))
	if err != nil {
		t.Fatalf("second reading: %v", err)
	}
	m := map[string]float64{}
	for _, s := range got {
		if s.Value < 0 || math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			t.Errorf("%s %s: got %v, want a finite value >= 0", s.Metric, s.Device, s.Value)
		}
		m[s.Metric+"/"+s.Device] = s.Value
	}
	return m
}

// TestHostSamplerRates checks the rates between two snapshots captured
// from a real host (a direct-I/O dd ran between them). The expected values
// are worked out by hand from the files, with dt = 2 s:
//
//	cpu   user +168, system +64, softirq +4, idle and iowait +0: 236 ticks
//	vda   reads +231, read sectors +26456, read ms +27,
//	      writes +1730, write sectors +52664, write ms +317,
//	      io ms +156, weighted io ms +381
//	lo    rx and tx bytes +860645
//	mem   (t1) total 24684092 kB, free 18987268, buffers 15352, cached 4624660, dirty 507600
func TestHostSamplerRates(t *testing.T) {
	got := sampleFixtures(t, "testdata/sampler-t0", "testdata/sampler-t1", 2*time.Second)
	want := map[string]float64{
		"cpu_busy_pct/":             100,
		"cpu_user_pct/":             100 * 168.0 / 236,
		"cpu_system_pct/":           100 * 68.0 / 236,
		"cpu_idle_pct/":             0,
		"cpu_iowait_pct/":           0,
		"cpu_steal_pct/":            0,
		"mem_used_bytes/":           (24684092 - 18987268 - 15352 - 4624660) * 1024,
		"mem_cache_bytes/":          (15352 + 4624660) * 1024,
		"mem_dirty_bytes/":          507600 * 1024,
		"mem_free_bytes/":           18987268 * 1024,
		"disk_read_iops/vda":        231.0 / 2,
		"disk_write_iops/vda":       1730.0 / 2,
		"disk_read_mbps/vda":        26456 * 512 / 2 / 1e6,
		"disk_write_mbps/vda":       52664 * 512 / 2 / 1e6,
		"disk_latency_ms/vda":       (27.0 + 317) / (231 + 1730),
		"disk_read_latency_ms/vda":  27.0 / 231,
		"disk_write_latency_ms/vda": 317.0 / 1730,
		"disk_util_pct/vda":         100 * 156.0 / 2000,
		"disk_queue_depth/vda":      381.0 / 2000,
		"disk_read_iops/zram0":      0,
		"net_rx_bytes_per_s/lo":     860645.0 / 2,
		"net_tx_bytes_per_s/lo":     860645.0 / 2,
		"net_rx_bytes_per_s/eth0":   0,
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: missing", k)
			continue
		}
		if math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
			t.Errorf("%s: got %v, want %v", k, g, w)
		}
	}
	for k := range got {
		if strings.Contains(k, "loop") {
			t.Errorf("%s: loop devices must be skipped", k)
		}
	}
	if _, ok := got["disk_latency_ms/zram0"]; ok {
		t.Errorf("disk_latency_ms/zram0: present for a device that completed no I/O")
	}
}

// TestHostSamplerWrapAndReset makes vda's 32-bit write-ms counter wrap and
// eth0's counters reset (the interface re-created) between the readings:
// those series are left out of the interval, nothing goes negative, and
// the other series are still there.
func TestHostSamplerWrapAndReset(t *testing.T) {
	t1 := t.TempDir()
	copyTree(t, "testdata/sampler-t1", t1)
	edit(t, filepath.Join(t1, "proc", "diskstats"),
		"vda 641279 51067 21082810 724105 3162971 387872 305062304 4519562",
		"vda 641279 51067 21082810 724105 3162971 387872 305062304 1200")
	edit(t, filepath.Join(t1, "proc", "net", "dev"),
		"eth0: 297684137   10405", "eth0:      1000       3")
	got := sampleFixtures(t, "testdata/sampler-t0", t1, time.Second)
	for _, k := range []string{"disk_write_iops/vda", "disk_latency_ms/vda", "disk_util_pct/vda",
		"net_rx_bytes_per_s/eth0", "net_tx_bytes_per_s/eth0"} {
		if v, ok := got[k]; ok {
			t.Errorf("%s: got %v, want no sample for the interval", k, v)
		}
	}
	for _, k := range []string{"cpu_busy_pct/", "net_rx_bytes_per_s/lo", "disk_read_iops/zram0", "mem_used_bytes/"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: missing", k)
		}
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s: %q not found", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDeviceRolesOfLiveDirs(t *testing.T) {
	dir := t.TempDir()
	roles, err := live.DeviceRoles(map[string]string{"data": dir, "missing": filepath.Join(dir, "nope")})
	if err == nil || !strings.Contains(err.Error(), "missing directory") {
		t.Errorf("got error %v, want one naming the missing directory", err)
	}
	for dev, rs := range roles {
		if len(rs) != 1 || rs[0] != "data" {
			t.Errorf("device %s: got roles %v, want [data]", dev, rs)
		}
	}
}

func TestThreadCPUTimeAdvances(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a, ok := ThreadCPUTime()
	if !ok {
		t.Skip("no per-thread CPU time on this system")
	}
	// Burn enough CPU on this thread to pass the kernel's accounting granularity.
	x := 0
	for b, _ := ThreadCPUTime(); b == a; b, _ = ThreadCPUTime() {
		for i := 0; i < 1e6; i++ {
			x += i
		}
	}
	_ = x
	if b, _ := ThreadCPUTime(); b <= a {
		t.Errorf("thread CPU time: got %v after work, want more than %v", b, a)
	}
}
