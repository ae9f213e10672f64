package latency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/claim"
)

// TestPassThrough: what a database does to its files works through the
// layer and lands in the backing directory, which nothing else sees
// mounted.
func TestPassThrough(t *testing.T) {
	needRoot(t)
	d := takeDir(t, "data")
	dir := d.Path()
	if err := os.WriteFile(filepath.Join(dir, "before"), []byte("was there\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := mount(t, Settings{}, Dir{Role: "data", Dir: d})
	if got := mountedAnywhere(l.Mounts()[0].Source); len(got) != 0 {
		t.Errorf("the layer is mounted where other processes look: %v", got)
	}
	out := inside(t, l, -1, `cd `+dir+`
grep -q ' `+fsType+` `+sourcePrefix+`' /proc/self/mountinfo && echo mounted
cat before
echo hello > a && sync a
mkdir sub && echo x > sub/f && mv sub/f sub/g && ln sub/g hard && ln -s sub/g soft
cat soft
dd if=/dev/zero of=direct bs=4096 count=64 oflag=direct status=none
dd if=direct of=/dev/null bs=4096 iflag=direct status=none && echo direct ok
dd if=/dev/zero of=odd bs=1000 count=3 oflag=direct status=none && echo unaligned ok
fallocate -l 1M alloc && truncate -s 100 alloc && stat -c %s alloc
python3 -c "
import mmap, os
f = open('map', 'w+b'); f.write(b'x' * 8192); f.flush()
m = mmap.mmap(f.fileno(), 8192); m[0:5] = b'hello'; m.flush(); os.fsync(f.fileno()); print('mmap ok')
"
rm hard && rmdir sub 2>/dev/null || echo rmdir refused
`)
	for _, want := range []string{"mounted", "was there", "x", "direct ok", "unaligned ok", "100", "mmap ok", "rmdir refused"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("inside the layer: no %q in:\n%s", want, out)
		}
	}
	for name, want := range map[string]string{"a": "hello\n", "sub/g": "x\n"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("backing %s: got %q, %v; want %q", name, b, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "direct")); err != nil || fi.Size() != 64*4096 {
		t.Errorf("backing direct: %v, %v", fi, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "map")); err != nil || string(b[:5]) != "hello" {
		t.Errorf("backing map: %q, %v", b[:min(5, len(b))], err)
	}
	s, err := l.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := s.Mounts["data"]
	for _, k := range []Kind{Read, Write, Fsync, Meta} {
		if n := m.Kinds[k].Seen.TotalCount(); n == 0 {
			t.Errorf("no %s recorded", k)
		}
	}
}

// TestAsCaller: what the server's account creates through the layer is
// its own, and what it may not touch it cannot touch through the layer
// either, though the layer runs as root.
func TestAsCaller(t *testing.T) {
	needRoot(t)
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(u.Uid)
	d := takeDir(t, "data")
	dir := d.Path()
	own := filepath.Join(dir, "own")
	if err := os.Mkdir(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(own, uid, uid); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "roots"), []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := mount(t, Settings{}, Dir{Role: "data", Dir: d})
	out := inside(t, l, uid, `cd `+own+`
echo mine > f && mkdir d && ln -s f l
cat ../roots 2>/dev/null || echo read refused
echo x > ../new 2>/dev/null || echo create refused
rm ../roots 2>/dev/null || echo unlink refused
`)
	for _, want := range []string{"read refused", "create refused", "unlink refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("as %s through the layer: no %q in:\n%s", u.Username, want, out)
		}
	}
	for _, name := range []string{"f", "d", "l"} {
		fi, err := os.Lstat(filepath.Join(own, name))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid || int(st.Gid) != uid {
			t.Errorf("%s made through the layer by uid %d belongs to %d:%d", name, uid, st.Uid, st.Gid)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "roots")); err != nil {
		t.Errorf("root's file: %v", err)
	}
}

// TestRefusesUnmarked: the layer never mounts over a directory oltplab
// did not create or take, even one handed to it as a claimed directory
// to write in; nothing is mounted and the directory is as it was.
func TestRefusesUnmarked(t *testing.T) {
	needRoot(t)
	root := t.TempDir()
	dir := filepath.Join(root, "theirs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data"), []byte("someone's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := claim.Within(dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l, err := Mount(context.Background(), []Dir{{Role: "data", Dir: d}}, Options{})
	if err == nil {
		l.Close(context.Background())
		t.Fatal("mounted over a directory oltplab did not create")
	}
	var le *Error
	if !errors.As(err, &le) || !le.Refused {
		t.Errorf("got %v, want a refusal", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans lines: %q", err)
	}
	if got := mountedAnywhere(sourcePrefix + strconv.Itoa(os.Getpid()) + ":"); len(got) != 0 {
		t.Errorf("mounted: %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "data")); err != nil || string(b) != "someone's\n" {
		t.Errorf("their file: %q, %v", b, err)
	}
}

// TestKilledLeavesNothingMounted: an oltplab killed with SIGKILL while
// its layer serves a process working inside it leaves no mount in any
// namespace of the host, no process of the layer's, and the backing data
// where it was.
func TestKilledLeavesNothingMounted(t *testing.T) {
	needRoot(t)
	base, err := os.MkdirTemp("", "oltplab-latency-kill-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "data")
	h, kill := startHelper(t, dir)
	kill()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left []string
		left = append(left, mountedAnywhere(h.Source)...)
		for _, pid := range []int{h.Daemon, h.Inside} {
			if syscall.Kill(pid, 0) == nil {
				left = append(left, fmt.Sprintf("process %d runs", pid))
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGKILL of oltplab: %s", strings.Join(left, "; "))
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, err := os.ReadFile(filepath.Join(dir, "inside"))
	if err != nil || string(b) != "written through the layer\n" {
		t.Errorf("the backing data: %q, %v", b, err)
	}
	if _, ok, err := markOf(dir); err != nil || !ok {
		t.Errorf("the backing directory lost its mark: %v", err)
	}
}

// TestRemoveLeftovers: a process that escaped the servers' fate keeps a
// killed oltplab's mount in its namespace; RemoveLeftovers finds it by
// its dead owner and unmounts it there, and the backing data stays.
func TestRemoveLeftovers(t *testing.T) {
	needRoot(t)
	base, err := os.MkdirTemp("", "oltplab-latency-leftover-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "data")
	pidFile := filepath.Join(base, "escaped.pid")
	t.Setenv(helperEnv+"_ESCAPE", pidFile)
	h, kill := startHelper(t, dir)
	kill()
	var escaped int
	for range 100 {
		if b, err := os.ReadFile(pidFile); err == nil {
			escaped, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if escaped == 0 {
		t.Fatal("the escaping process did not start")
	}
	defer syscall.Kill(escaped, syscall.SIGKILL)
	// The servers' part goes; the escaped process keeps the mount.
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(h.Inside, 0) == nil || syscall.Kill(h.Daemon, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the helper's processes did not end")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ls, err := LeftoverMounts()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range ls {
		if l.Source == h.Source {
			found = slices.Contains(l.PIDs, escaped)
		}
	}
	if !found {
		t.Fatalf("the mount held by process %d is not listed: %v", escaped, ls)
	}
	removed, err := RemoveLeftovers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range removed {
		if l.Err != nil {
			t.Errorf("%v", l)
		}
	}
	if got := mountedAnywhere(h.Source); len(got) != 0 {
		t.Errorf("still mounted: %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "inside")); err != nil || string(b) != "written through the layer\n" {
		t.Errorf("the backing data: %q, %v", b, err)
	}
}

// startHelper starts the helper process on dir and returns what it
// made, and how to kill it with SIGKILL (and wait for it).
func startHelper(t *testing.T, dir string) (helperLayer, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var h helperLayer
	stuck := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	err = json.NewDecoder(out).Decode(&h)
	stuck.Stop()
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %v", err)
	}
	if h.Error != "" {
		cmd.Wait()
		t.Fatalf("helper: %s", h.Error)
	}
	if got := mountedAnywhere(h.Source); len(got) == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the helper's layer is not mounted anywhere: the test would prove nothing")
	}
	kill := func() {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
	}
	return h, kill
}

func markOf(dir string) (claim.Mark, bool, error) {
	d, err := claim.Within(dir, nil, false)
	if err != nil {
		return claim.Mark{}, false, err
	}
	defer d.Close()
	return d.Mark()
}
