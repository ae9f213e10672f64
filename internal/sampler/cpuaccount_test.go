package sampler

import (
	"context"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// TestSummarizeCPUUse: who used the CPU is averaged over the window's
// host intervals alone; the foreign CPU is floored at 0 and given in
// percent of the cores, on the host and on the server's own CPUs; the
// server's share is absent when it was not sampled.
func TestSummarizeCPUUse(t *testing.T) {
	host := func(ms int64, metric, device string, v float64) store.Sample {
		return store.Sample{TMillis: ms, Source: store.SourceHost, Metric: metric, Device: device, Value: v}
	}
	var samples []store.Sample
	for _, ms := range []int64{0, 1000, 2000, 3000} {
		foreign := 0.5
		if ms == 0 {
			foreign = 1.9 // before the window
		}
		samples = append(samples,
			host(ms, MetricHostCores, "", 2), host(ms, MetricUsedCores, "", 1.5), host(ms, MetricOltplabCores, "", 0.2),
			host(ms, MetricServerCores, "", 0.8), host(ms, MetricForeignCores, "", foreign), host(ms, sysstat.MetricCPUStealPct, "", 5),
			host(ms, MetricCPUSetCores, "0", 1), host(ms, MetricCPUSetUsedCores, "0", 0.9), host(ms, MetricCPUSetForeignCores, "0", -0.1+float64(ms)/10000))
	}
	u := summarizeCPUUse(samples, 0, 3000)
	if u == nil {
		t.Fatal("no CPU account")
	}
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	if !near(u.HostCores, 2) || !near(u.UsedCores, 1.5) || !near(u.OltplabCores, 0.2) || u.ServerCores == nil || !near(*u.ServerCores, 0.8) ||
		!near(u.StealPct, 5) || !near(u.StealCores, 0.1) {
		t.Errorf("account %+v", u)
	}
	if u.ForeignCores == nil || !near(*u.ForeignCores, 0.5) || u.ForeignPct == nil || !near(*u.ForeignPct, 25) {
		t.Errorf("foreign %v cores, %v%%: want 0.5 and 25 (the interval before the window left out)", u.ForeignCores, u.ForeignPct)
	}
	// On CPU 0, in the window: 0, 0.1 and 0.2 cores, 0.1 on average (10%).
	if u.CPUSet != "0" || !near(u.CPUSetCores, 1) || u.CPUSetForeignPct == nil || !near(*u.CPUSetForeignPct, 10) {
		t.Errorf("cpuset %q, %g cores, foreign %+v; want 0, 1, 10%%", u.CPUSet, u.CPUSetCores, u.CPUSetForeignPct)
	}

	// A window where the foreign CPU came out below zero is floored at 0;
	// one without the server's CPU has neither its share nor the foreign.
	neg := []store.Sample{host(1000, MetricHostCores, "", 2), host(1000, MetricUsedCores, "", 1), host(1000, MetricForeignCores, "", -0.05)}
	if u := summarizeCPUUse(neg, 0, 1000); u == nil || u.ForeignCores == nil || *u.ForeignCores != 0 {
		t.Errorf("a slightly negative foreign CPU: %+v, want 0", u)
	}
	bare := []store.Sample{host(1000, MetricHostCores, "", 2), host(1000, MetricUsedCores, "", 1)}
	if u := summarizeCPUUse(bare, 0, 1000); u == nil || u.ServerCores != nil || u.ForeignCores != nil || u.ForeignPct != nil {
		t.Errorf("no server CPU sampled: %+v, want neither the server's share nor the foreign", u)
	}
	if u := summarizeCPUUse(nil, 0, 1000); u != nil {
		t.Errorf("nothing sampled: %+v, want nil", u)
	}
	if got := cpuList([]int{0, 1, 2, 5, 7, 8}); got != "0-2,5,7-8" {
		t.Errorf("cpuList = %q", got)
	}
}

// TestSamplerCPUAccount: sampling this host with the server's CPU read
// by a probe (here a counter that grows by a known amount per reading)
// records who used the CPU each interval, on the host and on CPU 0.
func TestSamplerCPUAccount(t *testing.T) {
	var server float64
	probe := func() (float64, error) { server += 0.01; return server, nil }
	s := Start(context.Background(), Options{Interval: 50 * time.Millisecond, ServerCPU: probe, CPUs: []int{0}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(50 * time.Millisecond)
		s.mu.Lock()
		n := len(s.samples)
		s.mu.Unlock()
		if n > 100 || time.Now().After(deadline) {
			break
		}
	}
	r := s.Stop()
	seen := map[string]bool{}
	for _, x := range r.Samples {
		seen[x.Metric] = true
	}
	for _, m := range []string{MetricHostCores, MetricUsedCores, MetricOltplabCores, MetricServerCores, MetricForeignCores,
		MetricCPUSetCores, MetricCPUSetUsedCores, MetricCPUSetForeignCores} {
		if !seen[m] {
			t.Errorf("metric %s missing (warnings %v)", m, r.Warnings)
		}
	}
	u := summarizeCPUUse(r.Samples, -1, 1<<40)
	if u == nil || u.HostCores < 1 || u.ServerCores == nil || *u.ServerCores <= 0 || u.CPUSet != "0" || u.CPUSetCores != 1 {
		t.Errorf("account %+v: want the host's cores, the probe's CPU and CPU 0", u)
	}
}

// TestSamplerCountsHelpersAsOltplab: the CPU time of oltplab's helper
// process (Options.Helpers; here a probe of a helper that uses one core:
// its CPU time is the wall time since it started, whatever the intervals)
// is counted as oltplab's, not as foreign: before, a latency layer's CPU
// made a managed instance's runs contaminated.
func TestSamplerCountsHelpersAsOltplab(t *testing.T) {
	var server float64
	start := time.Now()
	s := Start(context.Background(), Options{Interval: 50 * time.Millisecond,
		ServerCPU: func() (float64, error) { server += 0.001; return server, nil },
		Helpers:   func() (float64, error) { return time.Since(start).Seconds(), nil }})
	time.Sleep(time.Second)
	r := s.Stop()
	u := summarizeCPUUse(r.Samples, -1, 1<<40)
	if u == nil {
		t.Fatalf("no CPU account (warnings %v)", r.Warnings)
	}
	// A core, less what falls between the probe's reading and /proc/stat's
	// in each interval: half a core is the bound asserted. This process
	// alone uses far less.
	if u.OltplabCores < 0.5 {
		t.Errorf("oltplab's cores %.2f: the helper's CPU (about a core) is not counted with oltplab's", u.OltplabCores)
	}
	if u.OltplabCores > u.HostCores+1 {
		t.Errorf("oltplab's cores %.2f on %v cores", u.OltplabCores, u.HostCores)
	}
}
