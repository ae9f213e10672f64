package latency

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The layer's mounts live in a mount namespace of their own, which only
// the processes oltplab starts for the instance (the server, its tools,
// fio) enter. In every other namespace, the host's among them, the
// directory is what it always was, and the layer's process reads and
// writes it there: the mount and its backing directory share one path.
// Nothing is ever mounted where anyone else looks, so nothing can stay
// mounted there; and the namespace, with its mounts, goes when the last
// of its processes does and oltplab no longer holds it open (a killed
// oltplab holds nothing, and its servers die with it).

// onLockedThread runs f on an OS thread of its own that is never given
// back to the Go scheduler: f may change what belongs to the thread (its
// mount namespace). The thread ends when f returns.
func onLockedThread(f func() error) error {
	done := make(chan error, 1)
	offMainThread(func() { done <- f() })
	return <-done
}

// offMainThread runs f in a new goroutine locked to a thread that is not
// the process's main thread, and never unlocked: the thread ends with
// the goroutine. The main thread cannot end (Go keeps it, idle, when a
// goroutine locked to it returns), and it is the one /proc/PID shows:
// a namespace it entered would stay the process's for everyone to see.
func offMainThread(f func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// This goroutine holds the main thread, so the next one
			// starts on another; the main thread is given back untouched.
			done := make(chan struct{})
			go func() {
				defer close(done)
				runtime.LockOSThread()
				f()
			}()
			<-done
			runtime.UnlockOSThread()
			return
		}
		// Deliberately never unlocked.
		f()
	}()
}

// enterNamespace moves the calling (locked) thread into the mount
// namespace nsfd: first a file-system context of its own (a Go thread
// shares it with the others, and setns refuses a shared one).
func enterNamespace(nsfd int) error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("unshare the file-system context: %w", err)
	}
	if err := unix.Setns(nsfd, unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("enter the layer's mount namespace: %w", err)
	}
	return nil
}

// EnterNamespace moves the calling thread, which must be locked to its
// goroutine and never unlocked (it ends with it), into the mount
// namespace nsfd (Layer.Namespace): a process it forks then sees the
// layer's mounts. internal/instance calls it before it starts a server.
func EnterNamespace(nsfd int) error { return enterNamespace(nsfd) }

// newNamespace makes a new mount namespace on the calling (locked)
// thread, whose mounts and unmounts never reach the namespace it came
// from (slave propagation: the host's still reach it).
func newNamespace() error {
	if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("make a private mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make the private mount namespace a slave of the host's: %w", err)
	}
	return nil
}

// Run runs cmd to completion inside the layer's mount namespace, so that
// it sees the layer's mounts (fio on the layer). cmd must ask for the
// parent-death signal (SysProcAttr.Pdeathsig): it is started from a
// thread that stays until it exits.
func (l *Layer) Run(cmd *exec.Cmd) error {
	c, err := l.Start(cmd)
	if err != nil {
		return err
	}
	return c.Wait()
}

// Child is a process started inside the layer's namespace.
type Child struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Wait waits for the process to exit and returns its status.
func (c *Child) Wait() error {
	<-c.done
	return c.err
}

// Start starts cmd inside the layer's mount namespace (see Run).
func (l *Layer) Start(cmd *exec.Cmd) (*Child, error) {
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig == 0 {
		return nil, errors.New("start inside the latency layer: no parent-death signal set")
	}
	return startLocked(cmd, func() error { return enterNamespace(l.nsfd) })
}

// startLocked starts cmd from a new locked thread, after prepare ran on
// it, and keeps the thread until the process exits: the parent-death
// signal belongs to the forking thread.
func startLocked(cmd *exec.Cmd, prepare func() error) (*Child, error) {
	c := &Child{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	offMainThread(func() {
		err := prepare()
		if err == nil {
			err = cmd.Start()
		}
		started <- err
		if err != nil {
			return
		}
		c.err = cmd.Wait()
		close(c.done)
	})
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}

// processStart is the start time of process pid (clock ticks since boot,
// /proc/PID/stat field 22): with the pid it names one process, never a
// later one that got the same pid.
func processStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); the start time is field 22.
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}
