package scenario

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/summary"
)

// busyHostPct is the host CPU busy share at which a measurement whose
// foreign CPU cannot be told (the server's own CPU was not measured)
// says that others may have taken CPU from it.
const busyHostPct = 90

// interferenceIgnored turns off judging runs contaminated
// (JudgeInterference); the CPU account is measured and stored all the
// same.
var interferenceIgnored atomic.Bool

// JudgeInterference sets whether runs are judged contaminated when the
// interference in their window passes their limits (the default: on) and
// returns a function that restores the previous setting. It is for test
// binaries whose tests are about something else and run on a shared
// host, where other tests' servers are foreign CPU: they turn it off,
// and the tests of contamination turn it on for themselves. oltplab
// itself never turns it off.
func JudgeInterference(on bool) (restore func()) {
	was := interferenceIgnored.Swap(!on)
	return func() { interferenceIgnored.Store(was) }
}

// judgeRun completes a measured run's result with what the scenario knows
// beyond the driver: a managed server that exited under it (its server
// failed), its CPU account (the server's CPU per transaction), and the
// interference in it, judged against the run's limits (contaminated).
func judgeRun(res *driver.Result, m *summary.Monitor, exit *exitWatch) {
	if at, how, ok := exit.exited(); ok && (res.Window.End.IsZero() || at.Before(res.Window.End)) {
		when := "before the measured window"
		if !res.Window.Start.IsZero() && !at.Before(res.Window.Start) {
			when = fmt.Sprintf("%.1f s into the measured window", at.Sub(res.Window.Start).Seconds())
		}
		res.FailServer(fmt.Sprintf("the managed server's process exited (%s) %s", how, when))
	}
	if m == nil {
		return
	}
	u := m.CPUUse
	if u != nil && u.ServerCores != nil && res.Window.Seconds > 0 {
		secs := *u.ServerCores * res.Window.Seconds
		u.ServerCPUSeconds = &secs
		n := res.DBTransactions
		if n <= 0 {
			n = res.DriverTransactions()
		}
		if n > 0 {
			us := secs * 1e6 / float64(n)
			u.ServerCPUMicrosPerTx = &us
		}
	}
	if dirty := contamination(u, res.Options, m.DatabaseHostMeasured); !interferenceIgnored.Load() {
		res.Contaminated = append(res.Contaminated, dirty...)
	}
	if (u == nil || u.ForeignPct == nil) && m.CPU.BusyPct >= busyHostPct {
		why := "it was not sampled"
		if u != nil && u.ServerSource != "" {
			why = u.ServerSource
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("the host's CPU was %.0f%% busy and the database server's own CPU is unknown (%s): "+
			"whether other processes took CPU from the run cannot be told", m.CPU.BusyPct, why))
	}
}

// contamination says what in the window's CPU account is beyond the
// run's limits (driver.Options.MaxForeignCPUPct, MaxStealPct), and
// records the limits in it; nil when nothing is, or it was not sampled.
// here: the database runs on the host sampled (else that host is the load
// generator's only).
func contamination(u *sampler.CPUUse, o driver.Options, here bool) []string {
	if u == nil {
		return nil
	}
	u.MaxForeignPct, u.MaxStealPct = o.MaxForeignCPUPct, o.MaxStealPct
	whose := "the host's"
	if !here {
		whose = "the load generator's host's"
	}
	var out []string
	if p := u.ForeignPct; p != nil && *p > o.MaxForeignCPUPct {
		out = append(out, fmt.Sprintf("foreign CPU %.0f%% of %s %g cores (%.2f cores that neither the database server nor oltplab used), "+
			"more than the %g%% allowed (--max-foreign-cpu)", *p, whose, u.HostCores, *u.ForeignCores, o.MaxForeignCPUPct))
	}
	if p := u.CPUSetForeignPct; p != nil && u.CPUSetCores < u.HostCores && *p > o.MaxForeignCPUPct {
		out = append(out, fmt.Sprintf("foreign CPU %.0f%% of the server's own CPUs %s (%.2f of their %g cores), "+
			"more than the %g%% allowed (--max-foreign-cpu)", *p, u.CPUSet, *u.CPUSetForeignCores, u.CPUSetCores, o.MaxForeignCPUPct))
	}
	if u.StealPct > o.MaxStealPct {
		out = append(out, fmt.Sprintf("steal %.0f%% of %s cores (the hypervisor gave them to other machines), more than the %g%% allowed (--max-steal)",
			u.StealPct, whose, o.MaxStealPct))
	}
	return out
}

// exitWatch sees a managed server's process exit while a run measures.
type exitWatch struct {
	at   time.Time
	how  string
	stop chan struct{}
	done chan struct{}
}

// watchExit watches the managed server of e, when it has one whose
// process can exit; nil otherwise.
func (e *Env) watchExit() *exitWatch {
	if e.Managed == nil {
		return nil
	}
	gone := e.Managed.Done()
	if gone == nil {
		return nil
	}
	w := &exitWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		select {
		case <-gone:
			w.at = time.Now()
			_, w.how = e.Managed.Exited()
		case <-w.stop:
		}
	}()
	return w
}

// exited stops watching and says whether, when and how the server's
// process exited meanwhile.
func (w *exitWatch) exited() (time.Time, string, bool) {
	if w == nil {
		return time.Time{}, "", false
	}
	select {
	case <-w.done:
	default:
		close(w.stop)
		<-w.done
	}
	return w.at, w.how, !w.at.IsZero()
}
