package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/summary"
)

// TestJudgeRun: a run is contaminated when the foreign CPU on the host,
// or on a confined server's own CPUs, or the steal, passes its limit, and
// says which with the figures; the server's CPU per database transaction
// is taken from its cores over the window; a busy host whose foreign CPU
// cannot be told gets a warning instead (as rebuilds do), never a
// verdict.
func TestJudgeRun(t *testing.T) {
	defer JudgeInterference(true)()
	f := func(v float64) *float64 { return &v }
	use := func(foreignPct, setPct, steal float64) *sampler.CPUUse {
		u := &sampler.CPUUse{HostCores: 2, UsedCores: 1.5, StealPct: steal, OltplabCores: 0.3, ServerCores: f(0.8),
			ForeignCores: f(foreignPct / 100 * 2), ForeignPct: f(foreignPct)}
		if setPct >= 0 {
			u.CPUSet, u.CPUSetCores, u.CPUSetForeignCores, u.CPUSetForeignPct = "0", 1, f(setPct/100), f(setPct)
		}
		return u
	}
	for _, tc := range []struct {
		name string
		use  *sampler.CPUUse
		busy float64
		want []string // prefixes of the reasons
		warn string
	}{
		{name: "quiet", use: use(3, 4, 0)},
		{name: "at the limit", use: use(10, 10, 10)},
		{name: "others on the host", use: use(45, -1, 0), want: []string{"foreign CPU 45% of the host's 2 cores (0.90 cores"}},
		{name: "others on the server's own CPU", use: use(8, 60, 0), want: []string{"foreign CPU 60% of the server's own CPUs 0 (0.60 of their 1 cores)"}},
		{name: "both, and steal", use: use(30, 70, 25), want: []string{"foreign CPU 30%", "foreign CPU 70% of the server's own CPUs", "steal 25% of the host's cores"}},
		{name: "busy, the server's CPU unknown", use: &sampler.CPUUse{HostCores: 2, UsedCores: 1.9, ServerSource: "not measured: the server does not say which process it is"},
			busy: 95, warn: "the host's CPU was 95% busy and the database server's own CPU is unknown (not measured: the server does not say"},
		{name: "busy, not sampled", busy: 97, warn: "(it was not sampled)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &driver.Result{Options: driver.Defaults(), DBTransactions: 4000}
			res.Window.Seconds = 20
			m := &summary.Monitor{DatabaseHostMeasured: true}
			m.CPU.BusyPct = tc.busy
			m.CPUUse = tc.use
			judgeRun(res, m, nil)
			if len(res.Contaminated) != len(tc.want) {
				t.Fatalf("contaminated %q, want %d reason(s) like %q", res.Contaminated, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(res.Contaminated[i], w) {
					t.Errorf("reason %d %q, want it to begin %q", i+1, res.Contaminated[i], w)
				}
			}
			warned := strings.Join(res.Warnings, "\n")
			if (tc.warn == "") != (warned == "") || !strings.Contains(warned, tc.warn) {
				t.Errorf("warnings %q, want %q", res.Warnings, tc.warn)
			}
			if u := tc.use; u != nil && u.ServerCores != nil {
				// 0.8 cores over 20 s is 16 CPU-seconds; over 4000
				// transactions, 4000 µs each.
				if u.ServerCPUSeconds == nil || *u.ServerCPUSeconds != 16 || u.ServerCPUMicrosPerTx == nil || *u.ServerCPUMicrosPerTx != 4000 {
					t.Errorf("server CPU %v s, %v µs per transaction; want 16 and 4000", u.ServerCPUSeconds, u.ServerCPUMicrosPerTx)
				}
				if u.MaxForeignPct != driver.DefaultMaxForeignCPUPct || u.MaxStealPct != driver.DefaultMaxStealPct {
					t.Errorf("limits recorded %g and %g, want the run's", u.MaxForeignPct, u.MaxStealPct)
				}
			}
		})
	}
}

// TestJudgeRunServerExited: a managed server that exited inside the
// window fails the run, with when; one that exited after it does not.
func TestJudgeRunServerExited(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{t0.Add(7500 * time.Millisecond), "the managed server's process exited (signal: killed) 7.5 s into the measured window"},
		{t0.Add(-time.Second), "the managed server's process exited (signal: killed) before the measured window"},
		{t0.Add(21 * time.Second), ""},
	} {
		res := &driver.Result{Options: driver.Defaults()}
		res.Window.Start, res.Window.End, res.Window.Seconds = t0, t0.Add(20*time.Second), 20
		w := &exitWatch{at: tc.at, how: "signal: killed", stop: make(chan struct{}), done: make(chan struct{})}
		close(w.done)
		judgeRun(res, nil, w)
		if got := res.ServerFailureText(); got != tc.want {
			t.Errorf("exit at %s: server failure %q, want %q", tc.at.Sub(t0), got, tc.want)
		}
	}
}
