package instance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// toolRunner runs an engine's client programs (pg_basebackup, pg_dump,
// pg_restore, mariadb-backup, cp, sync) to completion, the way a server
// runs: as the server's account when oltplab runs as root, at a
// placement (an instance's cgroups and CPUs, or a group of the backup's
// own), in a process group of its own, killed by the kernel when
// oltplab dies (Pdeathsig), and killed with every process it forked
// when its context ends.
type toolRunner struct {
	acct    *osAccount // nil: oltplab's own user
	pl      placement
	binDir  string // first on PATH
	homeDir string // private: HOME, TMPDIR and the password files
}

// outputTail keeps the last bytes a tool wrote, for its error message.
type outputTail struct {
	mu  sync.Mutex
	buf []byte
}

const outputTailBytes = 16 << 10

func (t *outputTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - outputTailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// telling is the most telling line of the output: the last one naming an
// error, else the last one.
func (t *outputTail) telling() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	for j := len(lines) - 1; j >= 0; j-- {
		l := strings.ToLower(lines[j])
		for _, w := range []string{"error", "fatal", "failed", "cannot", "could not", "no space"} {
			if strings.Contains(l, w) {
				return strings.TrimSpace(lines[j])
			}
		}
	}
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return last
	}
	return "(no output)"
}

// run runs bin with args and waits for it. A tool that fails returns an
// error naming what it did, its exit status and its most telling output
// line; when ctx ends the tool and everything it forked are killed and
// ctx's error is returned.
func (r *toolRunner) run(ctx context.Context, what, bin string, args []string, env ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = r.homeDir
	cmd.Env = append([]string{
		"PATH=" + r.binDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LANG=C.UTF-8", "HOME=" + r.homeDir, "TMPDIR=" + r.homeDir,
	}, env...)
	if tz := os.Getenv("TZ"); tz != "" {
		cmd.Env = append(cmd.Env, "TZ="+tz)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: r.acct.credential()}
	out := &outputTail{}
	cmd.Stdout, cmd.Stderr = out, out
	c, err := startChild(cmd, r.pl)
	if err != nil {
		return fmt.Errorf("%s: start %s: %w", what, filepath.Base(bin), err)
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		killTree(c)
		return ctx.Err()
	}
	if c.err != nil {
		return fmt.Errorf("%s: %s failed (%v): %s", what, filepath.Base(bin), c.err, out.telling())
	}
	return nil
}

// killTree kills a running child, its process group (pg_dump -j and
// pg_basebackup fork workers into it) and every process below it that
// left the group, and waits for the child.
func killTree(c *child) {
	tree := descendants(c.pid())
	_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
	c.signal(syscall.SIGKILL)
	for _, q := range tree {
		if running(q) {
			_ = syscall.Kill(q.PID, syscall.SIGKILL)
		}
	}
	<-c.done
}

// writePrivate writes a file only the tool's account may read.
func (r *toolRunner) writePrivate(name, content string) (string, error) {
	return writeOwnFile(r.homeDir, name, content, r.acct)
}

// syncTree makes every file and directory below root durable: fsync,
// issued by sync(1) at the tool's placement, so that the writes it forces
// out count against the same cgroup I/O caps as the tool that wrote them
// (a cgroup v1 throttle sees only the writes a process issues itself).
func (r *toolRunner) syncTree(ctx context.Context, root string) error {
	bin := findBinary("sync", "/usr/bin", "/bin")
	if bin == "" {
		return errorf(KindBinary, "sync not found in /usr/bin, /bin or PATH: install the Debian package coreutils")
	}
	var paths []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() || d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sync %s: %w", root, err)
	}
	// Deepest first, so that each directory is synced after its entries.
	for i, j := 0, len(paths)-1; i < j; i, j = i+1, j-1 {
		paths[i], paths[j] = paths[j], paths[i]
	}
	const batch = 256
	for len(paths) > 0 {
		n := min(batch, len(paths))
		if err := r.run(ctx, "sync "+root, bin, append([]string{"--"}, paths[:n]...)); err != nil {
			return err
		}
		paths = paths[n:]
	}
	return nil
}

// treeSize is the bytes and regular files below root.
func treeSize(root string) (bytes int64, files int, err error) {
	err = filepath.WalkDir(root, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			bytes += fi.Size()
			files++
		}
		return nil
	})
	return bytes, files, err
}
