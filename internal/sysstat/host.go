package sysstat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Host is the machine a result was measured on, recorded with every run.
type Host struct {
	Hostname      string
	CPUModel      string
	LogicalCPUs   int
	PhysicalCores int // 0 when unknown
	Sockets       int // 0 when unknown
	MemoryBytes   int64
	Kernel        string // kernel release, e.g. "6.1.0-18-amd64"
	OS            string // /etc/os-release PRETTY_NAME, e.g. "Debian GNU/Linux 12 (bookworm)"
	// Virtualization names the hypervisor in systemd-detect-virt's words
	// (kvm, qemu, amazon, google, microsoft, vmware, oracle, xen, ...),
	// "vm-other" for a virtual machine whose hypervisor is not recognised,
	// "none" for bare metal (x86 without the hypervisor CPU flag), and ""
	// when it cannot be told.
	Virtualization string
}

// ReadHost describes the running host. The Host is filled as far as
// possible even when err is not nil (err then says what could not be read).
func ReadHost() (Host, error) { return live.Host() }

// Host describes the host whose files are below the FS root.
func (fs FS) Host() (Host, error) {
	var h Host
	var errs []error
	cpu, err := fs.cpuInfo()
	if err != nil {
		errs = append(errs, err)
	}
	h.CPUModel, h.LogicalCPUs, h.PhysicalCores, h.Sockets = cpu.Model, cpu.LogicalCPUs, cpu.PhysicalCores, cpu.Sockets

	if m, err := fs.meminfo(); err != nil {
		errs = append(errs, err)
	} else {
		h.MemoryBytes = int64(m.TotalBytes)
	}
	h.Hostname = fs.readString("proc", "sys", "kernel", "hostname")
	h.Kernel = fs.readString("proc", "sys", "kernel", "osrelease")
	if h.Kernel == "" {
		errs = append(errs, errors.New("read kernel release from proc/sys/kernel/osrelease"))
	}
	h.OS, err = fs.osName()
	if err != nil {
		errs = append(errs, err)
	}
	h.Virtualization = DetectVirtualization(DMI{
		SysVendor:   fs.readString("sys", "class", "dmi", "id", "sys_vendor"),
		ProductName: fs.readString("sys", "class", "dmi", "id", "product_name"),
		BIOSVendor:  fs.readString("sys", "class", "dmi", "id", "bios_vendor"),
	}, fs.readString("sys", "hypervisor", "type"), cpu)
	if err := errors.Join(errs...); err != nil {
		return h, fmt.Errorf("describe host: %w", err)
	}
	return h, nil
}

func (fs FS) cpuInfo() (CPUInfo, error) {
	f, err := fs.open("proc", "cpuinfo")
	if err != nil {
		return CPUInfo{}, err
	}
	defer f.Close()
	cpu, err := ParseCPUInfo(f)
	if err != nil {
		return cpu, fmt.Errorf("parse proc/cpuinfo: %w", err)
	}
	if cpu.PhysicalCores == 0 {
		cpu.PhysicalCores, cpu.Sockets = fs.topology()
	}
	return cpu, nil
}

// topology counts cores and packages from sysfs, for architectures whose
// /proc/cpuinfo does not carry "physical id" and "core id". 0, 0 when
// sysfs does not say either.
func (fs FS) topology() (cores, sockets int) {
	dirs, _ := filepath.Glob(fs.path("sys", "devices", "system", "cpu", "cpu[0-9]*", "topology"))
	coreSet, pkgSet := map[[2]int64]bool{}, map[int64]bool{}
	for _, d := range dirs {
		pkg, ok1 := readIntFile(filepath.Join(d, "physical_package_id"))
		core, ok2 := readIntFile(filepath.Join(d, "core_id"))
		if !ok1 || !ok2 {
			continue
		}
		coreSet[[2]int64{pkg, core}], pkgSet[pkg] = true, true
	}
	return len(coreSet), len(pkgSet)
}

func readIntFile(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}

func (fs FS) meminfo() (Meminfo, error) {
	f, err := fs.open("proc", "meminfo")
	if err != nil {
		return Meminfo{}, err
	}
	defer f.Close()
	m, err := ParseMeminfo(f)
	if err != nil {
		return m, fmt.Errorf("parse proc/meminfo: %w", err)
	}
	return m, nil
}

func (fs FS) osName() (string, error) {
	f, err := fs.open("etc", "os-release")
	if errors.Is(err, os.ErrNotExist) {
		f, err = fs.open("usr", "lib", "os-release") // os-release(5): the fallback location
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	name, err := ParseOSRelease(f)
	if err != nil {
		return "", fmt.Errorf("parse os-release: %w", err)
	}
	return name, nil
}

// CPUInfo is what /proc/cpuinfo says about the processors.
type CPUInfo struct {
	Model         string
	LogicalCPUs   int
	PhysicalCores int // distinct (physical id, core id); 0 when not given
	Sockets       int // distinct physical id; 0 when not given
	HasFlags      bool
	Hypervisor    bool // the x86 "hypervisor" flag: running under a hypervisor
}

// ParseCPUInfo parses /proc/cpuinfo (x86, ARM, POWER, s390 and MIPS
// spellings of the model).
func ParseCPUInfo(r io.Reader) (CPUInfo, error) {
	var (
		c      CPUInfo
		models = map[string]string{}
		cores  = map[[2]string]bool{}
		pkgs   = map[string]bool{}
		pkg    string
		hasPkg bool
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024) // flags lines are long
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			c.LogicalCPUs++
			hasPkg = false
		case "model name", "cpu model", "cpu", "Processor", "Model": // x86, MIPS, POWER, old ARM, ARM boards
			if _, seen := models[key]; !seen {
				models[key] = val
			}
		case "physical id":
			pkg, hasPkg = val, true
			pkgs[val] = true
		case "core id":
			if hasPkg {
				cores[[2]string{pkg, val}] = true
			}
		case "flags":
			c.HasFlags = true
			for _, f := range strings.Fields(val) {
				if f == "hypervisor" {
					c.Hypervisor = true
				}
			}
		case "# processors": // s390
			if n, err := strconv.Atoi(val); err == nil && c.LogicalCPUs == 0 {
				c.LogicalCPUs = n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	for _, k := range []string{"model name", "cpu model", "cpu", "Processor", "Model"} {
		if v := models[k]; v != "" {
			c.Model = v
			break
		}
	}
	c.PhysicalCores, c.Sockets = len(cores), len(pkgs)
	if c.PhysicalCores == 0 {
		c.Sockets = 0
	}
	if c.LogicalCPUs == 0 {
		return c, errors.New("no processor entries")
	}
	return c, nil
}

// ParseOSRelease returns the distribution's name from os-release(5):
// PRETTY_NAME, else NAME and VERSION.
func ParseOSRelease(r io.Reader) (string, error) {
	vars := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		vars[k] = unquoteShell(v)
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if v := vars["PRETTY_NAME"]; v != "" {
		return v, nil
	}
	name := strings.TrimSpace(vars["NAME"] + " " + vars["VERSION"])
	if name == "" {
		return "", errors.New("no PRETTY_NAME or NAME")
	}
	return name, nil
}

// unquoteShell undoes os-release's shell quoting: "double" with \" \\ \$
// \` escapes, or 'single'.
func unquoteShell(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("\"\\$`", v[i+1]) >= 0 {
				i++
			}
			b.WriteByte(v[i])
		}
		return b.String()
	}
	return v
}

// DMI is the firmware's description of the machine (/sys/class/dmi/id).
type DMI struct {
	SysVendor, ProductName, BIOSVendor string
}

// dmiVendors maps DMI strings to systemd-detect-virt's names, checked in
// order against product_name, sys_vendor and bios_vendor (systemd's order).
var dmiVendors = []struct{ substr, virt string }{
	{"Amazon EC2", "amazon"},
	{"Google", "google"},
	{"KVM", "kvm"},
	{"OpenStack", "kvm"},
	{"QEMU", "qemu"},
	{"VMware", "vmware"},
	{"VMW", "vmware"},
	{"innotek GmbH", "oracle"},
	{"VirtualBox", "oracle"},
	{"Xen", "xen"},
	{"Bochs", "bochs"},
	{"Parallels", "parallels"},
	{"BHYVE", "bhyve"},
	{"Apple Virtualization", "apple"},
}

// DetectVirtualization names the hypervisor from DMI strings, the Xen
// /sys/hypervisor/type and the CPU's hypervisor flag (see
// Host.Virtualization for the vocabulary).
func DetectVirtualization(dmi DMI, hypervisorType string, cpu CPUInfo) string {
	for _, s := range []string{dmi.ProductName, dmi.SysVendor, dmi.BIOSVendor} {
		for _, v := range dmiVendors {
			if s != "" && strings.Contains(strings.ToLower(s), strings.ToLower(v.substr)) {
				return v.virt
			}
		}
	}
	// Hyper-V's DMI says "Microsoft Corporation", as do Surface laptops:
	// only the product "Virtual Machine" tells them apart.
	if strings.Contains(dmi.SysVendor, "Microsoft") && strings.Contains(dmi.ProductName, "Virtual Machine") {
		return "microsoft"
	}
	if hypervisorType == "xen" {
		return "xen"
	}
	switch {
	case cpu.Hypervisor:
		return "vm-other"
	case cpu.HasFlags:
		return "none"
	}
	return ""
}

// MemAvailable is the memory the kernel can give without swapping
// (MemAvailable of proc/meminfo), in bytes.
func (fs FS) MemAvailable() (int64, error) {
	m, err := fs.meminfo()
	if err != nil {
		return 0, err
	}
	if m.AvailableBytes == 0 {
		return 0, errors.New("proc/meminfo has no MemAvailable (kernel before 3.14)")
	}
	return int64(min(m.AvailableBytes, 1<<62)), nil
}
