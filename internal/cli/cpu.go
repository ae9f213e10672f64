package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

const cpuSynopsis = `cpu [--target URL] [--repeat N] [--server-iterations N] [--client-iterations N] [--label L] [--json]

Times a fixed, deterministic, single-threaded loop of integer and string work
inside the database server (PL/pgSQL on PostgreSQL, a stored procedure on
MariaDB/MySQL, a T-SQL batch on SQL Server, a recursive CTE on SQLite), timed
by the server's own clock so
the network does not count, and the same loop in oltplab on this host; each
repeat runs both. It reports rounds per second with their spread, and for the
client also per CPU second of its thread, which a busy host does not lower (in
an experiment's cpu step on a managed instance, the server's loop too, per CPU
second of the server's processes). Compare the rates across hosts and
processor generations of the same engine.

The result is stored (kind cpu); later results measured on this host carry
the newest calibration in their context. Without --target only the client
loop runs.`

// cpuOptions are the flags of `oltplab cpu`.
type cpuOptions struct {
	target  targetFlags
	results storeFlags
	scenario.CPUOptions
	json bool
}

func runCPU(ctx context.Context, a *app, args []string) error {
	var o cpuOptions
	fs := newFlagSet("cpu")
	o.target.register(fs, a.env)
	o.results.register(fs, a.env)
	fs.IntVar(&o.Repeat, "repeat", 3, "run each loop `N` times")
	fs.Int64Var(&o.ServerIterations, "server-iterations", 0, "rounds of the server loop, `N` (default: the engine's, a few seconds on a current core)")
	fs.Int64Var(&o.ClientIterations, "client-iterations", 0, fmt.Sprintf("rounds of the client loop, `N` (default %d)", scenario.DefaultClientIterations))
	fs.StringVar(&o.Label, "label", "", "`LABEL` stored with the result")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
	if err := a.parseFlags(fs, cpuSynopsis, args); err != nil {
		return helpOK(err)
	}
	if err := checkLabel("cpu", o.Label); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return usageErrorf("cpu: %v", err)
	}
	if o.target.target == "" {
		if o.ServerIterations != 0 {
			return usageErrorf("cpu: --server-iterations needs a --target to run in")
		}
		st, err := a.openStore(ctx, o.results)
		if err != nil {
			return err
		}
		defer st.Close()
		return a.cpu(ctx, st, nil, dialect.Target{}, o)
	}
	return a.withTarget(ctx, o.results, o.target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
		return a.cpu(ctx, st, db, tg, o)
	})
}

// cpu runs the calibration and renders it.
func (a *app) cpu(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, o cpuOptions) error {
	env := a.scenarioEnv(st, scenario.Observer{Note: func(m string) { fmt.Fprintln(a.errw(), m) }})
	out, err := env.CPU(ctx, db, tg, o.CPUOptions)
	if out.RunID == 0 {
		return err
	}
	if o.json {
		if jerr := writeJSON(a.out(), out); jerr != nil {
			return jerr
		}
	} else {
		a.printCPU(out, tg, storedIn(err, st.Path()))
	}
	if err != nil && out.Interrupted && errors.Is(err, context.Canceled) {
		return withCode(exitInterrupted, fmt.Errorf("interrupted: what finished is stored as result %d, marked %s", out.RunID, out.Status))
	}
	return err
}

// printCPU renders a calibration: one row per loop, its spread over the
// repeats.
func (a *app) printCPU(r scenario.CPUOutcome, tg dialect.Target, storePath string) {
	w := a.out()
	printCPULoops(w, r.CPU, tg.String())
	if c := r.Monitor.CPU; r.Monitor.Seconds > 0 {
		fmt.Fprintf(w, "host CPU meanwhile: busy %.1f%% (steal %.1f%%): other load on the host lowers rounds/s, not rounds per CPU s\n", c.BusyPct, c.StealPct)
	}
	if storePath != "" {
		fmt.Fprintf(w, "stored as result %d (%s) in %s\n", r.RunID, r.Status, storePath)
	}
}

// printCPULoops renders the loops of a calibration on target (`oltplab
// cpu` and `oltplab results show`).
func printCPULoops(w io.Writer, r summary.CPU, target string) {
	fmt.Fprintf(w, "\nCPU calibration: %s\n", r.Work)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "loop\trounds\truns\trounds/s mean\tmin\tmax\tcv %\trounds per CPU s\t")
	row := func(name string, s summary.CPUSide) {
		cpu := "-"
		if s.CPURate != nil {
			cpu = summary.FormatRate(s.CPURate.Mean)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%.1f\t%s\t\n", name, s.Iterations, len(s.Runs), summary.FormatRate(s.Rate.Mean),
			summary.FormatRate(s.Rate.Min), summary.FormatRate(s.Rate.Max), 100*s.Rate.CV, cpu)
	}
	if r.Server != nil {
		row("server", *r.Server)
	}
	row("client", r.Client)
	tw.Flush()
	source := func(s summary.CPUSide) string {
		if s.CPUSource == "" {
			return ""
		}
		return "; CPU time of " + s.CPUSource
	}
	if r.Server != nil {
		fmt.Fprintf(w, "server: %s on %s%s\n", r.Server.Method, target, source(*r.Server))
	}
	fmt.Fprintf(w, "client: %s%s\n", r.Client.Method, source(r.Client))
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: only the runs above finished")
	}
}
