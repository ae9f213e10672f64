package latency

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A layer's mount exists only in its private namespace, which lives as
// long as a process in it does. When oltplab is killed its servers die
// with it and the namespace goes; a process started inside that outlived
// them (a server's child that ignored its parent's death) would keep the
// mount, its FUSE connection aborted (every I/O fails). Its source names
// the oltplab process that mounted it; LeftoverMounts finds such mounts
// whose process is gone, and RemoveLeftovers unmounts them (lazily:
// whoever still holds them gets errors, as before), never removing
// anything of the backing directory.

// LeftoverMount is a layer's mount whose oltplab is gone.
type LeftoverMount struct {
	Path   string `json:"path"`
	Source string `json:"source"`
	// PIDs are processes that still see it (in one namespace).
	PIDs []int `json:"pids"`
	// Err says why it could not be unmounted (RemoveLeftovers).
	Err error `json:"-"`
}

func (m LeftoverMount) String() string {
	s := fmt.Sprintf("latency layer mount %s (%s), held by process %s", m.Path, m.Source, joinInts(m.PIDs))
	if m.Err != nil {
		return s + ": not unmounted: " + m.Err.Error()
	}
	return s
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// mountEntry is one line of a mountinfo file that matters here.
type mountEntry struct {
	point, fsType, source string
}

// parseMountinfo reads /proc/PID/mountinfo: the mount point (field 5)
// and, after the "-" separator, the type and the source. Octal escapes
// (\040 for a space) are decoded.
func parseMountinfo(r io.Reader) ([]mountEntry, error) {
	var out []mountEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 5 || len(f) < sep+3 {
			continue
		}
		out = append(out, mountEntry{point: unescape(f[4]), fsType: f[sep+1], source: unescape(f[sep+2])})
	}
	return out, sc.Err()
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sourceOwner reads the oltplab process a mount source names.
func sourceOwner(source string) (pid int, start uint64, ok bool) {
	rest, found := strings.CutPrefix(source, sourcePrefix)
	if !found {
		return 0, 0, false
	}
	f := strings.SplitN(rest, ":", 3)
	if len(f) != 3 {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(f[0])
	s, err2 := strconv.ParseUint(f[1], 10, 64)
	return p, s, err1 == nil && err2 == nil && p > 0
}

// ownerGone reports whether the oltplab process that made a mount with
// this source has ended (a process of the same pid that started at
// another time is another process).
func ownerGone(source string) bool {
	pid, start, ok := sourceOwner(source)
	if !ok {
		return false
	}
	now, err := processStart(pid)
	return err != nil || now != start
}

// LeftoverMounts lists the layers' mounts, in any namespace of this
// host, whose oltplab process is gone.
func LeftoverMounts() ([]LeftoverMount, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	byKey := map[string]*LeftoverMount{}
	var keys []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ns, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "mnt"))
		if err != nil {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", e.Name(), "mountinfo"))
		if err != nil {
			continue
		}
		ms, _ := parseMountinfo(f)
		f.Close()
		for _, m := range ms {
			if m.fsType != fsType || !strings.HasPrefix(m.source, sourcePrefix) || !ownerGone(m.source) {
				continue
			}
			key := ns + " " + m.point
			l, ok := byKey[key]
			if !ok {
				l = &LeftoverMount{Path: m.point, Source: m.source}
				byKey[key] = l
				keys = append(keys, key)
			}
			l.PIDs = append(l.PIDs, pid)
		}
	}
	out := make([]LeftoverMount, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out, nil
}

// RemoveLeftovers unmounts (lazily) every leftover mount of a layer,
// inside the namespace that holds it, and returns them; each one's Err
// says why it stayed. Nothing of the backing directories is touched.
func RemoveLeftovers() ([]LeftoverMount, error) {
	ls, err := LeftoverMounts()
	if err != nil {
		return nil, err
	}
	for i := range ls {
		ls[i].Err = detach(ls[i])
	}
	return ls, nil
}

// detach unmounts m lazily in the namespace of the first of its
// processes that is still there.
func detach(m LeftoverMount) error {
	var last error
	for _, pid := range m.PIDs {
		nsfd, err := unix.Open(filepath.Join("/proc", strconv.Itoa(pid), "ns", "mnt"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			last = err
			continue
		}
		err = onLockedThread(func() error {
			if err := enterNamespace(nsfd); err != nil {
				return err
			}
			return unix.Unmount(m.Path, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
		})
		unix.Close(nsfd)
		if err == nil || errors.Is(err, unix.EINVAL) {
			return nil // unmounted, or by now no longer mounted
		}
		last = err
	}
	return last
}
