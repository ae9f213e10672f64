package instance

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/oltplab/oltplab/internal/sysstat"
)

// hierarchy is one mounted cgroup hierarchy and this process's place in it.
type hierarchy struct {
	v2          bool
	mount       string          // where it is mounted, e.g. /sys/fs/cgroup/blkio
	controllers map[string]bool // v1: bound to it; v2: offered by its root
	own         string          // this process's cgroup directory in it
}

// v1Controllers are the cgroup v1 controller names a mount's super options
// may list.
var v1Controllers = map[string]bool{
	"blkio": true, "cpu": true, "cpuacct": true, "cpuset": true, "memory": true, "devices": true,
	"freezer": true, "pids": true, "net_cls": true, "net_prio": true, "perf_event": true,
	"hugetlb": true, "rdma": true, "misc": true,
}

// procCgroup is one line of /proc/PID/cgroup: "ID:controllers:path".
type procCgroup struct {
	controllers []string // empty for the v2 hierarchy
	path        string
}

func parseProcCgroup(r io.Reader) ([]procCgroup, error) {
	var out []procCgroup
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("cgroup line %q: want ID:controllers:path", line)
		}
		var ctrls []string
		if parts[1] != "" {
			ctrls = strings.Split(parts[1], ",")
		}
		out = append(out, procCgroup{controllers: ctrls, path: parts[2]})
	}
	return out, sc.Err()
}

// hierarchies joins the cgroup mounts with this process's cgroups.
// v2Controllers reads a v2 root's cgroup.controllers.
func hierarchies(mounts []sysstat.Mount, cgs []procCgroup, v2Controllers func(mount string) string) []hierarchy {
	var out []hierarchy
	for _, m := range mounts {
		switch m.FSType {
		case "cgroup":
			h := hierarchy{mount: m.MountPoint, controllers: map[string]bool{}}
			for _, o := range strings.Split(m.SuperOptions, ",") {
				if v1Controllers[o] {
					h.controllers[o] = true
				}
			}
			if len(h.controllers) == 0 {
				continue // a named hierarchy (name=systemd) controls nothing
			}
			for _, c := range cgs {
				if sameSet(c.controllers, h.controllers) {
					h.own = ownDir(m, c.path)
				}
			}
			if h.own != "" {
				out = append(out, h)
			}
		case "cgroup2":
			h := hierarchy{v2: true, mount: m.MountPoint, controllers: map[string]bool{}}
			for _, c := range strings.Fields(v2Controllers(m.MountPoint)) {
				h.controllers[c] = true
			}
			for _, c := range cgs {
				if len(c.controllers) == 0 {
					h.own = ownDir(m, c.path)
				}
			}
			if h.own != "" {
				out = append(out, h)
			}
		}
	}
	return out
}

func sameSet(list []string, set map[string]bool) bool {
	n := 0
	for _, c := range list {
		if v1Controllers[c] {
			if !set[c] {
				return false
			}
			n++
		}
	}
	return n == len(set)
}

// ownDir is the directory of cgroup path under mount m, whose root may be
// a sub-tree (a container's view).
func ownDir(m sysstat.Mount, path string) string {
	rel := path
	if m.Root != "/" {
		if !under(path, m.Root) {
			return ""
		}
		rel = strings.TrimPrefix(path, m.Root)
	}
	return filepath.Join(m.MountPoint, rel)
}

func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// liveHierarchies reads the running host's cgroup hierarchies.
func liveHierarchies() ([]hierarchy, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	mounts, err := sysstat.ParseMountInfo(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	f, err = os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read own cgroups: %w", err)
	}
	cgs, err := parseProcCgroup(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read own cgroups: %w", err)
	}
	return hierarchies(mounts, cgs, func(m string) string {
		b, _ := os.ReadFile(filepath.Join(m, "cgroup.controllers"))
		return string(b)
	}), nil
}

// Controllers an instance asks for, by their v1 names.
const (
	ctlCPUSet  = "cpuset"
	ctlBlkio   = "blkio"
	ctlMemory  = "memory"
	ctlCPUAcct = "cpuacct"
)

// v2Name is the cgroup v2 controller for a v1 one; "" for accounting that
// every v2 group has without a controller (cpu.stat).
var v2Name = map[string]string{ctlCPUSet: "cpuset", ctlBlkio: "io", ctlMemory: "memory", ctlCPUAcct: ""}

// cgroupParent is the directory under which instances' groups are made.
const cgroupParent = "oltplab"

// cgroup is one instance's group in each hierarchy it uses.
type cgroup struct {
	v1    map[string]string // v1 controller → group directory
	v1dir []string          // the distinct v1 directories made, in order
	leave []string          // tasks files of this process's own v1 groups
	v2    string            // the v2 group directory, "" for none
	v2ctl map[string]bool   // controllers served by the v2 group
	v2fd  int               // open v2 directory for clone3, -1 for none
}

// newCgroup makes the group id for each wanted controller, in cgroup v1
// when the controller is bound there, else in v2 when its root offers it.
// why says, for each controller that could not be had, why not.
func newCgroup(hs []hierarchy, id string, want []string) (cg *cgroup, why map[string]string) {
	cg = &cgroup{v1: map[string]string{}, v2ctl: map[string]bool{}, v2fd: -1}
	why = map[string]string{}
	var v2want []string
	for _, w := range want {
		h, ok := findV1(hs, w)
		if !ok {
			v2want = append(v2want, w)
			continue
		}
		if dir, ok := cg.dirIn(h); ok {
			cg.v1[w] = dir
			continue
		}
		dir, err := makeV1(h, id)
		if err != nil {
			why[w] = fmt.Sprintf("cgroup v1 %s not writable: %v", w, err)
			continue
		}
		cg.v1[w], cg.v1dir = dir, append(cg.v1dir, dir)
		cg.leave = append(cg.leave, filepath.Join(h.own, "tasks"))
	}
	if len(v2want) == 0 {
		return cg, why
	}
	var h2 *hierarchy
	for i := range hs {
		if hs[i].v2 {
			h2 = &hs[i]
		}
	}
	var ctls []string
	for _, w := range v2want {
		switch {
		case h2 == nil:
			why[w] = fmt.Sprintf("no cgroup hierarchy offers %s", w)
		case v2Name[w] != "" && !h2.controllers[v2Name[w]]:
			why[w] = fmt.Sprintf("cgroup v2 at %s does not offer the %s controller", h2.mount, v2Name[w])
		default:
			ctls = append(ctls, w)
		}
	}
	if len(ctls) == 0 {
		return cg, why
	}
	dir, err := makeV2(*h2, id, ctls)
	if err != nil {
		for _, w := range ctls {
			why[w] = fmt.Sprintf("cgroup v2 not writable: %v", err)
		}
		return cg, why
	}
	cg.v2 = dir
	for _, w := range ctls {
		cg.v2ctl[w] = true
	}
	return cg, why
}

func findV1(hs []hierarchy, ctl string) (hierarchy, bool) {
	for _, h := range hs {
		if !h.v2 && h.controllers[ctl] {
			return h, true
		}
	}
	return hierarchy{}, false
}

// dirIn returns the group already made in h (co-mounted controllers).
func (cg *cgroup) dirIn(h hierarchy) (string, bool) {
	for _, d := range cg.v1dir {
		if under(d, h.mount) {
			return d, true
		}
	}
	return "", false
}

// makeV1 makes OWN/oltplab/ID in a v1 hierarchy. A cpuset group needs its
// CPUs and memory nodes before it can hold a task: the shared parent gets
// its own parent's.
func makeV1(h hierarchy, id string) (string, error) {
	return makeGroup(filepath.Join(h.own, cgroupParent), id, func(parent string) error {
		if !h.controllers[ctlCPUSet] {
			return nil
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if readTrim(filepath.Join(parent, f)) == "" {
				if err := writeFile(filepath.Join(parent, f), readTrim(filepath.Join(h.own, f))); err != nil {
					return err
				}
			}
		}
		return nil
	}, func(dir string) error {
		if !h.controllers[ctlCPUSet] {
			return nil
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if err := writeFile(filepath.Join(dir, f), readTrim(filepath.Join(filepath.Dir(dir), f))); err != nil {
				return err
			}
		}
		return nil
	})
}

// makeV2 makes MOUNT/oltplab/ID in the v2 hierarchy with ctls enabled.
// Groups with controllers may hold no process of their own in v2, so
// they hang from the root, not from this process's group.
func makeV2(h hierarchy, id string, ctls []string) (string, error) {
	var enable []string
	for _, c := range ctls {
		if v2Name[c] != "" {
			enable = append(enable, "+"+v2Name[c])
		}
	}
	return makeGroup(filepath.Join(h.mount, cgroupParent), id, func(parent string) error {
		for _, d := range []string{h.mount, parent} {
			if len(enable) == 0 {
				break
			}
			if err := writeFile(filepath.Join(d, "cgroup.subtree_control"), strings.Join(enable, " ")); err != nil {
				return err
			}
		}
		return nil
	}, func(string) error { return nil })
}

// makeGroup makes parent/id, preparing the shared parent and the new
// group. The parent is removed by the last instance that leaves it
// empty (cgroup.remove), so it may vanish between the two mkdirs: then
// it is made again.
func makeGroup(parent, id string, initParent, initGroup func(string) error) (string, error) {
	dir := filepath.Join(parent, id)
	for try := 0; ; try++ {
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if err := initParent(parent); err != nil {
			if try < 3 && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return "", err
		}
		sweepStale(parent)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if try < 3 && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return "", err
	}
	if err := initGroup(dir); err != nil {
		_ = removeGroupDir(dir)
		return "", err
	}
	return dir, nil
}

// groupID names an instance's cgroups and run directory:
// NAME.OWNERPID.RANDOM, so that several instances, and several oltplab
// processes, never share one, and a group whose owner died is found.
func groupID(name string) string {
	return fmt.Sprintf("%s.%d.%s", name, os.Getpid(), randomString(6))
}

// ownerOf is the oltplab process id in a groupID, 0 if none.
func ownerOf(id string) int {
	parts := strings.Split(id, ".")
	if len(parts) < 3 {
		return 0
	}
	pid, _ := strconv.Atoi(parts[len(parts)-2])
	return pid
}

// sweepStale removes the empty groups under parent whose oltplab process
// is gone (it was killed before it could remove them).
func sweepStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if pid := ownerOf(e.Name()); pid > 0 && !alive(pid) {
			dir := filepath.Join(parent, e.Name())
			if len(readPIDs(filepath.Join(dir, "cgroup.procs"))) == 0 {
				_ = removeGroupDir(dir)
			}
		}
	}
}

// placement is where the server starts: in every group made.
func (cg *cgroup) placement() placement {
	pl := placement{cgroupFD: cg.v2fd, leave: cg.leave}
	for _, d := range cg.v1dir {
		pl.join = append(pl.join, filepath.Join(d, "tasks"))
	}
	return pl
}

// open opens the v2 group for clone3.
func (cg *cgroup) open() error {
	if cg.v2 == "" || cg.v2fd >= 0 {
		return nil
	}
	fd, err := syscall.Open(cg.v2, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open cgroup %s: %w", cg.v2, err)
	}
	cg.v2fd = fd
	return nil
}

// dir is the group directory serving ctl and whether it is v2.
func (cg *cgroup) dir(ctl string) (string, bool, bool) {
	if d, ok := cg.v1[ctl]; ok {
		return d, false, true
	}
	if cg.v2ctl[ctl] {
		return cg.v2, true, true
	}
	return "", false, false
}

// setCPUs confines the group to cpus.
func (cg *cgroup) setCPUs(cpus CPUSet) error {
	d, _, ok := cg.dir(ctlCPUSet)
	if !ok {
		return errors.New("no cpuset group")
	}
	return writeFile(filepath.Join(d, "cpuset.cpus"), cpus.String())
}

// setIOLimit caps I/O on each device ("MAJ:MIN" of a whole disk).
func (cg *cgroup) setIOLimit(devs []string, l IOLimit) error {
	d, v2, ok := cg.dir(ctlBlkio)
	if !ok {
		return errors.New("no blkio/io group")
	}
	for _, dev := range devs {
		if v2 {
			var kv []string
			add := func(k string, v int64) {
				if v > 0 {
					kv = append(kv, fmt.Sprintf("%s=%d", k, v))
				}
			}
			add("riops", l.ReadIOPS)
			add("wiops", l.WriteIOPS)
			add("rbps", l.ReadBytesPerSec())
			add("wbps", l.WriteBytesPerSec())
			if err := writeFile(filepath.Join(d, "io.max"), dev+" "+strings.Join(kv, " ")); err != nil {
				return err
			}
			continue
		}
		for _, f := range []struct {
			file string
			v    int64
		}{
			{"blkio.throttle.read_iops_device", l.ReadIOPS},
			{"blkio.throttle.write_iops_device", l.WriteIOPS},
			{"blkio.throttle.read_bps_device", l.ReadBytesPerSec()},
			{"blkio.throttle.write_bps_device", l.WriteBytesPerSec()},
		} {
			if f.v > 0 {
				if err := writeFile(filepath.Join(d, f.file), fmt.Sprintf("%s %d", dev, f.v)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// setMemoryLimit caps the group's memory, page cache included.
func (cg *cgroup) setMemoryLimit(bytes int64) error {
	d, v2, ok := cg.dir(ctlMemory)
	if !ok {
		return errors.New("no memory group")
	}
	if v2 {
		return writeFile(filepath.Join(d, "memory.max"), strconv.FormatInt(bytes, 10))
	}
	return writeFile(filepath.Join(d, "memory.limit_in_bytes"), strconv.FormatInt(bytes, 10))
}

// cpuSeconds is the CPU time of every process that ever ran in the group.
func (cg *cgroup) cpuSeconds() (float64, error) {
	if d, ok := cg.v1[ctlCPUAcct]; ok {
		ns, err := strconv.ParseInt(readTrim(filepath.Join(d, "cpuacct.usage")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read %s/cpuacct.usage: %w", d, err)
		}
		return float64(ns) / 1e9, nil
	}
	if cg.v2ctl[ctlCPUAcct] {
		f, err := os.Open(filepath.Join(cg.v2, "cpu.stat"))
		if err != nil {
			return 0, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == "usage_usec" {
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("read %s/cpu.stat: %w", cg.v2, err)
				}
				return float64(us) / 1e6, nil
			}
		}
		return 0, fmt.Errorf("read %s/cpu.stat: no usage_usec", cg.v2)
	}
	return 0, errors.New("no CPU accounting group")
}

// killStragglers kills what is left in the instance's groups once its
// server is gone, and waits (up to 5 s) for them to go.
func (i *Instance) killStragglers() {
	if i.cg == nil {
		return
	}
	for try := 0; try < 50; try++ {
		left := 0
		for _, pid := range i.cg.procs() {
			// In v1 a thread of this process may be in a group for a
			// moment (cgroup.procs lists its process): never signal that.
			if pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// procs lists the processes in any of the group's directories.
func (cg *cgroup) procs() []int {
	var pids []int
	for _, d := range cg.dirs() {
		pids = append(pids, readPIDs(filepath.Join(d, "cgroup.procs"))...)
	}
	return pids
}

func (cg *cgroup) dirs() []string {
	out := append([]string(nil), cg.v1dir...)
	if cg.v2 != "" {
		out = append(out, cg.v2)
	}
	return out
}

// remove kills whatever is still in the group and removes its directories.
// A thread that forked into a group may take a moment to leave it.
func (cg *cgroup) remove() error {
	if cg == nil {
		return nil
	}
	if cg.v2fd >= 0 {
		syscall.Close(cg.v2fd)
		cg.v2fd = -1
	}
	for _, pid := range cg.procs() {
		// In v1 a thread of this process may still be in the group for
		// a moment (cgroup.procs lists its process): never signal that.
		if pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	var errs []error
	for _, d := range cg.dirs() {
		if err := removeGroupDir(d); err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			continue
		}
		// The shared parent goes with its last group, so that no empty
		// directory of oltplab's stays in a cgroup it does not own. (It
		// fails while another instance's group is in it.)
		_ = os.Remove(filepath.Dir(d))
	}
	return errors.Join(errs...)
}

// removeGroupDir removes an empty cgroup directory (a missing one is
// removed already). The kernel refuses with EBUSY while a thread that
// left the group, or a process that died in it, is still accounted
// there, which lasts a moment after the last process exits: then it
// retries, for up to 2.5 s; any other refusal is final at once. Every
// removal of one of oltplab's groups goes through it.
func removeGroupDir(d string) error {
	var err error
	for try := 0; try < 50; try++ {
		err = os.Remove(d)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

func readPIDs(file string) []int {
	var pids []int
	for _, f := range strings.Fields(readTrim(file)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func readTrim(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// writeFile writes a control file; the kernel takes each write whole.
func writeFile(file, v string) error {
	if err := os.WriteFile(file, []byte(v), 0o644); err != nil {
		return fmt.Errorf("write %q to %s: %w", v, file, err)
	}
	return nil
}
