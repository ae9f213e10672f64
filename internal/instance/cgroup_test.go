package instance

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/oltplab/oltplab/internal/sysstat"
)

func readHierarchies(t *testing.T, mountinfo, cgroup string, v2ctl string) []hierarchy {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", mountinfo))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mounts, err := sysstat.ParseMountInfo(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(filepath.Join("testdata", cgroup))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cgs, err := parseProcCgroup(g)
	if err != nil {
		t.Fatal(err)
	}
	return hierarchies(mounts, cgs, func(string) string { return v2ctl })
}

func describe(hs []hierarchy) []string {
	var out []string
	for _, h := range hs {
		var c []string
		for k := range h.controllers {
			c = append(c, k)
		}
		sort.Strings(c)
		v := "v1"
		if h.v2 {
			v = "v2"
		}
		out = append(out, v+" "+strings.Join(c, ",")+" "+h.own)
	}
	return out
}

// TestHierarchies: cgroup mounts joined with /proc/self/cgroup, on a
// hybrid host (this one: v1 controllers, v2 without any), a systemd v2
// host and a container that sees a sub-tree.
func TestHierarchies(t *testing.T) {
	tests := []struct {
		mountinfo, cgroup, v2ctl string
		want                     []string
	}{
		{"mountinfo-hybrid", "cgroup-hybrid", "", []string{
			"v1 cpu /sys/fs/cgroup/cpu",
			"v1 cpuacct /sys/fs/cgroup/cpuacct",
			"v1 cpuset /sys/fs/cgroup/cpuset",
			"v1 memory /sys/fs/cgroup/memory/process_api/4eba5f4199feeabd76b95ce8a48bace6",
			"v1 devices /sys/fs/cgroup/devices",
			"v1 freezer /sys/fs/cgroup/freezer",
			"v1 blkio /sys/fs/cgroup/blkio",
			"v1 pids /sys/fs/cgroup/pids",
			"v2  /sys/fs/cgroup/unified",
		}},
		{"mountinfo-v2", "cgroup-v2", "cpuset cpu io memory pids", []string{
			"v2 cpu,cpuset,io,memory,pids /sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope",
		}},
		{"mountinfo-container", "cgroup-container", "cpu io memory", []string{
			"v2 cpu,io,memory /sys/fs/cgroup",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.mountinfo, func(t *testing.T) {
			got := describe(readHierarchies(t, tt.mountinfo, tt.cgroup, tt.v2ctl))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return strings.TrimSpace(string(b))
}

// TestCgroupV2Files: on a v2 host the instance's group hangs from the
// root with the controllers enabled on the way, and the limits are
// written as io.max, cpuset.cpus and memory.max expect. The tree is a
// plain directory standing in for the cgroup file system.
func TestCgroupV2Files(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpuset cpu io memory"), 0o644); err != nil {
		t.Fatal(err)
	}
	hs := []hierarchy{{v2: true, mount: root, own: filepath.Join(root, "user.slice"),
		controllers: map[string]bool{"cpuset": true, "cpu": true, "io": true, "memory": true}}}
	cg, why := newCgroup(hs, "pg.1.abc", []string{ctlCPUAcct, ctlBlkio, ctlCPUSet, ctlMemory})
	if len(why) > 0 {
		t.Fatalf("unavailable: %v", why)
	}
	dir := filepath.Join(root, "oltplab", "pg.1.abc")
	if cg.v2 != dir {
		t.Fatalf("group: got %s, want %s", cg.v2, dir)
	}
	for _, d := range []string{root, filepath.Join(root, "oltplab")} {
		if got, want := read(t, filepath.Join(d, "cgroup.subtree_control")), "+io +cpuset +memory"; got != want {
			t.Errorf("%s/cgroup.subtree_control: got %q, want %q", d, got, want)
		}
	}
	if err := cg.setIOLimit([]string{"259:0", "8:0"}, IOLimit{WriteIOPS: 200, ReadMBps: 1.5}); err != nil {
		t.Fatal(err)
	}
	// io.max takes one line per write; the last one stands in the stand-in.
	if got, want := read(t, filepath.Join(dir, "io.max")), "8:0 wiops=200 rbps=1500000"; got != want {
		t.Errorf("io.max: got %q, want %q", got, want)
	}
	if err := cg.setCPUs(CPUSet{0, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, filepath.Join(dir, "cpuset.cpus")), "0,2-3"; got != want {
		t.Errorf("cpuset.cpus: got %q, want %q", got, want)
	}
	if err := cg.setMemoryLimit(1 << 30); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, filepath.Join(dir, "memory.max")), "1073741824"; got != want {
		t.Errorf("memory.max: got %q, want %q", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("usage_usec 2500000\nuser_usec 2000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := cg.cpuSeconds(); err != nil || s != 2.5 {
		t.Errorf("cpuSeconds: got %v, %v; want 2.5", s, err)
	}
	if pl := cg.placement(); len(pl.join) != 0 {
		t.Errorf("v2 placement joins v1 tasks files: %v", pl.join)
	}
}

// TestCgroupV1Files: in v1 each controller has its own group under this
// process's group; a cpuset group gets CPUs and memory nodes before it
// can hold a task, and the forking thread joins through "tasks".
func TestCgroupV1Files(t *testing.T) {
	root := t.TempDir()
	var hs []hierarchy
	for _, c := range []string{"cpuset", "blkio", "memory", "cpu,cpuacct"} {
		own := filepath.Join(root, c, "mine")
		if err := os.MkdirAll(own, 0o755); err != nil {
			t.Fatal(err)
		}
		h := hierarchy{mount: filepath.Join(root, c), own: own, controllers: map[string]bool{}}
		for _, n := range strings.Split(c, ",") {
			h.controllers[n] = true
		}
		hs = append(hs, h)
	}
	os.WriteFile(filepath.Join(root, "cpuset", "mine", "cpuset.cpus"), []byte("0-7\n"), 0o644)
	os.WriteFile(filepath.Join(root, "cpuset", "mine", "cpuset.mems"), []byte("0\n"), 0o644)
	cg, why := newCgroup(hs, "my.2.xyz", []string{ctlCPUAcct, ctlBlkio, ctlCPUSet, ctlMemory})
	if len(why) > 0 {
		t.Fatalf("unavailable: %v", why)
	}
	if got := len(cg.v1dir); got != 4 {
		t.Errorf("groups: got %d (%v), want 4", got, cg.v1dir)
	}
	cpuset := filepath.Join(root, "cpuset", "mine", "oltplab", "my.2.xyz")
	for f, want := range map[string]string{"cpuset.cpus": "0-7", "cpuset.mems": "0"} {
		if got := read(t, filepath.Join(cpuset, f)); got != want {
			t.Errorf("%s: got %q, want %q", f, got, want)
		}
	}
	if err := cg.setIOLimit([]string{"254:0"}, IOLimit{ReadIOPS: 10, WriteIOPS: 20, WriteMBps: 3}); err != nil {
		t.Fatal(err)
	}
	blkio := filepath.Join(root, "blkio", "mine", "oltplab", "my.2.xyz")
	for f, want := range map[string]string{
		"blkio.throttle.read_iops_device":  "254:0 10",
		"blkio.throttle.write_iops_device": "254:0 20",
		"blkio.throttle.write_bps_device":  "254:0 3000000",
	} {
		if got := read(t, filepath.Join(blkio, f)); got != want {
			t.Errorf("%s: got %q, want %q", f, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(blkio, "blkio.throttle.read_bps_device")); err == nil {
		t.Error("read_bps_device written for a zero cap")
	}
	pl := cg.placement()
	if len(pl.join) != 4 || len(pl.leave) != 4 || pl.cgroupFD != -1 {
		t.Errorf("placement: %+v", pl)
	}
	if d, _, _ := cg.dir(ctlCPUAcct); !strings.Contains(d, "cpu,cpuacct") {
		t.Errorf("cpuacct group %q not in the co-mounted cpu,cpuacct hierarchy", d)
	}
}

// TestCgroupUnavailable: without a hierarchy for a controller the reason
// is given, so the description (or the error) can say why.
func TestCgroupUnavailable(t *testing.T) {
	root := t.TempDir()
	hs := []hierarchy{{v2: true, mount: root, own: root, controllers: map[string]bool{}}}
	_, why := newCgroup(hs, "x.3.abc", []string{ctlBlkio, ctlCPUSet})
	for _, c := range []string{ctlBlkio, ctlCPUSet} {
		if !strings.Contains(why[c], "does not offer") {
			t.Errorf("%s: got reason %q", c, why[c])
		}
	}
}

func TestParseBlkioThrottle(t *testing.T) {
	ios, _ := os.Open("testdata/blkio.throttle.io_serviced")
	defer ios.Close()
	bytes, _ := os.Open("testdata/blkio.throttle.io_service_bytes")
	defer bytes.Close()
	got, err := parseBlkioThrottle(ios, bytes)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]IOCounters{
		"254:0":  {WriteIOs: 1000, WriteBytes: 4096000},
		"254:16": {ReadIOs: 12, ReadBytes: 49152},
	}
	if len(got) != len(want) || got["254:0"] != want["254:0"] || got["254:16"] != want["254:16"] {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestParseIOStat(t *testing.T) {
	f, _ := os.Open("testdata/io.stat")
	defer f.Close()
	got, err := parseIOStat(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := (IOCounters{ReadIOs: 95, WriteIOs: 5, ReadBytes: 1978368, WriteBytes: 20480}); got["259:0"] != want {
		t.Errorf("259:0: got %+v, want %+v", got["259:0"], want)
	}
	if len(got) != 2 {
		t.Errorf("devices: got %d, want 2", len(got))
	}
}

func TestParseProcStat(t *testing.T) {
	got, err := parseProcStat(read(t, "testdata/proc-stat"))
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{PID: 4242, PPID: 1, PGID: 4242, State: 'S', UTime: 150, STime: 30, CUTime: 7, CSTime: 3, StartTime: 98765}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseProcStat("12 no name"); err == nil {
		t.Error("want an error for a line without a name")
	}
}

// TestRemoveGroupDir: a missing group is removed already, an empty one
// goes, and a refusal other than the kernel's EBUSY (here a directory
// with an entry, as a v1 group with a child group) is returned and the
// directory kept.
func TestRemoveGroupDir(t *testing.T) {
	dir := t.TempDir()
	if err := removeGroupDir(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing group: %v, want nil", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := removeGroupDir(empty); err != nil {
		t.Errorf("empty group: %v", err)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("empty group still there: %v", err)
	}
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(filepath.Join(full, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := removeGroupDir(full); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Errorf("group with a child: %v, want ENOTEMPTY", err)
	}
	if _, err := os.Stat(filepath.Join(full, "child")); err != nil {
		t.Errorf("group with a child: %v", err)
	}
}
