//go:build !linux

package fio

import (
	"os"
	"syscall"
)

// sysProcAttr: only Linux can tie fio's life to oltplab's (Pdeathsig).
func sysProcAttr() *syscall.SysProcAttr { return nil }

// interrupt stops fio.
func interrupt(p *os.Process) error { return p.Kill() }
