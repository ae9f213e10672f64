package sysstat

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The parsers read files of the running kernel; a kernel of another
// version, a container's or a captured tree may hold anything. Each fuzz
// test seeds its corpus with the captured fixtures and checks that any
// input gives values or an error, never a panic, and that the values keep
// the invariants the samplers rely on. `go test` runs the seeds; `go test
// -fuzz FuzzX` explores.

// seedFiles adds the captured files at rel under every fixture tree.
func seedFiles(f *testing.F, rel string) {
	f.Helper()
	trees, err := filepath.Glob("testdata/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, tree := range trees {
		if b, err := os.ReadFile(filepath.Join(tree, rel)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(""))
}

func FuzzParseStat(f *testing.F) {
	seedFiles(f, "proc/stat")
	f.Add([]byte("cpu 1 2 3 4\ncpu0 x\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ParseStat(bytes.NewReader(in))
		if err != nil {
			return
		}
		// Rates between two readings never go negative, even when the
		// second is the first's garbage.
		for _, pair := range [][2]CPUTimes{{s.Total, {}}, {{}, s.Total}} {
			if u, ok := CPUUsageBetween(pair[0], pair[1]); ok && (u.BusyPct() < -1e-6 || u.BusyPct() > 100+1e-6) {
				t.Errorf("busy %g%% outside [0, 100]", u.BusyPct())
			}
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	seedFiles(f, "proc/meminfo")
	f.Add([]byte("MemTotal: 18446744073709551615 kB\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = ParseMeminfo(bytes.NewReader(in))
	})
}

func FuzzParseDiskstats(f *testing.F) {
	seedFiles(f, "proc/diskstats")
	f.Fuzz(func(t *testing.T, in []byte) {
		ds, err := ParseDiskstats(bytes.NewReader(in), nil)
		if err != nil {
			return
		}
		for _, d := range ds {
			zero := DiskStats{Name: d.Name, Major: d.Major, Minor: d.Minor}
			if r, ok := DiskRatesBetween(zero, d, time.Second); ok && (r.UtilPct < 0 || r.ReadIOPS < 0 || r.WriteAwaitMillis < 0) {
				t.Errorf("%s: negative rates %+v", d.Name, r)
			}
		}
	})
}

func FuzzParseNetDev(f *testing.F) {
	seedFiles(f, "proc/net/dev")
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = ParseNetDev(bytes.NewReader(in))
	})
}

func FuzzParseMountInfo(f *testing.F) {
	seedFiles(f, "proc/self/mountinfo")
	f.Add([]byte(`36 35 98:0 /mnt1 /mnt\040with\134space rw,noatime master:1 - ext3 /dev/root rw,errors=continue` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		ms, err := ParseMountInfo(bytes.NewReader(in))
		if err != nil {
			return
		}
		// MountOf on whatever was parsed picks one of them or none.
		if m, ok := MountOf(ms, "/var/lib/postgresql", 8, 1); ok && !strings.HasPrefix("/var/lib/postgresql", m.MountPoint) {
			t.Errorf("mount %q chosen for /var/lib/postgresql", m.MountPoint)
		}
	})
}

func FuzzParseCPUInfo(f *testing.F) {
	seedFiles(f, "proc/cpuinfo")
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = ParseCPUInfo(bytes.NewReader(in))
	})
}

func FuzzParseOSRelease(f *testing.F) {
	seedFiles(f, "etc/os-release")
	f.Add([]byte(`PRETTY_NAME="unterminated` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = ParseOSRelease(bytes.NewReader(in))
	})
}

// FuzzSysfsStrings: the small sysfs and mountinfo strings parsed by hand.
func FuzzSysfsStrings(f *testing.F) {
	for _, s := range []string{"none [mq-deadline] kyber", "none", "[", "a]b[", `\040\134\011`, `\0`, `\999`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if a := activeScheduler(s); !strings.Contains(s, a) {
			t.Errorf("activeScheduler(%q) = %q, not part of the input", s, a)
		}
		if u := unescapeOctal(s); len(u) > len(s) {
			t.Errorf("unescapeOctal(%q) = %q grew", s, u)
		}
	})
}
