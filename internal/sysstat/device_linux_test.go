package sysstat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeviceOfLive asks the running host; the assertions hold on any Linux.
func TestDeviceOfLive(t *testing.T) {
	tmp := t.TempDir()
	link := filepath.Join(tmp, "proc-link")
	if err := os.Symlink("/proc", link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		path       string
		wantFSType string // "" : any
		wantPath   string // "" : the path itself
	}{
		{"temporary directory", tmp, "", ""},
		{"proc", "/proc", "proc", ""},
		{"symlink to proc", link, "proc", "/proc"},
		{"root", "/", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := DeviceOf(c.path)
			if err != nil {
				t.Fatal(err)
			}
			wantPath := c.wantPath
			if wantPath == "" {
				wantPath, _ = filepath.EvalSymlinks(c.path)
			}
			if d.Path != wantPath {
				t.Errorf("path: got %q, want %q", d.Path, wantPath)
			}
			if d.FSType == "" || (c.wantFSType != "" && d.FSType != c.wantFSType) {
				t.Errorf("fs type: got %q, want %q", d.FSType, c.wantFSType)
			}
			if !under(d.Path, d.MountPoint) {
				t.Errorf("mount point %q is not above %q", d.MountPoint, d.Path)
			}
			if d.Name != "" && (d.Disk == "" || d.SizeBytes <= 0 || d.Major == 0) {
				t.Errorf("block device %q without disk, size or number: %+v", d.Name, d)
			}
			if d.FSType == "proc" && d.Name != "" {
				t.Errorf("proc has no block device, got %q", d.Name)
			}
			t.Logf("%+v", d)
		})
	}
	if _, err := DeviceOf(filepath.Join(tmp, "missing")); err == nil {
		t.Errorf("missing path: got no error")
	}
}

// TestDeviceOfLiveBlockRoot checks, when the root file system sits on a
// block device, that DeviceOf finds it in sysfs.
func TestDeviceOfLiveBlockRoot(t *testing.T) {
	d, err := DeviceOf("/")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.MountSource, "/dev/") || d.FSType == "zfs" {
		t.Skipf("root is %s on %s: not a block device", d.FSType, d.MountSource)
	}
	if d.Name == "" {
		t.Fatalf("root on %s: got no block device: %+v", d.MountSource, d)
	}
	if _, err := os.Stat(filepath.Join("/sys/block", d.Disk)); err != nil {
		t.Errorf("disk %q is not in /sys/block: %v", d.Disk, err)
	}
}

func TestFreeBytes(t *testing.T) {
	dir := t.TempDir()
	here, err := FreeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if here <= 0 {
		t.Errorf("free bytes in %s: got %d, want more than 0", dir, here)
	}
	// A directory that does not exist yet is measured where it would be.
	later, err := FreeBytes(filepath.Join(dir, "not", "yet"))
	if err != nil {
		t.Fatal(err)
	}
	if later <= 0 {
		t.Errorf("free bytes under a missing directory: got %d, want more than 0", later)
	}
}
