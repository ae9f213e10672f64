package driver

import (
	"os"
	"runtime"
	"sync"
	"time"
)

// The Go runtime's processors (GOMAXPROCS) while runs drive a database.
//
// A virtual user spends nearly all its time waiting for the server: it
// sends a call and parks until the answer arrives. With as many
// processors as cores (Go's default), an answer that makes a goroutine
// runnable while another one runs wakes a second thread for the idle
// processor, which mostly finds nothing left to do and goes back to
// sleep: two context switches that do no work, on every few
// transactions. A driver that needs a tenth of a core pays for them with
// a fifth of its CPU (measured on PostgreSQL procedures, 8 virtual users,
// 2 cores: 31.7-32.0 against 25.1-26.7 µs per transaction with one
// processor; docs/architecture.md, "The driver's cost").
//
// So while a run measures, the processors follow the driver's load: a run
// starts with one, and every procsTick the process's CPU time over the
// tick is compared with what its processors could give: above
// procsBusyAbove of it one processor is added (up to the cores), and after
// procsIdleTicks ticks in a row below procsIdleBelow of what one processor
// fewer could give, one is taken away. A driver that needs more than one
// core (thousands of terminals, or embedded SQLite, which runs inside the
// process) gets them within a few ticks; the scheduling lag that every
// result records would show a driver short of processors.
//
// A GOMAXPROCS set in the environment is obeyed and left alone. Runs that
// go on together (parallel targets) share one controller; the last one to
// end restores the processors the process had.
const (
	procsTick      = 250 * time.Millisecond
	procsBusyAbove = 0.5
	procsIdleBelow = 0.25
	procsIdleTicks = 20
)

// procs is the process's one controller.
var procs procsController

type procsController struct {
	mu    sync.Mutex
	users int
	stop  chan struct{} // closed when the last user ends
	saved int           // GOMAXPROCS before the first user
	// max is the most processors set since the last reset (maxProcs).
	max int
}

// acquireProcs starts adapting GOMAXPROCS for a run, unless the
// environment sets it; release ends that.
func acquireProcs() (release func()) {
	if os.Getenv("GOMAXPROCS") != "" || runtime.NumCPU() < 2 {
		return func() {}
	}
	c := &procs
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users++
	if c.users == 1 {
		c.saved = runtime.GOMAXPROCS(1)
		c.max = 1
		c.stop = make(chan struct{})
		go c.loop(c.stop, runtime.NumCPU())
	}
	var once sync.Once
	return func() { once.Do(c.release) }
}

func (c *procsController) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users--
	if c.users > 0 {
		return
	}
	// The loop sets processors under c.mu after checking stop: none
	// after this.
	close(c.stop)
	runtime.GOMAXPROCS(c.saved)
}

// resetMax starts a new count of the most processors used (a window's) and
// returns the processors now.
func (c *procsController) resetMax() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := runtime.GOMAXPROCS(0)
	c.max = n
	return n
}

// maxProcs is the most processors set since resetMax (or the current
// number when no controller runs).
func (c *procsController) maxProcs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(c.max, runtime.GOMAXPROCS(0))
}

func (c *procsController) loop(stop <-chan struct{}, cores int) {
	t := time.NewTicker(procsTick)
	defer t.Stop()
	last, lastCPU := time.Now(), processCPUSeconds()
	idle := 0
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			cpu := processCPUSeconds()
			busy := (cpu - lastCPU) / now.Sub(last).Seconds() // cores' worth
			last, lastCPU = now, cpu
			c.mu.Lock()
			select {
			case <-stop:
				c.mu.Unlock()
				return
			default:
			}
			n := runtime.GOMAXPROCS(0)
			if next := procsNext(n, cores, busy, &idle); next != n {
				runtime.GOMAXPROCS(next)
				c.max = max(c.max, next)
			}
			c.mu.Unlock()
		}
	}
}

// procsNext is the number of processors after a tick in which the process
// used busy cores' worth of CPU with n processors; idle counts the ticks
// in a row that could have done with one fewer.
func procsNext(n, cores int, busy float64, idle *int) int {
	switch {
	case busy > procsBusyAbove*float64(n) && n < cores:
		*idle = 0
		return n + 1
	case n > 1 && busy < procsIdleBelow*float64(n-1):
		*idle++
		if *idle >= procsIdleTicks {
			*idle = 0
			return n - 1
		}
	default:
		*idle = 0
	}
	return n
}
