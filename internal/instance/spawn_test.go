package instance

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/oltplab/oltplab/internal/testenv"
)

// TestAffinityPlacement: without a cpuset cgroup the forking thread's
// CPU affinity is what the child inherits, and the rest of oltplab keeps
// its own.
func TestAffinityPlacement(t *testing.T) {
	testenv.Require(t, testenv.Subprocess)
	cpu := lastCPU(t)
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout = &out
	c, err := startChild(cmd, placement{cgroupFD: -1, cpus: CPUSet{cpu}})
	if err != nil {
		t.Fatal(err)
	}
	<-c.done
	if c.err != nil {
		t.Fatal(c.err)
	}
	if got, want := strings.TrimSpace(out.String()), fmt.Sprintf("Cpus_allowed_list:\t%d", cpu); got != want {
		t.Errorf("child: got %q, want %q", got, want)
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("the test's own affinity changed: %d CPUs before, %d after", before.Count(), after.Count())
	}
}

// TestStartChildNeedsDeathSignal: a child without a parent-death signal
// could outlive oltplab; startChild refuses it.
func TestStartChildNeedsDeathSignal(t *testing.T) {
	testenv.Require(t, testenv.Subprocess)
	if _, err := startChild(exec.Command("/bin/true"), noPlacement); err == nil {
		t.Error("started a child without Pdeathsig")
	}
}
