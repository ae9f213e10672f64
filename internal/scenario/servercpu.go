package scenario

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// ManagedServer is the managed instance a measurement runs on
// (*instance.Instance): a run on it fails when its server exits in the
// window, and its CPU time and CPUs go into the run's CPU account.
type ManagedServer interface {
	// Done is closed when the server process exits; nil for an engine
	// without one. Exited says whether it has, and how.
	Done() <-chan struct{}
	Exited() (bool, string)
	// ServerCPUSeconds is the CPU time of the server's processes so far;
	// instance.ErrEmbedded for an engine without a server process.
	ServerCPUSeconds() (float64, error)
	// CPUs are the CPUs the server is confined to; nil when it is not.
	CPUs() []int
}

var _ ManagedServer = (*instance.Instance)(nil)

// helperProcess is a managed server beside which oltplab runs a process
// of its own that is neither the server's nor oltplab's process (a
// latency layer): its CPU is oltplab's, not foreign.
type helperProcess interface {
	HelperCPUSeconds() (seconds float64, ok bool)
}

var _ helperProcess = (*instance.Instance)(nil)

// serverCPU is how a run reads the database server's CPU time for its
// CPU account (sampler.Options.ServerCPU, ServerElsewhere, CPUs) and says
// whose it is (source).
type serverCPU struct {
	probe     func() (float64, error)
	helpers   func() (float64, error) // sampler.Options.Helpers
	elsewhere bool
	cpus      []int
	source    string
}

// serverCPUOf finds the database server's CPU time: a managed instance's
// (its cgroup, or its processes), a server on this host given by URL (its
// processes, as the server names them: dialect.ServerProcessReporter), or
// none on this host (another host; an embedded database, whose CPU is
// oltplab's own).
func (e *Env) serverCPUOf(ctx context.Context, db dialect.Database, p Placement) serverCPU {
	if m := e.Managed; m != nil && p.Local {
		cpus := m.CPUs()
		if _, err := m.ServerCPUSeconds(); errors.Is(err, instance.ErrEmbedded) {
			return serverCPU{elsewhere: true, cpus: cpus, source: "the engine is embedded in oltplab: its CPU is oltplab's"}
		}
		cpu := serverCPU{probe: m.ServerCPUSeconds, cpus: cpus,
			source: "the managed instance's processes (its cgroup's CPU accounting, or its process tree)"}
		if h, ok := m.(helperProcess); ok {
			if _, ok := h.HelperCPUSeconds(); ok {
				cpu.helpers = func() (float64, error) {
					if v, ok := h.HelperCPUSeconds(); ok {
						return v, nil
					}
					return 0, errors.New("its process is gone")
				}
				cpu.source += "; its latency layer's process, oltplab's, is counted with oltplab's CPU"
			}
		}
		return cpu
	}
	switch {
	case db != nil && db.Caps().Embedded:
		return serverCPU{elsewhere: true, source: "the engine is embedded in oltplab: its CPU is oltplab's"}
	case !p.Local:
		src := "none here: the database runs on another host (" + p.Address + "), whose server processes oltplab does not see"
		if p.Agent != "" {
			src += "; oltplab agent measures that host's CPU as a whole, not its server's share"
		}
		return serverCPU{elsewhere: true, source: src}
	}
	probe, how, err := localServerCPU(ctx, db)
	if err != nil {
		return serverCPU{source: "not measured: " + err.Error() + "; the foreign CPU cannot be told from the server's"}
	}
	return serverCPU{probe: probe, source: "the server's processes on this host (" + how + ")"}
}

// localServerCPU reads the CPU time of a server on this host given by URL:
// its processes as the server names them, checked against this host's.
func localServerCPU(ctx context.Context, db dialect.Database) (func() (float64, error), string, error) {
	r, ok := db.(dialect.ServerProcessReporter)
	if !ok {
		return nil, "", errors.New("the server does not say which process it is")
	}
	sp, err := r.ServerProcess(ctx)
	if err != nil {
		return nil, "", err
	}
	main, err := mainProcess(sp)
	if err != nil {
		return nil, "", err
	}
	probe := func() (float64, error) { return sysstat.TreeCPUSeconds(main.PID, main.StartTime) }
	if _, err := probe(); err != nil {
		return nil, "", err
	}
	return probe, fmt.Sprintf("process %d and those below it, found from %s", main.PID, sp.How), nil
}

// mainProcess is the server's main process on this host, from what the
// server said; an error when this host has no such process (the server
// runs in another process namespace: a container, another machine
// behind a local address).
func mainProcess(sp dialect.ServerProcess) (sysstat.Proc, error) {
	pid := sp.PID
	if pid == 0 && sp.PIDFile != "" {
		b, err := os.ReadFile(sp.PIDFile)
		if err != nil {
			return sysstat.Proc{}, fmt.Errorf("the server's pid file %s is not readable here: %w", sp.PIDFile, errors.Unwrap(err))
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if pid, err = strconv.Atoi(strings.TrimSpace(first)); err != nil {
			return sysstat.Proc{}, fmt.Errorf("the server's pid file %s holds no process id", sp.PIDFile)
		}
	}
	if pid <= 0 {
		return sysstat.Proc{}, errors.New("the server named no process")
	}
	p, err := serverProc(pid, sp.Names)
	if err != nil || !sp.Parent {
		return p, err
	}
	return serverProc(p.PPID, sp.Names)
}

// serverProc reads process pid and checks that it bears one of the
// server's names.
func serverProc(pid int, names []string) (sysstat.Proc, error) {
	p, err := sysstat.ReadProc(pid)
	if err != nil {
		return p, fmt.Errorf("the server's process %d is not on this host", pid)
	}
	if len(names) > 0 && !slices.Contains(names, p.Comm) {
		return p, fmt.Errorf("process %d of this host is %q, not the server's (%s): the server runs in another process namespace",
			pid, p.Comm, strings.Join(names, ", "))
	}
	return p, nil
}
