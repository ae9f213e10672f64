package sysstat

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Device is the storage under a directory: its mount, and the block device
// when there is one. For tmpfs, overlay, network and other virtual file
// systems Name is empty and only the mount fields are set.
type Device struct {
	Path         string // the directory asked about, absolute, symlinks resolved
	MountPoint   string
	FSType       string // e.g. ext4, xfs, tmpfs, overlay, nfs4
	MountSource  string // e.g. /dev/nvme0n1p2, overlay, server:/export
	MountOptions string

	Name       string // block device holding the file system, e.g. nvme0n1p2; empty when none
	Major      uint32 // of Name
	Minor      uint32 // of Name
	Disk       string // whole disk holding Name (Name itself when not a partition)
	Model      string // the disk's model, when the driver reports one
	Driver     string // the disk's driver, e.g. nvme, sd, virtio_blk
	Rotational bool   // what the kernel reports (queue/rotational); a virtual disk reports what the hypervisor passes on: see Medium
	// Medium says what Rotational tells of the storage: the kernel's
	// report for a physical disk, "unknown" for a virtual one (virtio,
	// Xen, Hyper-V, VMware), whose rotational flag says nothing of the
	// SSD or HDD underneath; empty without a block device.
	Medium    string
	SizeBytes int64    // size of Name
	Scheduler string   // the disk's active I/O scheduler, e.g. none, mq-deadline
	Slaves    []string // devices under a device-mapper or md disk, e.g. [nvme0n1p3]
}

// devNum is a device number, major:minor.
type devNum struct{ major, minor uint32 }

func (d devNum) String() string { return fmt.Sprintf("%d:%d", d.major, d.minor) }

// DeviceOf describes the storage holding path on the running host.
func DeviceOf(path string) (Device, error) { return live.DeviceOf(path) }

// DeviceOf describes the storage holding path, a directory or file of the
// running host, reading mountinfo and sysfs below the FS root.
func (fs FS) DeviceOf(path string) (Device, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Device{}, fmt.Errorf("device of %s: %w", path, err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return Device{}, fmt.Errorf("device of %s: %w", path, err)
	}
	dev, _, err := statDev(abs)
	if err != nil {
		return Device{}, fmt.Errorf("device of %s: %w", path, err)
	}
	f, err := fs.open("proc", "self", "mountinfo")
	if err != nil {
		return Device{}, fmt.Errorf("device of %s: %w", path, err)
	}
	mounts, err := ParseMountInfo(f)
	f.Close()
	if err != nil {
		return Device{}, fmt.Errorf("device of %s: parse mountinfo: %w", path, err)
	}
	m, ok := MountOf(mounts, abs, dev.major, dev.minor)
	if !ok {
		return Device{}, fmt.Errorf("device of %s: no mount holds it", path)
	}
	d := Device{Path: abs, MountPoint: m.MountPoint, FSType: m.FSType, MountSource: m.Source, MountOptions: m.Options}

	// A block file system's st_dev is its device. Others (btrfs, virtual
	// file systems) have an anonymous 0:N; btrfs still names its device as
	// the mount source.
	blk := dev
	if blk.major == 0 {
		blk = devNum{}
		if strings.HasPrefix(m.Source, "/dev/") {
			if _, rdev, err := statDev(fs.path(m.Source)); err == nil {
				blk = rdev
			}
		}
	}
	if blk.major != 0 {
		fs.describeBlock(&d, blk)
	}
	return d, nil
}

// MountOf picks the mount holding path: the deepest mount point above it
// on the same device (the last one listed, when mounts are stacked), or
// the deepest mount point above it whatever the device when none matches.
func MountOf(mounts []Mount, path string, major, minor uint32) (Mount, bool) {
	best, bestDev := -1, -1
	for i, m := range mounts {
		if !under(path, m.MountPoint) {
			continue
		}
		if best < 0 || len(m.MountPoint) >= len(mounts[best].MountPoint) {
			best = i
		}
		if m.Major == major && m.Minor == minor &&
			(bestDev < 0 || len(m.MountPoint) >= len(mounts[bestDev].MountPoint)) {
			bestDev = i
		}
	}
	if bestDev >= 0 {
		return mounts[bestDev], true
	}
	if best >= 0 {
		return mounts[best], true
	}
	return Mount{}, false
}

// under reports whether path is mountPoint or below it.
func under(path, mountPoint string) bool {
	if mountPoint == "/" || path == mountPoint {
		return true
	}
	return strings.HasPrefix(path, mountPoint+"/")
}

// describeBlock fills the block-device fields from sysfs. Attributes a
// driver does not provide are left empty.
func (fs FS) describeBlock(d *Device, dev devNum) {
	sysDir, err := filepath.EvalSymlinks(fs.path("sys", "dev", "block", dev.String()))
	if err != nil {
		return // no sysfs entry: keep the mount fields only
	}
	d.Name, d.Major, d.Minor = filepath.Base(sysDir), dev.major, dev.minor
	d.Disk = d.Name
	if _, err := os.Stat(filepath.Join(sysDir, "partition")); err == nil {
		d.Disk = filepath.Base(filepath.Dir(sysDir))
	}
	if sectors, ok := readIntFile(filepath.Join(sysDir, "size")); ok {
		d.SizeBytes = sectors * SectorBytes // sysfs size is in 512-byte sectors too
	}
	disk := []string{"sys", "block", d.Disk}
	d.Model = fs.readString(append(disk, "device", "model")...)
	if drv, err := filepath.EvalSymlinks(fs.path(append(disk, "device", "driver")...)); err == nil {
		d.Driver = filepath.Base(drv)
	}
	d.Rotational = fs.readString(append(disk, "queue", "rotational")...) == "1"
	d.Medium = medium(d.Driver, d.Rotational)
	d.Scheduler = activeScheduler(fs.readString(append(disk, "queue", "scheduler")...))
	if entries, err := os.ReadDir(fs.path(append(disk, "slaves")...)); err == nil {
		for _, e := range entries {
			d.Slaves = append(d.Slaves, e.Name())
		}
		sort.Strings(d.Slaves)
	}
}

// activeScheduler picks the bracketed choice of "none [mq-deadline] kyber";
// a single unbracketed word (as "none" on some devices) is itself.
func activeScheduler(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	if f := strings.Fields(s); len(f) == 1 {
		return f[0]
	}
	return ""
}

// virtualDiskDrivers are drivers of disks a hypervisor presents: their
// queue/rotational is the hypervisor's setting, not the medium's.
var virtualDiskDrivers = map[string]bool{
	"virtio_blk": true, "virtio_scsi": true, "xen_blkfront": true, "xen-blkfront": true,
	"vbd": true, "hv_storvsc": true, "vmw_pvscsi": true,
}

// medium says what a disk's rotational flag tells: the kernel's report,
// or, for a virtual disk, that it tells nothing.
func medium(driver string, rotational bool) string {
	flag := "0"
	if rotational {
		flag = "1"
	}
	switch {
	case virtualDiskDrivers[driver]:
		return "unknown: " + driver + " is a virtual disk; the kernel reports rotational=" + flag +
			" as the hypervisor passes it on, which says nothing of the SSD or HDD underneath"
	case driver == "":
		return ""
	case rotational:
		return "rotational (as the kernel reports it)"
	}
	return "non-rotational (as the kernel reports it)"
}
