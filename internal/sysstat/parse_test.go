package sysstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// fixture is a tree captured from a 2-vCPU Firecracker VM running Debian 12.
const fixture = "testdata/firecracker-debian12"

func openFixture(t *testing.T, elem ...string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(append([]string{fixture}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func procfsFixture(t *testing.T) procfs.FS {
	t.Helper()
	fs, err := procfs.NewFS(filepath.Join(fixture, "proc"))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestParseStatFixture(t *testing.T) {
	s, err := ParseStat(openFixture(t, "proc", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	wantTotal := CPUTimes{CPU: -1, User: 39777, Nice: 27, System: 16794, Idle: 259315, IOWait: 1550, IRQ: 0, SoftIRQ: 341, Steal: 52}
	if s.Total != wantTotal {
		t.Errorf("total: got %+v, want %+v", s.Total, wantTotal)
	}
	if got, want := len(s.PerCPU), 2; got != want {
		t.Fatalf("got %d CPUs, want %d", got, want)
	}
	if got, want := s.PerCPU[1], (CPUTimes{CPU: 1, User: 20401, Nice: 21, System: 9380, Idle: 127528, IOWait: 1220, SoftIRQ: 309, Steal: 32}); got != want {
		t.Errorf("cpu1: got %+v, want %+v", got, want)
	}
	if s.ContextSwitches != 2492271 || s.ProcsRunning != 3 || s.ProcsBlocked != 0 {
		t.Errorf("got ctxt %d running %d blocked %d, want 2492271 3 0", s.ContextSwitches, s.ProcsRunning, s.ProcsBlocked)
	}

	// Cross-check against procfs, which reports seconds at USER_HZ = 100.
	ps, err := procfsFixture(t).Stat()
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]float64{
		"user": {float64(s.Total.User) / 100, ps.CPUTotal.User}, "system": {float64(s.Total.System) / 100, ps.CPUTotal.System},
		"idle": {float64(s.Total.Idle) / 100, ps.CPUTotal.Idle}, "iowait": {float64(s.Total.IOWait) / 100, ps.CPUTotal.Iowait},
		"softirq": {float64(s.Total.SoftIRQ) / 100, ps.CPUTotal.SoftIRQ}, "steal": {float64(s.Total.Steal) / 100, ps.CPUTotal.Steal},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: got %v s, procfs says %v s", name, pair[0], pair[1])
		}
	}
}

func TestParseStatShapes(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    Stat
		wantErr bool
	}{
		{"pre-2.6.11 four columns", "cpu 1 2 3 4\ncpu0 1 2 3 4\n",
			Stat{Total: CPUTimes{CPU: -1, User: 1, Nice: 2, System: 3, Idle: 4}, PerCPU: []CPUTimes{{CPU: 0, User: 1, Nice: 2, System: 3, Idle: 4}}}, false},
		{"offline cpu1 is absent", "cpu 2 0 0 2 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu2 1 0 0 1 0 0 0 0 0 0\n",
			Stat{Total: CPUTimes{CPU: -1, User: 2, Idle: 2}, PerCPU: []CPUTimes{{CPU: 0, User: 1, Idle: 1}, {CPU: 2, User: 1, Idle: 1}}}, false},
		{"no cpu line", "ctxt 5\n", Stat{}, true},
		{"three columns", "cpu 1 2 3\n", Stat{}, true},
		{"not a number", "cpu 1 2 x 4\n", Stat{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseStat(strings.NewReader(c.in))
			if c.wantErr {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestParseMeminfoFixture(t *testing.T) {
	m, err := ParseMeminfo(openFixture(t, "proc", "meminfo"))
	if err != nil {
		t.Fatal(err)
	}
	want := Meminfo{
		TotalBytes: 24684092 * 1024, FreeBytes: 22797740 * 1024, AvailableBytes: 23906908 * 1024,
		CachedBytes: 1298860 * 1024, BuffersBytes: 11288 * 1024, DirtyBytes: 28312 * 1024,
	}
	if m != want {
		t.Errorf("got %+v, want %+v", m, want)
	}
	pm, err := procfsFixture(t).Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	if *pm.MemTotalBytes != m.TotalBytes || *pm.MemAvailableBytes != m.AvailableBytes || *pm.DirtyBytes != m.DirtyBytes {
		t.Errorf("procfs says total %d available %d dirty %d", *pm.MemTotalBytes, *pm.MemAvailableBytes, *pm.DirtyBytes)
	}
}

func TestParseMeminfoShapes(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    Meminfo
		wantErr bool
	}{
		{"pre-3.14 without MemAvailable", "MemTotal: 100 kB\nMemFree: 10 kB\n", Meminfo{TotalBytes: 102400, FreeBytes: 10240}, false},
		{"no MemTotal", "MemFree: 10 kB\n", Meminfo{}, true},
		{"unknown unit", "MemTotal: 100 MB\n", Meminfo{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseMeminfo(strings.NewReader(c.in))
			if (err != nil) != c.wantErr {
				t.Fatalf("got error %v, want error %v", err, c.wantErr)
			}
			if !c.wantErr && got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestParseDiskstatsFixture(t *testing.T) {
	all, err := ParseDiskstats(openFixture(t, "proc", "diskstats"), func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(all), 10; got != want {
		t.Errorf("keeping everything: got %d devices, want %d", got, want)
	}
	disks, err := ParseDiskstats(openFixture(t, "proc", "diskstats"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range disks {
		names = append(names, d.Name)
	}
	if got, want := strings.Join(names, ","), "vda,zram0"; got != want {
		t.Fatalf("default filter: got %s, want %s", got, want)
	}
	want := DiskStats{Major: 254, Minor: 0, Name: "vda", Reads: 121495, ReadsMerged: 15636, ReadSectors: 6835050, ReadMillis: 66894,
		Writes: 409477, WritesMerged: 37649, WriteSectors: 28157528, WriteMillis: 757149, InFlight: 0, IOMillis: 33444, WeightedIOMillis: 829475}
	if disks[0] != want {
		t.Errorf("got  %+v\nwant %+v", disks[0], want)
	}

	bfs, err := blockdevice.NewFS(filepath.Join(fixture, "proc"), filepath.Join(fixture, "proc"))
	if err != nil {
		t.Fatal(err)
	}
	pds, err := bfs.ProcDiskstats()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pds {
		if p.DeviceName != "vda" {
			continue
		}
		if p.ReadIOs != want.Reads || p.WriteSectors != want.WriteSectors || p.WeightedIOTicks != want.WeightedIOMillis || p.IOsTotalTicks != want.IOMillis {
			t.Errorf("procfs disagrees on vda: %+v", p.IOStats)
		}
	}
}

func TestParseDiskstatsShapes(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    string // names kept
		wantErr bool
	}{
		{"4.17 kernel, 14 fields", "   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n", "sda", false},
		{"5.5 kernel, 20 fields, nvme with partition", " 259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n 259 1 nvme0n1p1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", "nvme0n1,nvme0n1p1", false},
		{"ram and loop skipped", "1 0 ram0 1 2 3 4 5 6 7 8 9 10 11\n7 0 loop0 1 2 3 4 5 6 7 8 9 10 11\n253 0 dm-0 1 2 3 4 5 6 7 8 9 10 11\n", "dm-0", false},
		{"too few fields", "8 0 sda 1 2 3\n", "", true},
		{"not a number", "8 0 sda 1 2 3 4 5 6 7 8 9 10 x\n", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseDiskstats(strings.NewReader(c.in), nil)
			if (err != nil) != c.wantErr {
				t.Fatalf("got error %v, want error %v", err, c.wantErr)
			}
			var names []string
			for _, d := range got {
				names = append(names, d.Name)
			}
			if !c.wantErr && strings.Join(names, ",") != c.want {
				t.Errorf("got %v, want %s", names, c.want)
			}
			if !c.wantErr && got[0].WeightedIOMillis != 11 {
				t.Errorf("weighted io ms: got %d, want 11 (field 14)", got[0].WeightedIOMillis)
			}
		})
	}
}

func TestParseNetDevFixture(t *testing.T) {
	got, err := ParseNetDev(openFixture(t, "proc", "net", "dev"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d interfaces, want 4: %+v", len(got), got)
	}
	want := map[string]NetDev{
		"lo":   {Name: "lo", RxBytes: 158249431, RxPackets: 13859, TxBytes: 158249431, TxPackets: 13859},
		"eth0": {Name: "eth0", RxBytes: 297623734, RxPackets: 9733, TxBytes: 552119, TxPackets: 5610},
	}
	for _, n := range got {
		if w, ok := want[n.Name]; ok && n != w {
			t.Errorf("got %+v, want %+v", n, w)
		}
	}
	pnd, err := procfsFixture(t).NetDev()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range got {
		p := pnd[n.Name]
		if p.RxBytes != n.RxBytes || p.TxBytes != n.TxBytes || p.TxPackets != n.TxPackets {
			t.Errorf("%s: procfs says rx %d tx %d tx packets %d", n.Name, p.RxBytes, p.TxBytes, p.TxPackets)
		}
	}
}

func TestParseNetDevShapes(t *testing.T) {
	// Old kernels wrote no space after the colon.
	in := "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n  eth1:123 4 0 0 0 0 0 0 567 8 0 0 0 0 0 0\n"
	got, err := ParseNetDev(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := (NetDev{Name: "eth1", RxBytes: 123, RxPackets: 4, TxBytes: 567, TxPackets: 8}); len(got) != 1 || got[0] != want {
		t.Errorf("got %+v, want [%+v]", got, want)
	}
	if _, err := ParseNetDev(strings.NewReader("eth0: 1 2 3\n")); err == nil {
		t.Errorf("short line: got no error")
	}
}

func TestParseMountInfoFixture(t *testing.T) {
	ms, err := ParseMountInfo(openFixture(t, "proc", "self", "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ms), 20; got != want {
		t.Fatalf("got %d mounts, want %d", got, want)
	}
	root := Mount{ID: 27, ParentID: 1, Major: 254, Minor: 0, Root: "/", MountPoint: "/", Options: "rw,relatime",
		FSType: "ext4", Source: "/dev/vda", SuperOptions: "rw,discard,resv_strict,resuid=65534,resgid=65534"}
	var found bool
	for _, m := range ms {
		if m.MountPoint == "/" {
			found = true
			if m != root {
				t.Errorf("got  %+v\nwant %+v", m, root)
			}
		}
	}
	if !found {
		t.Errorf("no root mount")
	}
}

func TestParseMountInfoShapes(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    Mount
		wantErr bool
	}{
		{"proc(5) example with optional field",
			"36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
			Mount{ID: 36, ParentID: 35, Major: 98, Root: "/mnt1", MountPoint: "/mnt2", Options: "rw,noatime", FSType: "ext3", Source: "/dev/root", SuperOptions: "rw,errors=continue"}, false},
		{"two optional fields and an escaped space",
			"100 29 259:2 / /data/pg\\040data rw,noatime shared:51 master:3 - xfs /dev/nvme0n1p2 rw,attr2",
			Mount{ID: 100, ParentID: 29, Major: 259, Minor: 2, Root: "/", MountPoint: "/data/pg data", Options: "rw,noatime", FSType: "xfs", Source: "/dev/nvme0n1p2", SuperOptions: "rw,attr2"}, false},
		{"overlay",
			"520 480 0:52 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w",
			Mount{ID: 520, ParentID: 480, Major: 0, Minor: 52, Root: "/", MountPoint: "/", Options: "rw,relatime", FSType: "overlay", Source: "overlay", SuperOptions: "rw,lowerdir=/l,upperdir=/u,workdir=/w"}, false},
		{"no separator", "36 35 98:0 /mnt1 /mnt2 rw,noatime ext3 /dev/root rw", Mount{}, true},
		{"bad device number", "36 35 98 /mnt1 /mnt2 rw - ext3 /dev/root rw", Mount{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseMountInfo(strings.NewReader(c.in + "\n"))
			if (err != nil) != c.wantErr {
				t.Fatalf("got error %v, want error %v", err, c.wantErr)
			}
			if !c.wantErr && (len(got) != 1 || got[0] != c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}
