package instance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// How long a server may take to start (crash recovery included) and to
// shut down before it is killed.
const (
	startTimeout = 3 * time.Minute
	stopTimeout  = 2 * time.Minute
)

// DatabaseName is the database created for oltplab on every server.
const DatabaseName = "oltplab"

// UserName is the database user oltplab connects as (a superuser of the
// private server, with a password generated at every start).
const UserName = "oltplab"

// Instance is a running managed instance. Its methods are safe for
// concurrent use.
type Instance struct {
	spec Spec
	eng  engine
	log  *slog.Logger
	id   string // unique: NAME.PID.RANDOM

	bins         Binaries
	acct         *osAccount // nil: the server runs as oltplab's own user
	dataDir      string     // absolute
	walDir       string     // absolute, "" for none
	engineDir    string     // DataDir/<engine>: the engine's own files
	engineWALDir string     // WALDir/<engine>-wal, "" for none
	logFile      string     // DataDir/<engine>.log: the server's output
	runDir       string     // private: socket, per-start files; removed on Stop
	data, wal    *claim.Dir // DataDir and WALDir, held open (dirs.go)
	password     dialect.Secret

	cg        *cgroup
	placement placement
	layer     *latency.Layer // nil without Spec.Latency
	controls  []Control
	devices   map[string]sysstat.Device // "data", "wal"
	notes     []string

	mu        sync.Mutex
	port      int
	proc      *child
	settings  []setting
	effective map[string]string
	started   time.Time
	priorCPU  float64 // CPU seconds of server processes that exited (/proc accounting)
	restarts  []RestartReport
	stopped   bool
	stopErr   error
	unwatch   func() bool
}

// Start starts an instance as s describes and returns once it accepts
// connections. The instance stops when ctx is cancelled, or when Stop is
// called. On error nothing of it is left running and its cgroups and run
// directory are gone; the data directory stays.
func Start(ctx context.Context, s Spec, log *slog.Logger) (_ *Instance, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host, err := LiveHost()
	if err != nil {
		return nil, &Error{Kind: KindOther, Err: err}
	}
	if err := s.Validate(host); err != nil {
		return nil, err
	}
	if err := checkPort(s); err != nil {
		return nil, err
	}
	i := &Instance{spec: s, eng: engines[s.Engine], log: log.With("instance", s.InstanceName()),
		devices: map[string]sysstat.Device{}, placement: noPlacement}
	if i.dataDir, err = filepath.Abs(s.DataDir); err != nil {
		return nil, errorf(KindDirectory, "data_dir %s: %v", s.DataDir, err)
	}
	if s.WALDir != "" {
		if i.walDir, err = filepath.Abs(s.WALDir); err != nil {
			return nil, errorf(KindDirectory, "wal_dir %s: %v", s.WALDir, err)
		}
	}
	if !i.eng.server() {
		if err := i.startEmbedded(); err != nil {
			i.closeDirs()
			return nil, err
		}
		return i, nil
	}

	if i.bins, err = i.eng.locate(s.BinDir); err != nil {
		return nil, err
	}
	i.bins.Version = versionOf(ctx, i.bins.Server)
	if os.Geteuid() == 0 {
		if i.acct, err = lookupAccount(i.eng.osUser()); err != nil {
			return nil, errorf(KindControl, "instance %s: oltplab runs as root and %s must not: it needs the unprivileged user %q (created by the engine's Debian package): %v",
				s.InstanceName(), s.Engine, i.eng.osUser(), err)
		}
	}
	if err := i.takeDirs(); err != nil {
		i.closeDirs()
		return nil, err
	}
	throttled, err := i.describeDevices()
	if err != nil {
		i.closeDirs()
		return nil, err
	}

	i.id = groupID(s.InstanceName())
	defer func() {
		if err != nil {
			i.stopServer(context.WithoutCancel(ctx))
			if cerr := i.cleanup(); cerr != nil {
				i.log.Warn("clean up after a failed start", "err", cerr)
			}
		}
	}()
	if i.runDir, err = makeRunDir(i.id, i.acct); err != nil {
		return nil, err
	}
	if err := i.applyControls(throttled); err != nil {
		return nil, err
	}
	if err := i.mountLatency(ctx); err != nil {
		return nil, err
	}
	ok, err := i.eng.initialised(i)
	if err != nil {
		return nil, err
	}
	if !ok {
		i.log.Info("initialising", "engine", s.Engine, "dir", i.engineDir)
		if err := i.eng.initialise(ctx, i); err != nil {
			return nil, err
		}
	}
	i.password = dialect.Secret(randomString(24))
	if err := i.startServer(ctx, false); err != nil {
		return nil, err
	}
	i.unwatch = context.AfterFunc(ctx, func() {
		if err := i.Stop(context.Background()); err != nil {
			i.log.Warn("stop after cancel", "err", err)
		}
	})
	return i, nil
}

// startEmbedded prepares an embedded engine's directory: nothing runs.
func (i *Instance) startEmbedded() error {
	if err := i.takeDirs(); err != nil {
		return err
	}
	if d, err := sysstat.DeviceOf(i.dataDir); err == nil {
		i.devices["data"] = d
	} else {
		i.notes = append(i.notes, "data device: "+err.Error())
	}
	i.settings = i.eng.settings(i)
	i.controls = append(i.controls, i.memoryControl())
	i.started = time.Now()
	return nil
}

// describeDevices records the storage under the directories and returns
// the whole disks ("MAJ:MIN") an io_limit must cap.
func (i *Instance) describeDevices() ([]string, error) {
	var disks []string
	for _, d := range []struct{ role, dir, field string }{{"data", i.dataDir, "data_dir"}, {"wal", i.walDir, "wal_dir"}} {
		if d.dir == "" {
			continue
		}
		dev, err := sysstat.DeviceOf(d.dir)
		if err != nil {
			if !i.spec.IOLimit.IsZero() {
				return nil, errorf(KindDevice, "io_limit: cannot find the block device under %s %s: %v", d.field, d.dir, err)
			}
			i.notes = append(i.notes, d.role+" device: "+err.Error())
			continue
		}
		i.devices[d.role] = dev
		if i.spec.IOLimit.IsZero() {
			continue
		}
		disk, err := wholeDisk(dev)
		if err != nil {
			return nil, errorf(KindDevice, "io_limit: %s %s: %v", d.field, d.dir, err)
		}
		if !contains(disks, disk) {
			disks = append(disks, disk)
		}
	}
	return disks, nil
}

// wholeDisk is the "MAJ:MIN" the I/O throttle takes for a device: the
// disk itself, since the kernel refuses limits on partitions.
func wholeDisk(d sysstat.Device) (string, error) {
	if d.Name == "" || d.Major == 0 {
		return "", fmt.Errorf("no block device under it (%s file system from %s, mounted on %s)", d.FSType, d.MountSource, d.MountPoint)
	}
	if d.Disk == "" || d.Disk == d.Name {
		return fmt.Sprintf("%d:%d", d.Major, d.Minor), nil
	}
	v := readTrim(filepath.Join("/sys/block", d.Disk, "dev"))
	if v == "" {
		return "", fmt.Errorf("no device number for disk %s holding partition %s", d.Disk, d.Name)
	}
	return v, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// makeRunDir makes the private directory of one instance below
// TMPDIR/oltplab-UID, removing those of instances whose oltplab died.
func makeRunDir(id string, acct *osAccount) (string, error) {
	base := filepath.Join(os.TempDir(), "oltplab-"+strconv.Itoa(os.Geteuid()))
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", errorf(KindDirectory, "run directory %s: %v", base, unwrapPath(err))
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return "", errorf(KindDirectory, "run directory %s: %v", base, unwrapPath(err))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return "", errorf(KindDirectory, "run directory %s is not a directory owned by this user", base)
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if pid := ownerOf(e.Name()); pid > 0 && !alive(pid) {
			_ = os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
	dir := filepath.Join(base, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", errorf(KindDirectory, "run directory %s: %v", dir, unwrapPath(err))
	}
	if acct != nil {
		if err := os.Chown(dir, acct.UID, acct.GID); err != nil {
			return "", errorf(KindDirectory, "run directory %s: %v", dir, unwrapPath(err))
		}
	}
	return dir, nil
}

// writePrivate writes a file of the run directory readable by the server
// only (writeOwnFile: the server's account owns the directory).
func (i *Instance) writePrivate(name, content string) (string, error) {
	return writeOwnFile(i.runDir, name, content, i.acct)
}

// command prepares a child process of the engine: run as the server's
// account, in a process group of its own (a Ctrl-C at the terminal goes
// to oltplab, which stops the server in order), signalled when oltplab
// dies.
func (i *Instance) command(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = i.runDir
	cmd.Env = []string{
		"PATH=" + i.bins.Dir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LANG=C.UTF-8", "HOME=" + i.runDir, "TMPDIR=" + i.runDir,
	}
	if tz := os.Getenv("TZ"); tz != "" {
		cmd.Env = append(cmd.Env, "TZ="+tz)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: i.eng.deathSignal(), Credential: i.acct.credential()}
	return cmd
}

// runTool runs a short-lived engine program (initdb, install script) to
// completion; its output goes to the server log, its last line into the
// error.
func (i *Instance) runTool(ctx context.Context, what string, cmd *exec.Cmd) error {
	out, err := i.openLog()
	if err != nil {
		return err
	}
	defer out.Close()
	start, _ := out.Seek(0, io.SeekEnd)
	cmd.Stdout, cmd.Stderr = out, out
	c, err := startChild(cmd, noPlacement)
	if err != nil {
		return errorf(KindStart, "%s: %v", what, err)
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		tree := descendants(c.pid())
		c.signal(syscall.SIGKILL)
		<-c.done
		for _, q := range tree {
			if running(q) {
				_ = syscall.Kill(q.PID, syscall.SIGKILL)
			}
		}
		return ctx.Err()
	}
	if c.err != nil {
		return errorf(KindStart, "%s failed (%v): %s (log: %s)", what, c.err, lastLogLine(i.logFile, start), i.logFile)
	}
	return nil
}

// lastLogLine is the most telling line the log got after offset: the last
// one naming an error, else the last one.
func lastLogLine(file string, offset int64) string {
	b, err := os.ReadFile(file)
	if err != nil || offset > int64(len(b)) {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimSpace(string(b[offset:])), "\n")
	for j := len(lines) - 1; j >= 0; j-- {
		l := lines[j]
		for _, w := range []string{"FATAL", "PANIC", "ERROR", "[ERROR]", "error:"} {
			if strings.Contains(l, w) {
				return strings.TrimSpace(l)
			}
		}
	}
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return last
	}
	return "(nothing logged)"
}

// startServer starts the server process in the instance's cgroups and
// waits until it is ready. keepPort reuses the current port (restart); a
// port another process took meanwhile is replaced by a new one.
func (i *Instance) startServer(ctx context.Context, keepPort bool) error {
	for attempt := 0; ; attempt++ {
		if i.spec.Port != 0 {
			// A port of the user's: refused when taken, never replaced.
			if err := checkPort(i.spec); err != nil {
				return err
			}
			i.port = i.spec.Port
		} else if !keepPort || attempt > 0 {
			p, err := freePort()
			if err != nil {
				return errorf(KindStart, "find a free port: %v", err)
			}
			i.port = p
		}
		i.settings = i.eng.settings(i)
		args, err := i.eng.prepare(i)
		if err != nil {
			return errorf(KindStart, "prepare %s: %v", i.spec.Engine, err)
		}
		out, err := i.openLog()
		if err != nil {
			return err
		}
		offset, _ := out.Seek(0, io.SeekEnd)
		cmd := i.command(i.bins.Server, args...)
		cmd.Stdout, cmd.Stderr = out, out
		proc, err := startChild(cmd, i.placement)
		out.Close()
		if err != nil {
			return errorf(KindStart, "start %s: %v", i.bins.Server, err)
		}
		i.proc = proc
		i.log.Debug("server started", "pid", proc.pid(), "port", i.port)
		err = i.waitReady(ctx, offset)
		if err == nil {
			i.started = time.Now()
			return nil
		}
		i.stopServer(context.WithoutCancel(ctx))
		if i.spec.Port != 0 && portTaken(i.port) {
			return errorf(KindSpec, "instance %s: port %d was taken while the server started: choose another port, or leave port out for a free one", i.spec.InstanceName(), i.port)
		}
		if attempt < 2 && ctx.Err() == nil && portTaken(i.port) {
			i.log.Info("port taken meanwhile, trying another", "port", i.port)
			continue
		}
		return err
	}
}

// waitReady waits until the engine reports the server ready, the server
// exits, or the start times out.
func (i *Instance) waitReady(ctx context.Context, offset int64) error {
	rctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	proc := i.proc
	go func() {
		select {
		case <-proc.done:
			cancel()
		case <-rctx.Done():
		}
	}()
	eff, err := i.eng.ready(rctx, i)
	if err == nil {
		i.effective = eff
		return nil
	}
	if proc.exited() {
		return errorf(KindStart, "%s exited while starting (%v): %s (log: %s)",
			i.spec.Engine, proc.err, lastLogLine(i.logFile, offset), i.logFile)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errorf(KindStart, "%s did not become ready within %s: %v (log: %s)", i.spec.Engine, startTimeout, err, i.logFile)
}

// stopServer shuts the server down (fast shutdown), kills it when it does
// not go within stopTimeout or ctx, and kills anything left in its process
// group.
func (i *Instance) stopServer(ctx context.Context) {
	p := i.proc
	if p == nil {
		return
	}
	i.proc = nil
	tree := descendants(p.pid())
	p.signal(i.eng.stopSignal())
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-ctx.Done():
	case <-timer.C:
		i.log.Warn("server did not stop in time; killing it", "pid", p.pid())
	}
	if !p.exited() {
		p.signal(syscall.SIGKILL)
		<-p.done
	}
	// The server waits for its workers before it exits; whatever did not
	// exit with it (or was left by a kill) goes now.
	for _, q := range tree {
		if running(q) {
			_ = syscall.Kill(q.PID, syscall.SIGKILL)
		}
	}
	i.priorCPU += p.cpuSeconds()
	i.log.Debug("server stopped", "pid", p.pid(), "status", p.err)
}

// cleanup removes the cgroups and the run directory, and releases the
// instance's directories.
func (i *Instance) cleanup() error {
	err := i.closeLatency()
	i.closeDirs()
	err = errors.Join(err, i.cg.remove())
	if i.runDir != "" {
		if rerr := os.RemoveAll(i.runDir); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// Stop shuts the server down and removes its cgroups and run directory.
// It is idempotent; later calls return the first call's result.
func (i *Instance) Stop(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopped {
		return i.stopErr
	}
	i.stopped = true
	if i.unwatch != nil {
		i.unwatch()
	}
	i.stopServer(ctx)
	i.stopErr = i.cleanup()
	return i.stopErr
}

// Done is closed when the server process exits, for whatever reason; nil
// for an embedded engine. A server that exits without Stop is a failure
// of whatever was measured on it.
func (i *Instance) Done() <-chan struct{} {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.proc == nil {
		return nil
	}
	return i.proc.done
}

// Exited reports whether the server process Done watches has exited,
// and how ("signal: killed", "exit status 1").
func (i *Instance) Exited() (bool, string) {
	i.mu.Lock()
	p := i.proc
	i.mu.Unlock()
	if p == nil || !p.exited() {
		return false, ""
	}
	if p.err == nil {
		return true, "exit status 0"
	}
	return true, p.err.Error()
}

// CPUs are the CPUs the server is confined to (the spec's cpus); nil
// when it may use any.
func (i *Instance) CPUs() []int {
	cpus, err := ParseCPUList(i.spec.CPUs)
	if err != nil {
		return nil
	}
	return cpus
}

// PID is the server's process id (0 when none runs).
func (i *Instance) PID() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.proc == nil {
		return 0
	}
	return i.proc.pid()
}

// Target is the URL to reach the database created for oltplab, with the
// generated password as a secret. It may change after Restart (only when
// the port was taken meanwhile).
func (i *Instance) Target() dialect.Target {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.eng.target(i)
}

// Port is the loopback TCP port the server listens on (0 for embedded).
func (i *Instance) Port() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.port
}

// BinDir is the directory of the engine's binaries (pg_basebackup and
// mariadb-backup live there or beside it).
func (i *Instance) BinDir() string { return i.bins.Dir }

// SocketDir is the private directory holding the server's Unix socket
// (PostgreSQL: .s.PGSQL.PORT; MariaDB: mysqld.sock). On PostgreSQL, the
// OS user running oltplab connects there as UserName without a password,
// replication included (peer authentication), as pg_basebackup -h
// SocketDir does.
func (i *Instance) SocketDir() string { return i.runDir }

// DataDir is the engine's own directory below Spec.DataDir.
func (i *Instance) DataDir() string { return i.engineDir }

// Spec is the spec the instance was started with.
func (i *Instance) Spec() Spec { return i.spec }

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// checkPort refuses a spec's port that another process listens on.
func checkPort(s Spec) error {
	if s.Port != 0 && portTaken(s.Port) {
		return errorf(KindSpec, "instance %s: port %d is taken on 127.0.0.1 (another process listens there): choose another port, or leave port out for a free one",
			s.InstanceName(), s.Port)
	}
	return nil
}

// portTaken reports whether another process listens on port.
func portTaken(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return true
	}
	l.Close()
	return false
}
