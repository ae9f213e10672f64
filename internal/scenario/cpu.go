package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// DefaultClientIterations is the client loop's default number of rounds
// of dialect.CalibrationWork: about two CPU seconds (205 M rounds per CPU
// second on our 2-core test VM).
const DefaultClientIterations = 400_000_000

// MaxClientIterations keeps x*31 + i of the loop within 64 bits.
const MaxClientIterations = 1 << 40

// CPUOptions describe a CPU calibration: the same fixed single-threaded
// loop (dialect.CalibrationWork) inside the database server, when there
// is a database, and in oltplab itself, each Repeat times.
type CPUOptions struct {
	Label  string
	Repeat int // at least 1
	// ServerIterations and ClientIterations are the rounds of each loop;
	// 0 takes the dialect's default and DefaultClientIterations.
	ServerIterations int64
	ClientIterations int64
	// Server, when not nil, is the managed instance holding the
	// database: the CPU time its processes use during each server loop
	// gives the server's rounds per CPU second, which other load on the
	// host does not lower.
	Server Server
	// Remote, when set, is the agent of the database's host (a plan's
	// target on another host): the client loop runs there, beside the
	// server, so that both loops time that host's processor; the result's
	// host is that host, sampled by Env.Agent.
	Remote *RemoteCPU
}

// RemoteCPU is the host a remote calibration's client loop runs on.
type RemoteCPU struct {
	Client agent.Client
	Host   string // the plan's name of the host
}

// Validate checks the options.
func (o CPUOptions) Validate() error {
	switch {
	case o.Repeat < 1:
		return fmt.Errorf("%w: repeat must be at least 1, got %d", ErrInvalidOptions, o.Repeat)
	case o.ServerIterations < 0 || o.ClientIterations < 0:
		return fmt.Errorf("%w: iterations must be positive (0: the default)", ErrInvalidOptions)
	case o.ClientIterations > MaxClientIterations:
		return fmt.Errorf("%w: client iterations %d: at most %d", ErrInvalidOptions, o.ClientIterations, int64(MaxClientIterations))
	case o.Remote != nil && o.ClientIterations > agent.MaxCPULoopIterations:
		return fmt.Errorf("%w: client iterations %d: an agent runs at most %d (its loop cannot be interrupted)", ErrInvalidOptions, o.ClientIterations, int64(agent.MaxCPULoopIterations))
	}
	return nil
}

// CPUOutcome is a stored calibration: its summary and where it is.
type CPUOutcome struct {
	RunID  int64        `json:"run_id"`
	Status store.Status `json:"status"`
	summary.CPU
}

// calibrationWork describes dialect.CalibrationWork in results.
const calibrationWork = "x = (x*31 + i) mod 1000003; s = last 16 characters of s + letter('A' + x mod 26), for i = 1..n"

// CPU runs the calibration: for each repeat, the loop in the server (db
// may be nil: the client alone) and then in oltplab, on one locked OS
// thread. It stores one run of kind cpu with the host samples; later
// results on this host carry its rates in their context
// (RunContext.Calibration). A server loop whose checksum is not the
// reference's fails the calibration: it did other work.
func (e *Env) CPU(ctx context.Context, db dialect.Database, tg dialect.Target, o CPUOptions) (CPUOutcome, error) {
	if err := o.Validate(); err != nil {
		return CPUOutcome{}, err
	}
	var cal dialect.CPUCalibrator
	if db != nil {
		var ok bool
		if cal, ok = db.(dialect.CPUCalibrator); !ok {
			return CPUOutcome{}, &UnsupportedError{What: "run the CPU calibration loop", Dialect: db.Name()}
		}
		standard, most := cal.CalibrationIterations()
		if o.ServerIterations == 0 {
			o.ServerIterations = standard
		}
		if o.ServerIterations > most {
			return CPUOutcome{}, fmt.Errorf("%w: server iterations %d: the %s loop runs at most %d", ErrInvalidOptions, o.ServerIterations, db.Name(), most)
		}
	}
	if o.ClientIterations == 0 {
		o.ClientIterations = DefaultClientIterations
	}
	rc := e.GatherContext(ctx, db, tg, nil)
	rc.Calibration = nil // this run is the calibration
	clientMethod := "Go loop on one locked OS thread, timed by oltplab's clock"
	if r := o.Remote; r != nil {
		// Both loops time the database's host: the run is that host's
		// calibration (later results there find it by its host).
		st, err := agent.Open(ctx, r.Client, time.Second, nil)
		if err != nil {
			return CPUOutcome{}, fmt.Errorf("the agent of host %s: %w", r.Host, err)
		}
		rc.Host = st.Hello.Host
		_ = st.Close()
		clientMethod = "Go loop on one locked OS thread of the agent on host " + r.Host + ", timed by its clock"
	}
	dialectName := ""
	if db != nil {
		dialectName = db.Name()
	}
	params := map[string]any{"repeat": o.Repeat, "client_iterations": o.ClientIterations}
	if db != nil {
		params["server_iterations"] = o.ServerIterations
	}
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{Kind: store.KindCPU, Label: o.Label, Target: tg.String(), Dialect: dialectName,
		ToolVersion: e.ToolVersion, ExperimentID: expID, ExperimentSeq: expSeq, Params: JSON(params), Context: JSON(rc)})
	if err != nil {
		return CPUOutcome{}, storeErr("record the CPU calibration", err)
	}
	sum := summary.CPU{Work: calibrationWork,
		Client: summary.CPUSide{Method: clientMethod,
			CPUSource: "the thread's CPU time, clock_gettime(CLOCK_THREAD_CPUTIME_ID)", Iterations: o.ClientIterations}}
	var wantX int64
	var wantS string
	var serverCPU cpuClock
	if cal != nil {
		sum.Server = &summary.CPUSide{Iterations: o.ServerIterations}
		var t cpuTimer
		if o.Server != nil {
			t = o.Server
		}
		serverCPU, sum.Server.CPUSource, _ = serverCPUClock(t)
		wantX, wantS = dialect.CalibrationWork(o.ServerIterations)
		e.note("CPU calibration: %d round(s) in the server (%s) and %d in oltplab, %d time(s)", o.ServerIterations, db.Name(), o.ClientIterations, o.Repeat)
	} else {
		e.note("CPU calibration: %d round(s) in oltplab, %d time(s) (no --target: the client alone)", o.ClientIterations, o.Repeat)
	}

	t0 := time.Now()
	so := sampler.Options{Start: t0, Interval: time.Second, Logger: e.logger()}
	if o.Remote != nil && e.Agent.Addr != "" {
		so.Agent = e.Agent
	}
	s := sampler.Start(ctx, so)
	var runErr error
	for rep := 1; rep <= o.Repeat && runErr == nil; rep++ {
		if err := ctx.Err(); err != nil {
			runErr = err
			break
		}
		if cal != nil {
			var cpu0 float64
			if serverCPU != nil {
				var err error
				if cpu0, err = serverCPU(); err != nil {
					runErr = fmt.Errorf("read the server's CPU time: %w", err)
					break
				}
			}
			start := time.Now()
			c, err := cal.CalibrateCPU(ctx, o.ServerIterations)
			end := time.Now()
			if err != nil {
				runErr = fmt.Errorf("CPU calibration in the server: %w", err)
				break
			}
			var cpuSeconds *float64
			if serverCPU != nil {
				cpu1, err := serverCPU()
				if err != nil {
					runErr = fmt.Errorf("read the server's CPU time: %w", err)
					break
				}
				d := cpu1 - cpu0
				cpuSeconds = &d
			}
			if c.X != wantX || c.S != wantS {
				runErr = fmt.Errorf("the server's calibration loop ended at x %d s %q, want x %d s %q: it did other work than oltplab's loop", c.X, c.S, wantX, wantS)
				break
			}
			sum.Server.Method = c.Method
			run := summary.CPURun{Repeat: rep, Seconds: c.Seconds, CPUSeconds: cpuSeconds, Rate: c.Rate(), X: c.X, S: c.S,
				Window: summary.SpanOf(t0, start, end)}
			sum.Server.Runs = append(sum.Server.Runs, run)
			e.note("  server: %.3f s, %s rounds/s%s", c.Seconds, summary.FormatRate(c.Rate()), perCPUSecond(run))
		}
		var run summary.CPURun
		if r := o.Remote; r != nil {
			var err error
			if run, err = remoteClientLoop(ctx, r, o.ClientIterations, t0); err != nil {
				runErr = fmt.Errorf("CPU calibration on host %s: %w", r.Host, err)
				break
			}
		} else {
			run = clientLoop(o.ClientIterations, t0)
		}
		run.Repeat = rep
		sum.Client.Runs = append(sum.Client.Runs, run)
		e.note("  client: %.3f s, %s rounds/s%s", run.Seconds, summary.FormatRate(run.Rate), perCPUSecond(run))
	}
	m, samples := StopSampling(s, time.Since(t0), rc.Placement)
	sum.Monitor = m
	sum.Interrupted = ctx.Err() != nil
	sum.Client.Rate, sum.Client.CPURate = rateSpread(sum.Client.Runs)
	if sum.Server != nil {
		sum.Server.Rate, sum.Server.CPURate = rateSpread(sum.Server.Runs)
	}

	status := summary.Status(summary.Facts{Measured: len(sum.Client.Runs) > 0, Failed: runErr != nil})
	errText := ""
	if runErr != nil {
		errText = e.scrub(runErr.Error())
		if sum.Interrupted {
			errText = "interrupted"
		}
	}
	out := CPUOutcome{RunID: id, Status: status, CPU: sum}
	// What was measured is kept whatever the store does (Env.complete).
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: JSON(sum), Error: errText, Samples: samples}); err != nil {
		return out, err
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return out, &RunError{RunID: id, Status: status, Err: runErr}
	}
	return out, runErr
}

// clientLoop runs dialect.CalibrationWork on one locked OS thread, timed
// by the wall clock and by the thread's CPU time.
func clientLoop(n int64, t0 time.Time) summary.CPURun {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, cpuOK := sysstat.ThreadCPUTime()
	start := time.Now()
	x, s := dialect.CalibrationWork(n)
	end := time.Now()
	cpu1, _ := sysstat.ThreadCPUTime()
	r := summary.CPURun{Seconds: end.Sub(start).Seconds(), X: x, S: s, Window: summary.SpanOf(t0, start, end)}
	if r.Seconds > 0 {
		r.Rate = float64(n) / r.Seconds
	}
	if cpuOK {
		c := (cpu1 - cpu0).Seconds()
		r.CPUSeconds = &c
	}
	return r
}

// remoteClientLoop runs the client loop on the agent's host: timed by
// its clock there; its window on this machine's time axis is the request's.
func remoteClientLoop(ctx context.Context, r *RemoteCPU, n int64, t0 time.Time) (summary.CPURun, error) {
	start := time.Now()
	l, err := r.Client.CPULoop(ctx, n)
	end := time.Now()
	if err != nil {
		return summary.CPURun{}, err
	}
	run := summary.CPURun{Seconds: l.Ended.Sub(l.Started).Seconds(), CPUSeconds: l.CPUSeconds, X: l.X, S: l.S,
		Window: summary.SpanOf(t0, start, end)}
	if run.Seconds > 0 {
		run.Rate = float64(n) / run.Seconds
	}
	return run, nil
}

// perCPUSecond prints a run's rounds per CPU second, when its CPU time
// is known.
func perCPUSecond(r summary.CPURun) string {
	if r.CPUSeconds == nil || *r.CPUSeconds <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%s rounds per CPU s)", summary.FormatRate(r.Rate*r.Seconds / *r.CPUSeconds))
}

// rateSpread is the spread of the runs' rates, and of their rates per CPU
// second when every run has its CPU time.
func rateSpread(runs []summary.CPURun) (profile.Summary, *profile.Summary) {
	var rates, cpuRates []float64
	for _, r := range runs {
		rates = append(rates, r.Rate)
		if r.CPUSeconds != nil && *r.CPUSeconds > 0 {
			cpuRates = append(cpuRates, r.Rate*r.Seconds / *r.CPUSeconds)
		}
	}
	s := profile.Summarize(rates)
	if len(cpuRates) == 0 || len(cpuRates) != len(rates) {
		return s, nil
	}
	c := profile.Summarize(cpuRates)
	return s, &c
}

// Calibration is the newest CPU calibration of a host, carried in the
// context of later results on it so that they can be compared across
// processor generations and hosts.
type Calibration struct {
	RunID      int64     `json:"run_id"`
	MeasuredAt time.Time `json:"measured_at"`
	// ClientRate is the client loop's mean rounds per second on this
	// host; ClientCPURate per CPU second of its thread.
	ClientRate    float64  `json:"client_rate"`
	ClientCPURate *float64 `json:"client_cpu_rate,omitempty"`
	// ServerRate is the server loop's mean rounds per second, of the
	// database (Dialect, Target) it was measured on; 0 when none was.
	ServerRate float64 `json:"server_rate,omitempty"`
	// ServerCPURate is its rounds per CPU second of the server's
	// processes, when they were measured (a managed instance).
	ServerCPURate *float64 `json:"server_cpu_rate,omitempty"`
	Dialect       string   `json:"dialect,omitempty"`
	Target        string   `json:"target,omitempty"`
}

// calibrationLookback is how many of the newest cpu runs are searched
// for one of this host.
const calibrationLookback = 50

// latestCalibration finds the newest finished calibration measured on a
// host of the same name and processor; nil when there is none.
func (e *Env) latestCalibration(ctx context.Context, h sysstat.Host) (*Calibration, error) {
	if e.Store == nil || h.Hostname == "" {
		return nil, nil
	}
	runs, err := e.Store.ListRuns(ctx, store.RunFilter{Kind: store.KindCPU, Counting: true, Limit: calibrationLookback})
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.Status != store.StatusOK && r.Status != store.StatusPartial {
			continue
		}
		var rc struct {
			Host sysstat.Host `json:"host"`
		}
		if json.Unmarshal(r.Context, &rc) != nil {
			continue
		}
		sum, err := summary.DecodeCPU(r.Summary)
		if err != nil {
			continue
		}
		if rc.Host.Hostname != h.Hostname || rc.Host.CPUModel != h.CPUModel || len(sum.Client.Runs) == 0 {
			continue
		}
		c := &Calibration{RunID: r.ID, MeasuredAt: r.StartedAt, ClientRate: sum.Client.Rate.Mean}
		if sum.Client.CPURate != nil {
			v := sum.Client.CPURate.Mean
			c.ClientCPURate = &v
		}
		if sum.Server != nil && len(sum.Server.Runs) > 0 {
			c.ServerRate, c.Dialect, c.Target = sum.Server.Rate.Mean, r.Dialect, r.Target
			if sum.Server.CPURate != nil {
				v := sum.Server.CPURate.Mean
				c.ServerCPURate = &v
			}
		}
		return c, nil
	}
	return nil, nil
}
