package driver

import (
	"os"
	"runtime"
	"testing"
)

func TestProcsNext(t *testing.T) {
	const cores = 4
	for _, tc := range []struct {
		name       string
		n          int
		busy       []float64 // one tick each
		want, idle int
	}{
		{"light load stays on one", 1, []float64{0.1, 0.3, 0.5}, 1, 0},
		{"busy one gets a second", 1, []float64{0.6}, 2, 0},
		{"busy two get a third", 2, []float64{1.2}, 3, 0},
		{"never above the cores", cores, []float64{cores}, cores, 0},
		{"a lull must last", 3, []float64{0.2, 0.2, 0.2}, 3, 3},
		{"a busy tick ends the lull", 3, []float64{0.2, 0.2, 0.8}, 3, 0},
		{"a long lull gives one back", 3, repeat(0.2, procsIdleTicks), 2, 0},
		{"one is the least", 1, repeat(0, 2*procsIdleTicks), 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, idle := tc.n, 0
			for _, b := range tc.busy {
				n = procsNext(n, cores, b, &idle)
			}
			if n != tc.want || idle != tc.idle {
				t.Errorf("got %d processors, %d idle ticks; want %d, %d", n, idle, tc.want, tc.idle)
			}
		})
	}
}

func repeat(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestAcquireProcs: runs start on one processor, the last one to end
// restores what the process had, and GOMAXPROCS in the environment wins.
func TestAcquireProcs(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" || runtime.NumCPU() < 2 {
		t.Skip("GOMAXPROCS is set in the environment, or one core: the controller stays off (tested below)")
	}
	before := runtime.GOMAXPROCS(0)
	r1 := acquireProcs()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS during a run: %d, want 1", got)
	}
	if got := procs.resetMax(); got != 1 {
		t.Errorf("resetMax: %d, want 1", got)
	}
	r2 := acquireProcs()
	r1()
	r1() // a second release of the same run changes nothing
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS while a second run goes on: %d, want 1", got)
	}
	r2()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS after the runs: %d, want %d", got, before)
	}

	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(before)
	r := acquireProcs()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("GOMAXPROCS set in the environment: the run has %d, want 2", got)
	}
	r()
}
