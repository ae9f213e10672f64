package sysstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHostFixture(t *testing.T) {
	got, err := NewFS(fixture).Host()
	if err != nil {
		t.Fatal(err)
	}
	want := Host{
		Hostname: "vm", CPUModel: "AMD EPYC", LogicalCPUs: 2, PhysicalCores: 2, Sockets: 1,
		MemoryBytes: 24684092 * 1024, Kernel: "6.18.44-fc-v657", OS: "Debian GNU/Linux 12 (bookworm)",
		Virtualization: "vm-other", // Firecracker has no DMI; the CPU flag says "hypervisor"
	}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestHostMissingFilesIsAnErrorWithWhatWasFound(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc", "sys", "kernel", "osrelease"), "6.1.0-18-amd64\n")
	h, err := NewFS(root).Host()
	if err == nil {
		t.Fatalf("got no error for a tree without cpuinfo and meminfo")
	}
	if h.Kernel != "6.1.0-18-amd64" {
		t.Errorf("kernel: got %q, want it read despite the other errors", h.Kernel)
	}
}

// cpuinfoX86 writes an x86 /proc/cpuinfo for sockets x cores x threads.
func cpuinfoX86(sockets, cores, threads int, hypervisor bool) string {
	var b strings.Builder
	flags := "fpu vme de pse tsc msr ht"
	if hypervisor {
		flags += " hypervisor"
	}
	n := 0
	for range threads {
		for s := range sockets {
			for c := range cores {
				fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"+
					"physical id\t: %d\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\nflags\t\t: %s\n\n",
					n, s, cores*threads, c, cores, flags)
				n++
			}
		}
	}
	return b.String()
}

const cpuinfoARM64 = `processor	: 0
BogoMIPS	: 108.00
Features	: fp asimd evtstrm crc32 cpuid
CPU implementer	: 0x41
CPU part	: 0xd08

processor	: 1
BogoMIPS	: 108.00
Features	: fp asimd evtstrm crc32 cpuid
CPU implementer	: 0x41
CPU part	: 0xd08

Hardware	: BCM2835
Model		: Raspberry Pi 4 Model B Rev 1.4
`

func TestParseCPUInfo(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want CPUInfo
	}{
		{"2 sockets x 16 cores x 2 threads, bare metal", cpuinfoX86(2, 16, 2, false),
			CPUInfo{Model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", LogicalCPUs: 64, PhysicalCores: 32, Sockets: 2, HasFlags: true}},
		{"1 socket x 4 cores, VM", cpuinfoX86(1, 4, 1, true),
			CPUInfo{Model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", LogicalCPUs: 4, PhysicalCores: 4, Sockets: 1, HasFlags: true, Hypervisor: true}},
		{"arm64 without topology", cpuinfoARM64,
			CPUInfo{Model: "Raspberry Pi 4 Model B Rev 1.4", LogicalCPUs: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseCPUInfo(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
	if _, err := ParseCPUInfo(strings.NewReader("")); err == nil {
		t.Errorf("empty cpuinfo: got no error")
	}
}

func TestHostTopologyFallback(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "proc", "cpuinfo"), cpuinfoARM64)
	writeFile(t, filepath.Join(root, "proc", "meminfo"), "MemTotal: 4096 kB\n")
	writeFile(t, filepath.Join(root, "proc", "sys", "kernel", "osrelease"), "6.6.20+rpt-rpi-v8\n")
	writeFile(t, filepath.Join(root, "etc", "os-release"), `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"`+"\n")
	for cpu, core := range []int{0, 1} {
		dir := filepath.Join(root, "sys", "devices", "system", "cpu", fmt.Sprint("cpu", cpu), "topology")
		writeFile(t, filepath.Join(dir, "physical_package_id"), "0\n")
		writeFile(t, filepath.Join(dir, "core_id"), fmt.Sprintln(core))
	}
	h, err := NewFS(root).Host()
	if err != nil {
		t.Fatal(err)
	}
	if h.PhysicalCores != 2 || h.Sockets != 1 || h.MemoryBytes != 4096*1024 || h.Virtualization != "" {
		t.Errorf("got %+v, want 2 cores on 1 socket from sysfs, 4 MiB, unknown virtualization", h)
	}
}

func TestParseOSRelease(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{`PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"` + "\nNAME=\"Debian GNU/Linux\"\n", "Debian GNU/Linux 12 (bookworm)"},
		{"# comment\nPRETTY_NAME='Rocky Linux 9.3 (Blue Onyx)'\n", "Rocky Linux 9.3 (Blue Onyx)"},
		{`PRETTY_NAME="Say \"hi\" \$HOME"` + "\n", `Say "hi" $HOME`},
		{"NAME=Alpine\nVERSION=3.19\n", "Alpine 3.19"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			got, err := ParseOSRelease(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	if _, err := ParseOSRelease(strings.NewReader("ID=x\n")); err == nil {
		t.Errorf("no name: got no error")
	}
}

func TestDetectVirtualization(t *testing.T) {
	x86 := CPUInfo{HasFlags: true}
	vm := CPUInfo{HasFlags: true, Hypervisor: true}
	cases := []struct {
		dmi  DMI
		xen  string
		cpu  CPUInfo
		want string
	}{
		{DMI{SysVendor: "QEMU", ProductName: "Standard PC (Q35 + ICH9, 2009)"}, "", vm, "qemu"},
		{DMI{SysVendor: "Red Hat", ProductName: "KVM"}, "", vm, "kvm"},
		{DMI{SysVendor: "QEMU", ProductName: "KVM Virtual Machine"}, "", vm, "kvm"},
		{DMI{SysVendor: "Amazon EC2", ProductName: "m6i.large"}, "", vm, "amazon"},
		{DMI{SysVendor: "Google", ProductName: "Google Compute Engine"}, "", vm, "google"},
		{DMI{SysVendor: "Microsoft Corporation", ProductName: "Virtual Machine"}, "", vm, "microsoft"},
		{DMI{SysVendor: "Microsoft Corporation", ProductName: "Surface Laptop 5"}, "", x86, "none"},
		{DMI{SysVendor: "VMware, Inc.", ProductName: "VMware7,1"}, "", vm, "vmware"},
		{DMI{SysVendor: "innotek GmbH", ProductName: "VirtualBox"}, "", vm, "oracle"},
		{DMI{}, "xen", CPUInfo{}, "xen"},
		{DMI{}, "", vm, "vm-other"},
		{DMI{SysVendor: "Dell Inc.", ProductName: "PowerEdge R750"}, "", x86, "none"},
		{DMI{}, "", CPUInfo{}, ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/%s/hv=%v", c.dmi.SysVendor, c.dmi.ProductName, c.xen, c.cpu.Hypervisor), func(t *testing.T) {
			if got := DetectVirtualization(c.dmi, c.xen, c.cpu); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestReadHostLive(t *testing.T) {
	h, err := ReadHost()
	if err != nil {
		t.Fatal(err)
	}
	if h.LogicalCPUs < 1 || h.MemoryBytes <= 0 || h.Kernel == "" || h.CPUModel == "" {
		t.Errorf("got %+v, want CPUs, memory, kernel and CPU model", h)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
