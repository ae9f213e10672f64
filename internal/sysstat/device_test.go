package sysstat

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMountOf(t *testing.T) {
	ms, err := ParseMountInfo(openFixture(t, "proc", "self", "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name         string
		path         string
		major, minor uint32
		wantID       int
	}{
		{"file on the root disk", "/work/main/go.mod", 254, 0, 27},
		{"the root itself", "/", 254, 0, 27},
		{"/devices is not under /dev (devtmpfs 0:6)", "/devices/x", 0, 6, 27},
		{"stacked tmpfs: the device picks the top one", "/dev/shm/pg", 0, 27, 30},
		{"stacked tmpfs: the device picks the lower one", "/dev/shm/pg", 0, 23, 25},
		{"nested cgroup mount", "/sys/fs/cgroup/memory/a", 0, 32, 35},
		{"unknown device: deepest mount point", "/sys/fs/cgroup/cpu/x", 9, 9, 32},
		{"proc", "/proc", 0, 21, 22},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, ok := MountOf(ms, c.path, c.major, c.minor)
			if !ok {
				t.Fatalf("no mount")
			}
			if m.ID != c.wantID {
				t.Errorf("got mount %d (%s), want %d", m.ID, m.MountPoint, c.wantID)
			}
		})
	}
	if _, ok := MountOf(nil, "/x", 0, 0); ok {
		t.Errorf("no mounts: got a mount")
	}
}

// fakeSysfs builds the sysfs layout of an NVMe partition and of an LVM
// volume on it, as the kernel links them.
func fakeSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	ctrl := filepath.Join(root, "sys", "devices", "pci0000:00", "0000:00:04.0", "nvme", "nvme0")
	disk := filepath.Join(ctrl, "nvme0n1")
	writeFile(t, filepath.Join(ctrl, "model"), "Samsung SSD 980 PRO 1TB                 \n")
	writeFile(t, filepath.Join(root, "sys", "bus", "pci", "drivers", "nvme", "bind"), "")
	writeFile(t, filepath.Join(disk, "size"), "1953525168\n")
	writeFile(t, filepath.Join(disk, "queue", "rotational"), "0\n")
	writeFile(t, filepath.Join(disk, "queue", "scheduler"), "[none] mq-deadline kyber bfq\n")
	writeFile(t, filepath.Join(disk, "nvme0n1p2", "partition"), "2\n")
	writeFile(t, filepath.Join(disk, "nvme0n1p2", "size"), "2097152\n")
	vd := filepath.Join(root, "sys", "devices", "pci0000:00", "0000:00:05.0", "virtio1", "block", "vda")
	writeFile(t, filepath.Join(vd, "size"), "41943040\n")
	writeFile(t, filepath.Join(vd, "queue", "rotational"), "1\n")
	writeFile(t, filepath.Join(vd, "queue", "scheduler"), "[none] mq-deadline\n")
	writeFile(t, filepath.Join(root, "sys", "bus", "virtio", "drivers", "virtio_blk", "bind"), "")
	dm := filepath.Join(root, "sys", "devices", "virtual", "block", "dm-0")
	writeFile(t, filepath.Join(dm, "size"), "4194304\n")
	writeFile(t, filepath.Join(dm, "queue", "rotational"), "0\n")
	writeFile(t, filepath.Join(dm, "queue", "scheduler"), "none\n")
	writeFile(t, filepath.Join(dm, "slaves", "nvme0n1p3"), "")
	for link, target := range map[string]string{
		filepath.Join(root, "sys", "dev", "block", "259:2"):     disk + "/nvme0n1p2",
		filepath.Join(root, "sys", "dev", "block", "253:0"):     dm,
		filepath.Join(root, "sys", "block", "nvme0n1"):          disk,
		filepath.Join(root, "sys", "block", "dm-0"):             dm,
		filepath.Join(disk, "device"):                           ctrl,
		filepath.Join(ctrl, "driver"):                           filepath.Join(root, "sys", "bus", "pci", "drivers", "nvme"),
		filepath.Join(root, "sys", "dev", "block", "254:0"):     vd,
		filepath.Join(root, "sys", "block", "vda"):              vd,
		filepath.Join(vd, "device"):                             filepath.Dir(filepath.Dir(vd)),
		filepath.Join(filepath.Dir(filepath.Dir(vd)), "driver"): filepath.Join(root, "sys", "bus", "virtio", "drivers", "virtio_blk"),
	} {
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestDescribeBlock(t *testing.T) {
	fs := NewFS(fakeSysfs(t))
	cases := []struct {
		name string
		dev  devNum
		want Device
	}{
		{"nvme partition", devNum{259, 2}, Device{Name: "nvme0n1p2", Major: 259, Minor: 2, Disk: "nvme0n1",
			Model: "Samsung SSD 980 PRO 1TB", Driver: "nvme", SizeBytes: 2097152 * 512, Scheduler: "none",
			Medium: "non-rotational (as the kernel reports it)"}},
		// Observed: a virtio disk on an SSD host reports rotational=1.
		{"virtio disk", devNum{254, 0}, Device{Name: "vda", Major: 254, Minor: 0, Disk: "vda", Driver: "virtio_blk",
			Rotational: true, SizeBytes: 41943040 * 512, Scheduler: "none",
			Medium: "unknown: virtio_blk is a virtual disk; the kernel reports rotational=1 as the hypervisor passes it on, which says nothing of the SSD or HDD underneath"}},
		{"LVM volume", devNum{253, 0}, Device{Name: "dm-0", Major: 253, Minor: 0, Disk: "dm-0",
			SizeBytes: 4194304 * 512, Scheduler: "none", Slaves: []string{"nvme0n1p3"}}},
		{"no sysfs entry", devNum{8, 0}, Device{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got Device
			fs.describeBlock(&got, c.dev)
			if !equalDevice(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func equalDevice(a, b Device) bool {
	if len(a.Slaves) != len(b.Slaves) {
		return false
	}
	for i := range a.Slaves {
		if a.Slaves[i] != b.Slaves[i] {
			return false
		}
	}
	a.Slaves, b.Slaves = nil, nil
	return a.Name == b.Name && a.Major == b.Major && a.Minor == b.Minor && a.Disk == b.Disk && a.Model == b.Model &&
		a.Driver == b.Driver && a.Rotational == b.Rotational && a.SizeBytes == b.SizeBytes && a.Scheduler == b.Scheduler &&
		a.Medium == b.Medium
}

func TestActiveScheduler(t *testing.T) {
	for in, want := range map[string]string{
		"none [mq-deadline] kyber bfq": "mq-deadline",
		"[none] mq-deadline":           "none",
		"none":                         "none",
		"":                             "",
	} {
		if got := activeScheduler(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
