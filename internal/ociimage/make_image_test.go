package ociimage

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/testenv"
)

// TestMakeImage builds the image as a user does (`make image`, into a
// temporary directory), unpacks its OCI layout into a root file system,
// checks that the image's user is not root, and runs the image's
// entrypoint with `version` in that root: chrooted, as the image's user,
// in its working directory, with its environment, when the test runs as
// root; the unpacked binary directly otherwise. The output must name the
// version the image was built as.
func TestMakeImage(t *testing.T) {
	testenv.Require(t, testenv.Long, testenv.Subprocess)
	makePath, err := exec.LookPath("make")
	if err != nil {
		testenv.Unavailable(t, testenv.Subprocess, "make is not installed (Debian package make)")
	}
	root := moduleRoot(t)
	tmp := t.TempDir()
	version := "imagetest-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	out := filepath.Join(tmp, "image")
	cmd := exec.CommandContext(t.Context(), makePath, "-s", "-C", root, "image", "IMAGE_DIR="+out, "VERSION="+version)
	cmd.Env = withoutMake(os.Environ())
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, b)
	} else {
		t.Logf("make image:\n%s", b)
	}

	img := readLayout(t, filepath.Join(out, "oci"))
	c := img.config.Config
	if img.ref != version {
		t.Errorf("the layout's image is named %q, want %q", img.ref, version)
	}
	if got := c.Labels["org.opencontainers.image.version"]; got != version {
		t.Errorf("version label %q, want %q", got, version)
	}
	rootfs := filepath.Join(tmp, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	extract(t, rootfs, img.layers)
	uid, gid := imageUser(t, rootfs, c.User)
	if uid == 0 {
		t.Fatalf("the image runs as %q: root", c.User)
	}
	if len(c.Entrypoint) == 0 {
		t.Fatal("the image has no entrypoint")
	}
	entry := c.Entrypoint[0]
	bin, err := os.ReadFile(filepath.Join(rootfs, entry))
	if err != nil {
		t.Fatalf("the entrypoint %s is not in the image: %v", entry, err)
	}
	if err := checkStatic(bin, img.config.Architecture); err != nil {
		t.Fatalf("the entrypoint %s: %v", entry, err)
	}

	args := append(append(append([]string{}, c.Entrypoint[1:]...), c.Cmd...), "version")
	var run *exec.Cmd
	if os.Geteuid() == 0 {
		run = exec.CommandContext(t.Context(), entry, args...)
		run.Dir = c.WorkingDir
		if run.Dir == "" {
			run.Dir = "/"
		}
		run.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs,
			Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	} else {
		t.Logf("not root: running %s outside a chroot, as this user", entry)
		run = exec.CommandContext(t.Context(), filepath.Join(rootfs, entry), args...)
	}
	run.Env = c.Env
	var stderr bytes.Buffer
	run.Stderr = &stderr
	got, err := run.Output()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", entry, err, stderr.Bytes())
	}
	if want := "oltplab " + version; !strings.HasPrefix(string(got), want+"\n") && !strings.HasPrefix(string(got), want+" (") {
		t.Fatalf("%s version printed %q, want %q", entry, got, want)
	}
}

// imageUser resolves the config's User (UID, UID:GID or a name in the
// image's /etc/passwd) to numbers, as a runtime does.
func imageUser(t *testing.T, rootfs, user string) (uid, gid int) {
	t.Helper()
	if user == "" {
		return 0, 0
	}
	u, g, hasGroup := strings.Cut(user, ":")
	f, err := os.Open(filepath.Join(rootfs, "etc", "passwd"))
	if err != nil {
		t.Fatalf("the image has no /etc/passwd: %v", err)
	}
	defer f.Close()
	uid, gid = -1, -1
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Split(s.Text(), ":")
		if len(fields) < 7 {
			continue
		}
		if fields[0] == u || fields[2] == u {
			uid, _ = strconv.Atoi(fields[2])
			gid, _ = strconv.Atoi(fields[3])
		}
	}
	if uid < 0 {
		t.Fatalf("the image's user %q is not in its /etc/passwd", user)
	}
	if hasGroup {
		if gid, err = strconv.Atoi(g); err != nil {
			t.Fatalf("the image's group %q: want a number", g)
		}
	}
	return uid, gid
}

// withoutMake drops an enclosing make's variables (make test runs the
// tests), so that the nested make starts afresh.
func withoutMake(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES":
			continue
		}
		out = append(out, kv)
	}
	return out
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal(fmt.Errorf("no go.mod above %s", dir))
		}
		dir = parent
	}
}
