package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/summary"
)

// printMonitorSummary renders what the host and the database did.
func (a *app) printMonitorSummary(m summary.Monitor) {
	w := a.out()
	c := m.CPU
	host := "host"
	if m.HostRole != "" && !m.DatabaseHostMeasured {
		host = "load generator host (this machine)"
		fmt.Fprintf(w, "\nnote: the database at %s runs on another machine: the host figures below are the load generator's; the database host was not measured\n",
			m.DatabaseAddress)
	}
	fmt.Fprintf(w, "\n%s during the window (%d s sampled): CPU busy %.1f%% (user %.1f, system %.1f), idle %.1f%%, iowait %.1f%%, steal %.1f%%\n",
		host, m.Seconds, c.BusyPct, c.UserPct, c.SystemPct, c.IdlePct, c.IOWaitPct, c.StealPct)
	printCPUUse(w, m.CPUUse)
	printDevices(w, m.Devices)
	if len(m.Waits) > 0 {
		fmt.Fprintf(w, "database time (%.1f active sessions on average): ", m.AvgActiveSessions)
		for i, ws := range m.Waits {
			if i > 0 {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprintf(w, "%s %.1f%%", ws.Name, ws.SharePct)
		}
		fmt.Fprintln(w)
	}
	if h := m.DatabaseHost; h != nil {
		c := h.CPU
		fmt.Fprintf(w, "database host (oltplab agent at %s) during the window (%d s sampled): CPU busy %.1f%% (user %.1f, system %.1f), idle %.1f%%, iowait %.1f%%, steal %.1f%%\n",
			m.Agent, h.Seconds, c.BusyPct, c.UserPct, c.SystemPct, c.IdlePct, c.IOWaitPct, c.StealPct)
		printDevices(w, h.Devices)
	}
	for _, aw := range m.AvgWaits {
		fmt.Fprintf(w, "  %s: %.2f ms average, %.1f per second\n", aw.Label, aw.AvgMillis, aw.EventsPerS)
	}
	if m.WaitSource != "" {
		fmt.Fprintf(w, "  waits from %s\n", m.WaitSource)
	}
	fmt.Fprintf(w, "samplers: %.2f%% of one core\n", m.SamplerCPUPct)
	for _, warn := range m.Warnings {
		fmt.Fprintf(w, "  note: %s\n", warn)
	}
}

// printCPUUse prints who used the CPU in the window: the database
// server, oltplab, the foreign rest, steal and idle, in cores, with the
// server's CPU per transaction and the foreign CPU on a confined
// server's own CPUs.
func printCPUUse(w io.Writer, u *sampler.CPUUse) {
	if u == nil {
		return
	}
	server, foreign := "not measured", "unknown"
	if u.ServerCores != nil {
		server = fmt.Sprintf("%.2f", *u.ServerCores)
	}
	if u.ForeignCores != nil && u.ForeignPct != nil {
		foreign = fmt.Sprintf("%.2f (%.1f%% of the cores)", *u.ForeignCores, *u.ForeignPct)
	}
	idle := max(0, u.HostCores-u.UsedCores-u.StealCores)
	fmt.Fprintf(w, "who used the CPU (cores of %g): database server %s, oltplab %.2f, foreign %s, steal %.2f, idle %.2f\n",
		u.HostCores, server, u.OltplabCores, foreign, u.StealCores, idle)
	if u.ServerSource != "" {
		fmt.Fprintf(w, "  database server: %s\n", u.ServerSource)
	}
	if u.ServerCPUSeconds != nil {
		per := ""
		if u.ServerCPUMicrosPerTx != nil {
			per = fmt.Sprintf(", %.1f µs per database transaction", *u.ServerCPUMicrosPerTx)
		}
		fmt.Fprintf(w, "  database server CPU %.2f s over the window%s\n", *u.ServerCPUSeconds, per)
	}
	if u.CPUSet != "" && u.CPUSetCores < u.HostCores {
		set := fmt.Sprintf("  on the server's own CPUs %s (%g core(s)): used %.2f", u.CPUSet, u.CPUSetCores, u.CPUSetUsedCores)
		if u.CPUSetForeignCores != nil && u.CPUSetForeignPct != nil {
			set += fmt.Sprintf(", foreign %.2f (%.1f%%; all of oltplab's CPU taken off, some of which ran elsewhere)", *u.CPUSetForeignCores, *u.CPUSetForeignPct)
		}
		fmt.Fprintln(w, set)
	}
	if u.MaxForeignPct > 0 || u.MaxStealPct > 0 {
		fmt.Fprintf(w, "  limits: foreign CPU %g%%, steal %g%% of the cores (above either the run is contaminated)\n", u.MaxForeignPct, u.MaxStealPct)
	}
}

// printDevices prints the block devices of a summary.
func printDevices(w io.Writer, ds []sampler.DeviceSummary) {
	if len(ds) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  device\trole\tread IOPS\twrite IOPS\tread MB/s\twrite MB/s\tlatency ms\tp99 of per-second avg ms\tqueue\tutil %\t")
	for _, d := range ds {
		role := ""
		if len(d.Roles) > 0 {
			role = fmt.Sprint(d.Roles)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%.0f\t%.0f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.1f\t\n", d.Device, role, d.ReadIOPS, d.WriteIOPS,
			d.ReadMBps, d.WriteMBps, d.LatencyMillis, d.LatencyP99Millis, d.QueueDepth, d.UtilPct)
	}
	tw.Flush()
}

const monitorSynopsis = "monitor [--target URL] --duration D [--interval 1s] [--label L] [--agent HOST:PORT] [--json]"

// monitorOptions are the flags of `oltplab monitor`.
type monitorOptions struct {
	target   targetFlags
	results  storeFlags
	duration time.Duration
	interval time.Duration
	label    string
	json     bool
	agent    agentFlags
}

func (o *monitorOptions) register(fs *pflag.FlagSet, env Env) {
	o.target.register(fs, env)
	o.results.register(fs, env)
	fs.DurationVar(&o.duration, "duration", 10*time.Minute, "how long to sample, a `DURATION` (Ctrl-C stops earlier and keeps what was sampled)")
	fs.DurationVar(&o.interval, "interval", time.Second, "host sampling interval, a `DURATION`")
	fs.StringVar(&o.label, "label", "", "`LABEL` stored with the samples")
	fs.BoolVar(&o.json, "json", false, "print the summary as JSON")
	registerAgent(fs, &o.agent)
}

func (o *monitorOptions) validate() error {
	if err := checkLabel("monitor", o.label); err != nil {
		return err
	}
	if o.duration < time.Second {
		return usageErrorf("monitor: --duration must be at least 1s, got %s", o.duration)
	}
	if o.interval < 100*time.Millisecond || o.interval > o.duration {
		return usageErrorf("monitor: --interval must be between 100ms and the duration, got %s", o.interval)
	}
	return nil
}

func runMonitor(ctx context.Context, a *app, args []string) error {
	return monitorCmd(ctx, a, args, a.monitor)
}

// monitorCmd parses args into monitorOptions, checks them and hands them
// to run: a.monitor, or a test's function that keeps them.
func monitorCmd(ctx context.Context, a *app, args []string, run func(context.Context, *monitorOptions) error) error {
	o := &monitorOptions{}
	fs := newFlagSet("monitor")
	o.register(fs, a.env)
	if err := a.parseFlags(fs, monitorSynopsis, args); err != nil {
		return helpOK(err)
	}
	if err := o.validate(); err != nil {
		return err
	}
	return run(ctx, o)
}

// monitor samples the host (and a database, when given) for a while and
// stores the series, for use while something else makes the load.
func (a *app) monitor(ctx context.Context, o *monitorOptions) error {
	st, err := a.openStore(ctx, o.results)
	if err != nil {
		return err
	}
	defer st.Close()
	var (
		db dialect.Database
		tg dialect.Target
	)
	if o.target.target != "" {
		if db, tg, err = a.openTarget(ctx, o.target); err != nil {
			return err
		}
		defer db.Close()
	}
	obs := scenario.Observer{Note: func(msg string) { fmt.Fprintln(a.errw(), msg) }}
	env := a.scenarioEnv(st, obs)
	ac, aerr := o.agent.client(a)
	if aerr != nil {
		return aerr
	}
	env.Agent = ac
	out, merr := env.Monitor(ctx, db, tg, o.label, o.duration, o.interval)
	if merr != nil && !errors.Is(merr, context.Canceled) {
		return merr
	}
	if o.json {
		if err := writeJSON(a.out(), map[string]any{"run_id": out.RunID, "status": out.Status, "monitor": out.Summary}); err != nil {
			return err
		}
	} else {
		a.printMonitorSummary(out.Summary)
		fmt.Fprintf(a.out(), "stored %d samples as result %d in %s\n", out.Samples, out.RunID, st.Path())
	}
	if ctx.Err() != nil {
		return withCode(exitInterrupted, errors.New("interrupted: what was sampled is stored, marked partial"))
	}
	return nil
}
