package experiment

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

func init() {
	plan.Register(plan.Kind{Name: "cpu", Scope: plan.PerTarget,
		Summary: "time a fixed single-threaded CPU loop in the database server and in oltplab, as `oltplab cpu` (options: repeat, server_iterations, client_iterations)",
		New:     func() plan.Step { return &cpuStep{Repeat: 3} }})
}

// What the cpu kind is, checked by the compiler.
var (
	_ Step                = (*cpuStep)(nil)
	_ Reporter            = (*cpuStep)(nil)
	_ plan.ConnectionUser = (*cpuStep)(nil)
)

var (
	_ Step                = (*cpuStep)(nil)
	_ Reporter            = (*cpuStep)(nil)
	_ plan.ConnectionUser = (*cpuStep)(nil)
)

// cpuStep is `oltplab cpu` on one target (scenario.Env.CPU): the
// calibration loop in the server and in oltplab, repeated, so that
// processor generations and hosts compare; later results on the host
// carry it in their context.
//
//	cpu:
//	  repeat: 3               # runs of each loop
//	  server_iterations: 0    # rounds of the server loop (0: the engine's default)
//	  client_iterations: 0    # rounds of the client loop (0: the default)
type cpuStep struct {
	Repeat           int   `yaml:"repeat"`
	ServerIterations int64 `yaml:"server_iterations"`
	ClientIterations int64 `yaml:"client_iterations"`

	experiment string
}

func (s *cpuStep) options() scenario.CPUOptions {
	return scenario.CPUOptions{Repeat: s.Repeat, ServerIterations: s.ServerIterations, ClientIterations: s.ClientIterations}
}

func (s *cpuStep) Prepare(p *plan.Plan) error {
	if err := s.options().Validate(); err != nil {
		return err
	}
	s.experiment = p.Name
	return nil
}

func (s *cpuStep) Describe() string {
	return fmt.Sprintf("CPU calibration in the server and the client × %d", s.Repeat)
}

func (s *cpuStep) Connections(*plan.Plan) int { return 2 }

// cpuSecondsPerRepeat is a repeat's server and client loops at their
// default rounds on the 2-core test VM under load, rounded up.
const cpuSecondsPerRepeat = 10

func (s *cpuStep) Estimate(*plan.Plan, *plan.TargetSpec) time.Duration {
	return time.Duration(s.Repeat*cpuSecondsPerRepeat) * time.Second
}

func (s *cpuStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	if err := supersedeEarlier(ctx, x, "the CPU calibration step started over"); err != nil {
		return Outcome{}, err
	}
	o := s.options()
	o.Label = s.experiment + "/" + x.Target.Spec.Name
	o.Server = x.Target.Server
	if rm := x.Target.Remote; rm != nil {
		o.Remote = &scenario.RemoteCPU{Client: rm.Client, Host: rm.Host.Name}
		besideTheData(x.Env, "the client loop ran on the database's host, by its agent")
	}
	out, err := x.Env.CPU(ctx, x.Target.DB, x.Target.Target, o)
	oc := Outcome{RunIDs: nonZero(out.RunID)}
	if out.RunID != 0 {
		oc.Headline = out.CPU.Headline()
	}
	return oc, err
}

// Section is the CPU step's part of the report: per target, the server's
// loop and the client's, rounds per second with their spread, and the
// client's rounds per CPU second (which other load on the host does not
// lower).
func (s *cpuStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	t := report.Table{Title: "CPU calibration",
		Note: "The same fixed single-threaded loop (" + calibrationWork + ") inside the database server, timed by its own clock, " +
			"and in oltplab on the host it runs on. Rounds per second fall when other work on the host takes the CPU (its busy share " +
			"meanwhile is shown); rounds per CPU second (of the managed server's processes, or of oltplab's thread) do not: compare " +
			"those across hosts and processor generations, for the same engine.",
		Header: []string{"Target", "Loop", "Method", "Rounds", "Runs", "Rounds/s", "Min", "Max", "CV %", "Rounds per CPU s", "Host CPU busy %"},
		Right:  []bool{false, false, false, true, true, true, true, true, true, true, true}}
	for _, u := range rc.inOrder(rc.Units(index)) {
		sum, err := lastSummary(rc, u.Seq, store.KindCPU, "CPU calibration", summary.DecodeCPU)
		if err != nil {
			return report.Section{}, err
		}
		if sum == nil {
			t.Rows = append(t.Rows, []string{u.Target, "—", "—", "—", "—", "—", "—", "—", "—", "—", string(u.State)})
			continue
		}
		busy := "—"
		switch {
		case sum.Monitor.DatabaseHost != nil:
			// Both loops ran on the database's host (a remote target).
			busy = strconv.FormatFloat(sum.Monitor.DatabaseHost.CPU.BusyPct, 'f', 0, 64)
		case sum.Monitor.Seconds > 0:
			busy = strconv.FormatFloat(sum.Monitor.CPU.BusyPct, 'f', 0, 64)
		}
		row := func(loop string, c summary.CPUSide) {
			perCPU := "—"
			if c.CPURate != nil {
				perCPU = summary.FormatRate(c.CPURate.Mean)
			}
			t.Rows = append(t.Rows, []string{u.Target, loop, c.Method, strconv.FormatInt(c.Iterations, 10), strconv.Itoa(len(c.Runs)),
				summary.FormatRate(c.Rate.Mean), summary.FormatRate(c.Rate.Min), summary.FormatRate(c.Rate.Max), strconv.FormatFloat(100*c.Rate.CV, 'f', 1, 64), perCPU, busy})
		}
		if sum.Server != nil {
			row("server", *sum.Server)
		}
		row("client", sum.Client)
	}
	return report.Section{Tables: []report.Table{t}}, nil
}

// calibrationWork is the loop, as the report states it.
const calibrationWork = "x = (x*31 + i) mod 1000003; s = the last 16 characters of s + the letter 'A' + x mod 26, for i = 1..n"
