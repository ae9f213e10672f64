package instance

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// Check tells, without starting anything, whether s could start on this
// host: the spec against the host (Validate), its port free, the engine's binaries, the
// server's account, directories the server can create and write, the
// block device under them when io_limit is set, and a cgroup controller
// for io_limit and memory_limit. Its errors are the *Error of the kind
// Start would fail with, so that a plan is refused before anything runs
// (`oltplab experiment run --dry-run`). It creates nothing: a directory
// that does not exist yet is judged by its nearest existing parent.
func Check(s Spec) error {
	host, err := LiveHost()
	if err != nil {
		return &Error{Kind: KindOther, Err: err}
	}
	if err := s.Validate(host); err != nil {
		return err
	}
	if err := checkPort(s); err != nil {
		return err
	}
	eng := engines[s.Engine]
	var acct *osAccount
	if eng.server() {
		if _, err := eng.locate(s.BinDir); err != nil {
			return err
		}
		if os.Geteuid() == 0 {
			if acct, err = lookupAccount(eng.osUser()); err != nil {
				return errorf(KindControl, "instance %s: oltplab runs as root and %s must not: it needs the unprivileged user %q (created by the engine's Debian package): %v",
					s.InstanceName(), s.Engine, eng.osUser(), err)
			}
		}
	}
	for _, d := range []struct{ field, dir string }{{"data_dir", s.DataDir}, {"wal_dir", s.WALDir}} {
		if d.dir == "" {
			continue
		}
		abs, err := filepath.Abs(d.dir)
		if err != nil {
			return errorf(KindDirectory, "%s %s: %v", d.field, d.dir, err)
		}
		existing, err := checkDir(d.field, abs, acct)
		if err != nil {
			return err
		}
		if s.IOLimit.IsZero() {
			continue
		}
		dev, err := sysstat.DeviceOf(existing)
		if err != nil {
			return errorf(KindDevice, "io_limit: cannot find the block device under %s %s: %v", d.field, abs, err)
		}
		if _, err := wholeDisk(dev); err != nil {
			return errorf(KindDevice, "io_limit: %s %s: %v", d.field, abs, err)
		}
	}
	if !eng.server() {
		return nil
	}
	if s.Latency != nil {
		if err := latency.Check(); err != nil {
			return errorf(KindControl, "instance %s: latency: %v", s.InstanceName(), err)
		}
	}
	var want []string
	if !s.IOLimit.IsZero() {
		want = append(want, ctlBlkio)
	}
	if s.MemoryLimit > 0 {
		want = append(want, ctlMemory)
	}
	if len(want) == 0 {
		return nil
	}
	hs, err := liveHierarchies()
	if err != nil {
		return errorf(KindControl, "cgroups: %v", err)
	}
	for _, w := range want {
		if err := controllerWritable(hs, w); err != nil {
			field := map[string]string{ctlBlkio: "io_limit", ctlMemory: "memory_limit"}[w]
			return errorf(KindControl, "%s needs a writable cgroup %s controller: %v", field, w, err)
		}
	}
	return nil
}

// checkDir checks that Start would take dir (claim.CheckTake: not a
// system directory, no link or directory another user could change on
// the way, new, empty or oltplab's own), and that dir, or the nearest
// parent that exists when dir does not, is a directory oltplab can write
// in and the server's account can reach. It returns the directory it
// judged.
func checkDir(field, dir string, acct *osAccount) (string, error) {
	d, err := claim.CheckTake(dir, claim.TakeOptions{Trust: trust(acct), Reuse: instanceReuse})
	if err != nil {
		return "", dirError(field, dir, err)
	}
	if err := unix.Access(d, unix.W_OK|unix.X_OK); err != nil {
		return "", errorf(KindDirectory, "%s %s: %s is not writable: %v", field, dir, d, err)
	}
	if isReadOnly(d) {
		return "", errorf(KindDirectory, "%s %s: %s is on a read-only file system", field, dir, d)
	}
	if acct != nil {
		if err := reachable(filepath.Join(d, "x"), acct); err != nil {
			return "", errorf(KindDirectory, "%s %s: %v", field, dir, err)
		}
	}
	return d, nil
}

// isReadOnly reports whether the file system holding dir is mounted
// read-only (root passes access(2) even there).
func isReadOnly(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Flags&unix.ST_RDONLY != 0
}

// controllerWritable reports whether a group could be made for the
// controller: in its v1 hierarchy, this process's group is writable; in
// v2, the root offers it and is writable.
func controllerWritable(hs []hierarchy, ctl string) error {
	if h, ok := findV1(hs, ctl); ok {
		return unix.Access(h.own, unix.W_OK)
	}
	for _, h := range hs {
		if h.v2 && h.controllers[v2Name[ctl]] {
			return unix.Access(h.mount, unix.W_OK)
		}
	}
	return errors.New("no cgroup hierarchy offers it")
}
