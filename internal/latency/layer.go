package latency

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/oltplab/oltplab/internal/claim"
)

// fsType is the type of the layer's mounts ("fuse." and the subtype),
// and sourcePrefix begins their source: "oltplab-latency:PID:START:ROLE"
// names the oltplab process that mounted it (its pid and start time), so
// that a later oltplab knows a mount whose process is gone
// (RemoveLeftovers).
const (
	fsType       = "fuse.oltplab"
	sourcePrefix = "oltplab-latency:"
)

// Tunables of the FUSE connection, recorded in the description.
const (
	// maxBackground is how many background requests (writeback,
	// readahead, asynchronous direct I/O) the kernel has at the layer at
	// once; the default of 12 would queue them before the delay.
	maxBackground = 256
	// maxWrite is the largest READ or WRITE request: one I/O of the
	// emulated device.
	maxWrite = 128 << 10
	// entryTimeout is how long the kernel trusts names and attributes.
	entryTimeout = time.Second
	// readyTimeout bounds the daemon's start.
	readyTimeout = 30 * time.Second
	// stopTimeout bounds the daemon's end after the unmounts.
	stopTimeout = 10 * time.Second
	// daemonNice is the layer process's nice value.
	daemonNice = -10
)

// Dir is a directory to put on the layer: Dir, held open by the caller
// (internal/claim took it and marked it as oltplab's), becomes both the
// mount point, in the layer's namespace, and the backing directory
// everywhere else. Role names it ("data", "wal").
type Dir struct {
	Role string
	Dir  *claim.Dir
}

// Options are how a layer is mounted.
type Options struct {
	Settings Settings
	// Seed is the delays' random stream; 0 draws one (recorded).
	Seed uint64
	// Log receives the daemon's diagnostics.
	Log *slog.Logger
}

// Layer is a running latency layer: its mounts in a private mount
// namespace and the process that serves them.
type Layer struct {
	settings Settings
	seed     uint64
	log      *slog.Logger
	nsfd     int
	mounts   []MountInfo
	daemon   *Child
	pid      int
	started  time.Time

	mu     sync.Mutex // the control socket: one request at a time
	ctl    net.Conn
	dec    *json.Decoder
	closed bool
	final  *Snapshot
	err    error
}

// MountInfo describes one of the layer's mounts.
type MountInfo struct {
	Role string `json:"role"`
	Path string `json:"path"` // mount point and backing directory
	// Source is the mount's source in the namespace's mount table.
	Source string `json:"source"`
}

// Error is a layer that could not be mounted or used; its message is one
// line. Refused marks a directory the layer will not mount over.
type Error struct {
	Refused bool
	Err     error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func refuse(format string, args ...any) error {
	return &Error{Refused: true, Err: fmt.Errorf(format, args...)}
}

func failed(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}

// Check tells, changing nothing, whether this process could mount a
// layer: as root, with /dev/fuse.
func Check() error {
	if os.Geteuid() != 0 {
		return failed("the latency layer mounts a FUSE file system of oltplab's own: run oltplab as root")
	}
	fd, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return failed("the latency layer needs FUSE: /dev/fuse: %v (load the fuse module)", err)
	}
	unix.Close(fd)
	return nil
}

// Mount puts dirs on a new layer with o's settings and returns once the
// layer serves them. Each directory must carry oltplab's mark (the layer
// never mounts over a directory oltplab did not create or take); its
// content stays where it is, in the directory, and nothing of it is ever
// removed by the layer. On error nothing is mounted and no process is
// left.
func Mount(ctx context.Context, dirs []Dir, o Options) (_ *Layer, err error) {
	if err := o.Settings.Validate(); err != nil {
		return nil, failed("%v", err)
	}
	if len(dirs) == 0 {
		return nil, failed("latency layer: no directory to put on it")
	}
	if err := Check(); err != nil {
		return nil, err
	}
	seed := o.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	lg := o.Log
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	l := &Layer{settings: o.Settings, seed: seed, log: lg, nsfd: -1}

	// The backing directories, held as descriptors for the daemon.
	type target struct {
		role, path string
		root       int // O_PATH of the backing directory
		st         unix.Stat_t
		fuse       int
	}
	var ts []*target
	defer func() {
		for _, t := range ts {
			if t.root >= 0 {
				unix.Close(t.root)
			}
			if t.fuse >= 0 {
				unix.Close(t.fuse)
			}
		}
	}()
	for _, d := range dirs {
		_, ok, merr := d.Dir.Mark()
		if merr != nil || !ok {
			why := "it has no mark"
			if merr != nil {
				why = merr.Error()
			}
			return nil, refuse("%s %s: the latency layer mounts only over a directory oltplab created or took (%s)", d.Role, d.Dir.Path(), why)
		}
		fd, err := d.Dir.OpenPath()
		if err != nil {
			return nil, failed("%s %s: %v", d.Role, d.Dir.Path(), err)
		}
		t := &target{role: d.Role, path: d.Dir.Path(), root: fd, fuse: -1}
		ts = append(ts, t)
		if err := unix.Fstat(fd, &t.st); err != nil {
			return nil, failed("%s %s: %v", d.Role, t.path, err)
		}
	}
	start, err := processStart(os.Getpid())
	if err != nil {
		return nil, failed("latency layer: %v", err)
	}

	// The namespace and the mounts, on a thread of their own. Should
	// anything fail there, the namespace goes with the thread.
	err = onLockedThread(func() error {
		if err := newNamespace(); err != nil {
			return err
		}
		for _, t := range ts {
			fd, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("open /dev/fuse: %w", err)
			}
			t.fuse = fd
			source := fmt.Sprintf("%s%d:%d:%s", sourcePrefix, os.Getpid(), start, t.role)
			if err := mountOver(t.path, &t.st, fd, source); err != nil {
				return fmt.Errorf("%s %s: %w", t.role, t.path, err)
			}
			l.mounts = append(l.mounts, MountInfo{Role: t.role, Path: t.path, Source: source})
		}
		ns, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("hold the private mount namespace: %w", err)
		}
		l.nsfd = ns
		return nil
	})
	if err != nil {
		if l.nsfd >= 0 {
			unix.Close(l.nsfd)
		}
		return nil, failed("latency layer: %v", err)
	}
	defer func() {
		if err != nil {
			l.abandon()
		}
	}()

	// The daemon.
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, failed("latency layer: control socket: %v", err)
	}
	mine, theirs := os.NewFile(uintptr(pair[0]), "control"), os.NewFile(uintptr(pair[1]), "control")
	defer theirs.Close()
	conn, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, failed("latency layer: control socket: %v", err)
	}
	l.ctl, l.dec = conn, json.NewDecoder(bufio.NewReader(conn))
	files := []*os.File{theirs}
	var roles []string
	for _, t := range ts {
		// The files own the descriptors from here on.
		files = append(files, os.NewFile(uintptr(t.fuse), "fuse"), os.NewFile(uintptr(t.root), "backing"))
		t.fuse, t.root = -1, -1
		roles = append(roles, t.role)
	}
	defer func() {
		for _, f := range files[1:] {
			f.Close()
		}
	}()
	stderr, err := daemonLog(lg)
	if err != nil {
		return nil, failed("latency layer: %v", err)
	}
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{daemonName}, Env: []string{}, Dir: "/",
		ExtraFiles: files, Stderr: stderr,
		// Its own process group: a Ctrl-C at the terminal goes to
		// oltplab, which stops the server before the layer.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}}
	l.daemon, err = startLocked(cmd, func() error {
		// The layer stands for a device, whose latency the host's CPU
		// load does not change: its process (every thread of it inherits
		// this thread's) runs at a higher priority than the servers it
		// serves, so a delay that ends is answered at once. Its CPU time,
		// a few microseconds per request, is recorded.
		return unix.Setpriority(unix.PRIO_PROCESS, 0, daemonNice)
	})
	stderr.Close()
	if err != nil {
		return nil, failed("latency layer: start its process: %v", err)
	}
	l.pid = cmd.Process.Pid
	cfg := daemonConfig{Settings: o.Settings.String(), Seed: seed, Roles: roles, Writeback: true,
		MaxBackground: maxBackground, MaxWrite: maxWrite, EntryTimeout: entryTimeout}
	if err := l.hello(ctx, cfg); err != nil {
		return nil, err
	}
	l.started = time.Now()
	return l, nil
}

// mountOver mounts the FUSE connection fuseFD over the directory at path
// in the calling thread's (new) namespace, which must be the directory st
// describes: resolved again here through no link, then mounted through
// its descriptor.
func mountOver(path string, st *unix.Stat_t, fuseFD int, source string) error {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return fmt.Errorf("open the mount point: %w", err)
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return err
	}
	if now.Dev != st.Dev || now.Ino != st.Ino {
		return errors.New("the directory changed while oltplab mounted the layer over it: try again, and check who else writes there")
	}
	opts := fmt.Sprintf("fd=%d,rootmode=%o,user_id=0,group_id=0,allow_other,default_permissions,max_read=%d",
		fuseFD, st.Mode&unix.S_IFMT, maxWrite)
	if err := unix.Mount(source, "/proc/thread-self/fd/"+strconv.Itoa(fd), fsType, unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	return nil
}

// daemonLog is the write end of a pipe whose lines go to lg.
func daemonLog(lg *slog.Logger) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lg.Warn("latency layer: " + sc.Text())
		}
	}()
	return w, nil
}

// hello sends the daemon its configuration and waits until it serves.
func (l *Layer) hello(ctx context.Context, cfg daemonConfig) error {
	deadline := time.Now().Add(readyTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = l.ctl.SetDeadline(deadline)
	defer l.ctl.SetDeadline(time.Time{})
	stop := context.AfterFunc(ctx, func() { _ = l.ctl.SetDeadline(time.Now()) })
	defer stop()
	if err := json.NewEncoder(l.ctl).Encode(cfg); err != nil {
		return failed("latency layer: configure its process: %v", err)
	}
	var r reply
	if err := l.dec.Decode(&r); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return failed("latency layer: its process did not start serving (%v): is this oltplab's own executable?", err)
	}
	if r.Error != "" || !r.Ready {
		return failed("latency layer: %s", r.Error)
	}
	return nil
}

// abandon ends a layer that failed to start: its process, its mounts.
func (l *Layer) abandon() {
	if l.ctl != nil {
		l.ctl.Close()
	}
	if l.daemon != nil {
		_ = l.daemon.cmd.Process.Kill()
		<-l.daemon.done
	}
	l.unmountAll()
	if l.nsfd >= 0 {
		unix.Close(l.nsfd)
		l.nsfd = -1
	}
}

// Namespace is the descriptor of the layer's mount namespace, for
// EnterNamespace. It is valid until Close.
func (l *Layer) Namespace() int { return l.nsfd }

// Mounts are the layer's mounts.
func (l *Layer) Mounts() []MountInfo { return l.mounts }

// Settings are the layer's settings.
func (l *Layer) Settings() Settings { return l.settings }

// PID is the layer's process.
func (l *Layer) PID() int { return l.pid }

// Done is closed when the layer's process has exited (after Close, or
// on its own: then every I/O on the layer fails).
func (l *Layer) Done() <-chan struct{} { return l.daemon.done }

// Snapshot reads the layer's figures so far (cumulative). After Close it
// returns the last ones, taken before the unmount.
func (l *Layer) Snapshot(ctx context.Context) (Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		if l.final != nil {
			return *l.final, nil
		}
		return Snapshot{}, failed("latency layer: closed")
	}
	return l.snapshot(ctx)
}

func (l *Layer) snapshot(ctx context.Context) (Snapshot, error) {
	stop := context.AfterFunc(ctx, func() { _ = l.ctl.SetDeadline(time.Now()) })
	defer stop()
	_ = l.ctl.SetDeadline(time.Now().Add(readyTimeout))
	defer l.ctl.SetDeadline(time.Time{})
	if err := json.NewEncoder(l.ctl).Encode(request{Op: "snapshot"}); err != nil {
		return Snapshot{}, failed("latency layer: ask for its figures: %v", err)
	}
	var r reply
	if err := l.dec.Decode(&r); err != nil {
		return Snapshot{}, failed("latency layer: read its figures: %v", err)
	}
	if r.Error != "" || r.Snapshot == nil {
		return Snapshot{}, failed("latency layer: its figures: %s", r.Error)
	}
	s := Snapshot{At: r.Snapshot.At, CPUSeconds: r.Snapshot.CPUSeconds, Mounts: map[string]*MountFigures{}}
	for role, ks := range r.Snapshot.Mounts {
		m := &MountFigures{}
		for k, w := range ks {
			seen, err1 := hdrhistogram.Decode(w.Seen)
			own, err2 := hdrhistogram.Decode(w.Own)
			if err := errors.Join(err1, err2); err != nil {
				return Snapshot{}, failed("latency layer: decode its %s %s histogram: %v", role, Kind(k), err)
			}
			m.Kinds[k] = KindFigures{Seen: seen, Own: own, Delayed: time.Duration(w.Delayed), Errors: w.Errors}
		}
		s.Mounts[role] = m
	}
	return s, nil
}

// Close takes the layer's last figures, unmounts it (the kernel first
// writes the server's dirty pages through it), lets its process go and
// releases the namespace. The servers using it must have stopped. It is
// idempotent; later calls return the first one's result.
func (l *Layer) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	l.closed = true
	if s, err := l.snapshot(ctx); err == nil {
		l.final = &s
	} else {
		l.log.Warn("latency layer: last figures", "err", err)
	}
	errs := []error{l.unmountAll()}
	l.ctl.Close()
	select {
	case <-l.daemon.done:
	case <-time.After(stopTimeout):
		_ = l.daemon.cmd.Process.Kill()
		<-l.daemon.done
		errs = append(errs, errors.New("its process did not end after the unmount: killed"))
	}
	if l.daemon.err != nil && !isKilled(l.daemon.err) {
		errs = append(errs, fmt.Errorf("its process: %v", l.daemon.err))
	}
	unix.Close(l.nsfd)
	l.nsfd = -1
	if err := errors.Join(errs...); err != nil {
		l.err = failed("latency layer: %v", oneLine(err))
	}
	return l.err
}

func isKilled(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && !ee.Exited()
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// unmountAll unmounts the layer's mounts inside its namespace: a plain
// unmount first (the kernel writes dirty pages back through the layer),
// a lazy one when something still holds a mount.
func (l *Layer) unmountAll() error {
	if l.nsfd < 0 || len(l.mounts) == 0 {
		return nil
	}
	return onLockedThread(func() error {
		if err := enterNamespace(l.nsfd); err != nil {
			return err
		}
		var errs []error
		for i := len(l.mounts) - 1; i >= 0; i-- {
			m := l.mounts[i]
			err := unix.Unmount(m.Path, unix.UMOUNT_NOFOLLOW)
			if errors.Is(err, unix.EBUSY) {
				err = unix.Unmount(m.Path, unix.UMOUNT_NOFOLLOW|unix.MNT_DETACH)
			}
			if err != nil && !errors.Is(err, unix.EINVAL) { // EINVAL: not mounted (any more)
				errs = append(errs, fmt.Errorf("unmount %s: %w", m.Path, err))
			}
		}
		return errors.Join(errs...)
	})
}

// Description is a layer as it is recorded with every result measured on
// it: its settings, how it is built and served, and its figures so far,
// its own cost among them.
type Description struct {
	Settings Settings    `json:"settings"`
	Seed     uint64      `json:"seed"`
	Backend  string      `json:"backend"`
	Mounts   []MountInfo `json:"mounts"`
	PID      int         `json:"pid"`
	Started  time.Time   `json:"started"`
	// Connection is how the FUSE connection was set up.
	Connection map[string]string `json:"connection"`
	// SinceStart are the layer's figures from its start to the moment
	// of the description (or its end): per kind the latency the server
	// saw and the layer's own part of it (own_*: the pass-through and
	// the device below, beyond the delay drawn), and its CPU time per
	// operation.
	SinceStart *Summary `json:"since_start,omitempty"`
	Note       string   `json:"note,omitempty"`
}

// Describe describes the layer; its figures so far come from its
// process (or, after Close, from its last snapshot).
func (l *Layer) Describe(ctx context.Context) Description {
	d := Description{Settings: l.settings, Seed: l.seed, Backend: backend(), Mounts: l.mounts, PID: l.pid, Started: l.started,
		Connection: map[string]string{
			"mount_namespace": "private: only the instance's processes see the mounts",
			"writeback_cache": "on: the server's writes are cached in its page cache and written back through the layer",
			"max_background":  strconv.Itoa(maxBackground),
			"max_request":     strconv.Itoa(maxWrite) + " bytes",
			"backing_io":      "reads with O_DIRECT where the backing file system and the request allow; writes as the server made them (O_DIRECT or through the page cache)",
			"nice":            strconv.Itoa(daemonNice),
		}}
	s, err := l.Snapshot(ctx)
	if err != nil {
		d.Note = "figures unavailable: " + err.Error()
		return d
	}
	w, err := s.Since(Snapshot{At: l.started})
	if err != nil {
		d.Note = "figures unavailable: " + err.Error()
		return d
	}
	sum := w.Summary()
	d.SinceStart = &sum
	return d
}

// backend names the FUSE library and its version.
func backend() string {
	v := "(version unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/hanwen/go-fuse/v2" {
				v = m.Version
			}
		}
	}
	return "FUSE, github.com/hanwen/go-fuse/v2 " + v + ", served by a process of oltplab's own"
}
