package fio

import (
	"os"
	"syscall"
)

// sysProcAttr puts fio in its own process group (so that stopping it
// reaches anything it starts) and has the kernel kill it when the thread
// that started it dies, so fio never outlives oltplab.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// interrupt asks fio's process group to stop: fio ends its jobs on SIGINT.
func interrupt(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGINT)
}
