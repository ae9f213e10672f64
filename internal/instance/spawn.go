package instance

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/oltplab/oltplab/internal/latency"
)

// child is a process oltplab started. It was forked by a dedicated OS
// thread that stays locked to its goroutine, and alive, until the process
// has exited: the kernel's parent-death signal (Pdeathsig) belongs to the
// forking thread, not to the oltplab process, so that thread must not go
// away while the child runs. When the goroutine returns the thread ends
// with it (it is never unlocked), taking its cgroups and affinity along.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process exited and was waited for
	err  error         // cmd.Wait's result; read only after done is closed
}

// placement is where a new process starts: the forking thread joins the
// cgroup v1 groups (their "tasks" files take a thread id) and takes the
// CPU affinity before it forks, so that the child and everything it forks
// inherit them, and goes back afterwards. A cgroup v2 group is given to
// clone3 directly (CLONE_INTO_CGROUP). With a latency layer the thread
// also enters the layer's mount namespace, for good: it is never given
// back (see child), and never the process's main thread.
type placement struct {
	join     []string       // v1 tasks files to enter before the fork
	leave    []string       // v1 tasks files of the groups to return to after it
	cgroupFD int            // open v2 cgroup directory, or -1
	cpus     CPUSet         // affinity, or nil
	layer    *latency.Layer // the latency layer whose mounts the process sees, or nil
}

var noPlacement = placement{cgroupFD: -1}

// startChild starts cmd at pl. cmd.SysProcAttr must already ask for the
// parent-death signal; startChild adds the cgroup v2 descriptor.
func startChild(cmd *exec.Cmd, pl placement) (*child, error) {
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig == 0 {
		return nil, errors.New("start child: no parent-death signal set")
	}
	if pl.cgroupFD >= 0 {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = pl.cgroupFD
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	offMainThread(func() {
		err := pl.enter()
		if err == nil {
			err = cmd.Start()
		}
		pl.exit()
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

// offMainThread runs f in a new goroutine locked to a thread other than
// the process's main thread, and never unlocked (see child): the main
// thread cannot end, and it is the one /proc/PID shows, so what f changes
// of its thread (cgroups, a mount namespace) must not be the main one's.
func offMainThread(f func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// Locked here, this goroutine keeps the next one off the main
			// thread; the main thread is given back untouched.
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
		f()
	}()
}

// enter moves the calling (locked) thread into pl's groups, CPUs and
// mount namespace.
func (pl placement) enter() error {
	tid := strconv.Itoa(unix.Gettid())
	for _, f := range pl.join {
		if err := os.WriteFile(f, []byte(tid), 0); err != nil {
			return fmt.Errorf("join cgroup %s: %w", f, err)
		}
	}
	if len(pl.cpus) > 0 {
		var set unix.CPUSet
		for _, c := range pl.cpus {
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("set CPU affinity %s: %w", pl.cpus, err)
		}
	}
	if pl.layer != nil {
		if err := latency.EnterNamespace(pl.layer.Namespace()); err != nil {
			return err
		}
	}
	return nil
}

// exit returns the calling thread to its own groups. Failures do not
// matter: the thread ends when its goroutine does.
func (pl placement) exit() {
	tid := strconv.Itoa(unix.Gettid())
	for _, f := range pl.leave {
		_ = os.WriteFile(f, []byte(tid), 0)
	}
}

// exited reports whether the child has exited.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// signal sends sig to the child; a child that already exited is no error.
func (c *child) signal(sig syscall.Signal) {
	if !c.exited() {
		_ = c.cmd.Process.Signal(sig)
	}
}

// cpuSeconds is the CPU time of the exited child and of the descendants it
// waited for (wait4's rusage), 0 while it runs.
func (c *child) cpuSeconds() float64 {
	if !c.exited() || c.cmd.ProcessState == nil {
		return 0
	}
	return c.cmd.ProcessState.UserTime().Seconds() + c.cmd.ProcessState.SystemTime().Seconds()
}

// RunInside runs cmd to completion inside the instance's cgroups and on
// its CPUs, as oltplab's own account: the instance's io_limit, memory
// limit and CPUs hold for it as for the server (a storage benchmark of the
// instance's storage as the server gets it). cmd must ask for the
// parent-death signal (SysProcAttr.Pdeathsig); a context given to
// exec.CommandContext stops it as usual.
func (i *Instance) RunInside(cmd *exec.Cmd) error {
	c, err := startChild(cmd, i.placement)
	if err != nil {
		return err
	}
	<-c.done
	return c.err
}
