package sysstat

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestRate(t *testing.T) {
	cases := []struct {
		name      string
		prev, cur uint64
		dt        time.Duration
		want      float64
		wantOK    bool
	}{
		{"steady", 1000, 3000, 2 * time.Second, 1000, true},
		{"no change", 5, 5, time.Second, 0, true},
		{"sub-second interval", 0, 50, 500 * time.Millisecond, 100, true},
		{"32-bit wrap is skipped", math.MaxUint32 - 10, 20, time.Second, 0, false},
		{"reset is skipped", 1 << 40, 100, time.Second, 0, false},
		{"zero interval is skipped", 1, 2, 0, 0, false},
		{"negative interval is skipped", 1, 2, -time.Second, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Rate(c.prev, c.cur, c.dt)
			if ok != c.wantOK || got != c.want {
				t.Errorf("got %v, %v; want %v, %v", got, ok, c.want, c.wantOK)
			}
			if got < 0 {
				t.Errorf("negative rate %v", got)
			}
		})
	}
}

func TestCPUUsageBetween(t *testing.T) {
	prev := CPUTimes{User: 100, Nice: 0, System: 50, Idle: 800, IOWait: 40, IRQ: 0, SoftIRQ: 10, Steal: 0}
	cases := []struct {
		name   string
		cur    CPUTimes
		want   CPUUsage
		wantOK bool
	}{
		{"busy interval", CPUTimes{User: 160, System: 70, Idle: 810, IOWait: 50, SoftIRQ: 10},
			CPUUsage{User: 60, System: 20, Idle: 10, IOWait: 10}, true},
		// Documentation/filesystems/proc.rst: iowait may decrease.
		{"iowait went backwards: counted as 0", CPUTimes{User: 150, System: 50, Idle: 850, IOWait: 39, SoftIRQ: 10},
			CPUUsage{User: 50, Idle: 50}, true},
		{"no time passed", prev, CPUUsage{}, false},
		{"total went down: reset", CPUTimes{User: 1, Idle: 2}, CPUUsage{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := CPUUsageBetween(prev, c.cur)
			if ok != c.wantOK || got != c.want {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, c.want, c.wantOK)
			}
			if ok {
				sum := got.User + got.Nice + got.System + got.Idle + got.IOWait + got.IRQ + got.SoftIRQ + got.Steal
				if math.Abs(sum-100) > 1e-9 {
					t.Errorf("percentages sum to %v, want 100", sum)
				}
			}
		})
	}
	busy, _ := CPUUsageBetween(prev, cases[0].cur)
	if got, want := busy.BusyPct(), 80.0; got != want {
		t.Errorf("busy: got %v%%, want %v%%", got, want)
	}
}

func TestCPUUsageFromFixture(t *testing.T) {
	s, err := ParseStat(openFixture(t, "proc", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	// Since boot: cpu0 vs zero.
	u, ok := CPUUsageBetween(CPUTimes{}, s.PerCPU[0])
	if !ok {
		t.Fatal("not ok")
	}
	if got, want := u.User, 100*19376.0/158960.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("cpu0 user since boot: got %v%%, want %v%%", got, want)
	}
}

func TestDiskRatesBetween(t *testing.T) {
	prev := DiskStats{Major: 259, Name: "nvme0n1", Reads: 1000, ReadSectors: 8000, ReadMillis: 500,
		Writes: 2000, WriteSectors: 32000, WriteMillis: 4000, IOMillis: 10000, WeightedIOMillis: 20000}
	cur := DiskStats{Major: 259, Name: "nvme0n1", Reads: 3000, ReadSectors: 24000, ReadMillis: 1500,
		Writes: 2500, WriteSectors: 40000, WriteMillis: 5000, InFlight: 7, IOMillis: 11500, WeightedIOMillis: 26000}
	wrapped := cur
	wrapped.WeightedIOMillis = 100 // the 32-bit ms counter wrapped
	other := cur
	other.Name, other.Minor = "nvme0n1p1", 1
	cases := []struct {
		name   string
		cur    DiskStats
		dt     time.Duration
		want   DiskRates
		wantOK bool
	}{
		{"two seconds", cur, 2 * time.Second, DiskRates{
			ReadIOPS: 1000, WriteIOPS: 250, ReadBytesPerSec: 16000 * 512 / 2, WriteBytesPerSec: 8000 * 512 / 2,
			ReadAwaitMillis: 0.5, WriteAwaitMillis: 2, UtilPct: 75, AvgQueueDepth: 3, InFlight: 7}, true},
		{"idle interval", prev, time.Second, DiskRates{}, true},
		{"wrapped ms counter skips the interval", wrapped, time.Second, DiskRates{}, false},
		{"different device", other, time.Second, DiskRates{}, false},
		{"zero interval", cur, 0, DiskRates{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := DiskRatesBetween(prev, c.cur, c.dt)
			if ok != c.wantOK || got != c.want {
				t.Errorf("got  %+v, %v\nwant %+v, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
	// %util is capped: merged I/O accounting can exceed wall time slightly.
	over := cur
	over.IOMillis = prev.IOMillis + 1100
	if got, _ := DiskRatesBetween(prev, over, time.Second); got.UtilPct != 100 {
		t.Errorf("util over 100%%: got %v, want 100", got.UtilPct)
	}
}

func TestNetRatesBetween(t *testing.T) {
	prev := NetDev{Name: "eth0", RxBytes: 1000, RxPackets: 10, TxBytes: 500, TxPackets: 5}
	cases := []struct {
		cur    NetDev
		want   NetRates
		wantOK bool
	}{
		{NetDev{Name: "eth0", RxBytes: 3000, RxPackets: 30, TxBytes: 1500, TxPackets: 15}, NetRates{RxBytesPerSec: 1000, TxBytesPerSec: 500, RxPacketsPerSec: 10, TxPacketsPerSec: 5}, true},
		{NetDev{Name: "eth0", RxBytes: 10, RxPackets: 1, TxBytes: 600, TxPackets: 6}, NetRates{}, false}, // interface re-created
		{NetDev{Name: "eth1", RxBytes: 3000, RxPackets: 30, TxBytes: 1500, TxPackets: 15}, NetRates{}, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c.cur), func(t *testing.T) {
			got, ok := NetRatesBetween(prev, c.cur, 2*time.Second)
			if ok != c.wantOK || got != c.want {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}
