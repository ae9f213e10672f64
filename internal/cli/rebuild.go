package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

const rebuildSynopsis = `rebuild --engine postgres|mariadb|sqlite --data-dir DIR [--warehouses W] [instance flags] [--all-indexes] [--repeat N] [--cold=false]
       oltplab rebuild --target URL [--all-indexes] [--repeat N]

Rebuilds the largest index of ORDER-LINE, its primary key (or every index of
ORDER-LINE with --all-indexes), after a cold restart and again warm, and
reports per rebuild the elapsed time, the server's CPU time and their
difference: the time the rebuild waited (for I/O, for locks, and on a busy
host for a CPU) rather than computed.

How each engine rebuilds, and what it rewrites:
  PostgreSQL  REINDEX INDEX order_line_pkey, single-threaded: a new index is
              built from a scan of the table; the table is only read.
  MariaDB     InnoDB keeps the rows in the primary key: rebuilding it is
              rebuilding the table, ALTER TABLE order_line FORCE (in place).
  SQLite      REINDEX of the key of a WITHOUT ROWID table rewrites the table.
  SQL Server  ALTER INDEX order_line_pk ON order_line REBUILD WITH (MAXDOP = 1):
              the clustered primary key holds the rows, so this rewrites the
              table (--target only; a server without ALTER INDEX, such as
              Babelfish, cannot run it).

With --engine, oltplab starts a managed instance on DIR for the command (as
"oltplab instance start" does, with the same flags: run it on the storage
and with the read/write caps you want to compare), builds W warehouses there
when the database is empty (a stored build; later runs reuse it), and for
each repeat restarts the server with a cold cache (buffer pool emptied, the
OS page cache dropped when oltplab runs as root), rebuilds, and rebuilds
again warm. The server's CPU time comes from its cgroup or /proc (SQLite is
embedded: oltplab's own CPU time). The server stops when the command ends.

With --target (a server oltplab did not start) the cache cannot be emptied
and the server's CPU time is not known: warm rebuilds, elapsed time only,
and the result says so.

Everything is stored as one result of kind rebuild, with the host sampled
every second and each rebuild's window.`

// rebuildOptions are the flags of `oltplab rebuild`.
type rebuildOptions struct {
	target     targetFlags
	results    storeFlags
	spec       instance.Spec
	engine     string
	warehouses int
	workers    int
	scenario.RebuildOptions
	json bool
}

func runRebuild(ctx context.Context, a *app, args []string) error {
	var o rebuildOptions
	fs := newFlagSet("rebuild")
	o.target.register(fs, a.env)
	o.results.register(fs, a.env)
	specFlags(fs, &o.spec, &o.engine, "start a managed postgres, mariadb or sqlite instance on --data-dir for the rebuild (instead of --target)", "rebuild-ENGINE", "")
	fs.IntVar(&o.warehouses, "warehouses", 0, "with --engine: build `W` warehouses when the database is empty (a database that holds another number is an error)")
	fs.IntVar(&o.workers, "workers", 4, "with --engine: `N` parallel load connections for that build")
	fs.BoolVar(&o.AllIndexes, "all-indexes", false, "rebuild every index of ORDER-LINE instead of the largest")
	fs.BoolVar(&o.Cold, "cold", true, "before each warm rebuild, rebuild after a cold restart (--engine only; --cold=false: warm only)")
	fs.IntVar(&o.Repeat, "repeat", 1, "run the cold and warm rebuilds `N` times")
	fs.StringVar(&o.Label, "label", "", "`LABEL` stored with the result")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
	if err := a.parseFlags(fs, rebuildSynopsis, args); err != nil {
		return helpOK(err)
	}
	if err := checkLabel("rebuild", o.Label); err != nil {
		return err
	}
	set := fs.Changed
	if err := o.RebuildOptions.Validate(); err != nil {
		return usageErrorf("rebuild: %v", err)
	}
	managed := o.engine != "" || o.spec.DataDir != ""
	switch {
	case managed && o.target.target != "" && set("target"):
		return usageErrorf("rebuild: give either --target or --engine with --data-dir, not both")
	case !managed && o.target.target == "":
		return usageErrorf("rebuild: want --engine ENGINE --data-dir DIR (a managed instance) or --target URL (see `oltplab rebuild --help`)")
	case !managed && (o.warehouses != 0 || set("workers")):
		return usageErrorf("rebuild: --warehouses and --workers build on a managed instance (--engine); build a --target with `oltplab build`")
	case o.warehouses < 0:
		return usageErrorf("rebuild: --warehouses must be positive, got %d", o.warehouses)
	}
	if !managed {
		for _, f := range []string{"name", "wal-dir", "memory", "memory-limit", "cpus", "read-iops", "write-iops", "read-mbps", "write-mbps", "set", "bin-dir"} {
			if set(f) {
				return usageErrorf("rebuild: --%s configures a managed instance: give --engine and --data-dir with it", f)
			}
		}
		// A cold cache needs a server oltplab may restart: asked for
		// explicitly, the scenario measures warm only and says so.
		o.Cold = set("cold") && o.Cold
		return a.withTarget(ctx, o.results, o.target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
			return a.rebuild(ctx, st, db, tg, o.RebuildOptions, o.json, nil)
		})
	}
	if o.spec.Name == "" {
		o.spec.Name = "rebuild-" + o.engine
	}
	if err := checkSpec("rebuild", &o.spec, o.engine); err != nil {
		return err
	}
	st, err := a.openStore(ctx, o.results)
	if err != nil {
		return err
	}
	defer st.Close()
	inst, stop, err := a.startInstance(ctx, o.spec, nil)
	if err != nil {
		return err
	}
	defer stop()
	d := inst.Describe()
	fmt.Fprintf(a.errw(), "instance %s ready on %s\n", o.spec.InstanceName(), d.EngineDir)
	for _, c := range d.Controls {
		fmt.Fprintf(a.errw(), "  %s\n", c)
	}
	tg := inst.Target()
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		return err
	}
	defer func() { db.Close() }()
	if err := a.buildIfEmpty(ctx, st, db, tg, o.warehouses, o.workers); err != nil {
		return err
	}
	o.Server, o.DataDir = inst, o.spec.DataDir
	return a.rebuild(ctx, st, db, tg, o.RebuildOptions, o.json, func(env *scenario.Env) {
		env.Instance, env.OwnIO = d, scenario.OwnIO(inst)
	})
}

// buildIfEmpty builds warehouses into a managed instance's empty database;
// a database built before is used as it is when it holds that many.
func (a *app) buildIfEmpty(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, warehouses, workers int) error {
	meta, err := scenario.ReadSchema(ctx, db, tg)
	switch {
	case errors.Is(err, scenario.ErrNoSchema) && warehouses == 0:
		return fmt.Errorf("the managed instance's database is empty: give --warehouses W to build it first: %w", scenario.ErrNoSchema)
	case errors.Is(err, scenario.ErrNoSchema):
		o := load.Options{Warehouses: warehouses, Workers: workers, Seed: drawSeed(), ToolVersion: version()}
		if err := o.Validate(); err != nil {
			return usageErrorf("rebuild: %v", err)
		}
		// Progress and the build's result go to stderr: stdout is the
		// rebuild's.
		pr := newBuildProgress(a.errw(), isTerminal(a.errw()))
		id, res, err := a.scenarioEnv(st, scenario.Observer{Note: func(m string) { fmt.Fprintln(a.errw(), m) }, BuildProgress: pr.Update}).
			Build(ctx, db, tg, o)
		pr.Finish()
		if err == nil {
			fmt.Fprintf(a.errw(), "built %d warehouse(s) in %.1f s, stored as result %d\n", res.Warehouses, res.TotalSeconds, id)
		}
		return err
	case err != nil:
		return err
	case warehouses != 0 && meta.Warehouses != warehouses:
		return fmt.Errorf("the managed instance's database holds %d warehouse(s), not %d: use another --data-dir, or leave out --warehouses: %w",
			meta.Warehouses, warehouses, errSchemaMismatch)
	}
	return nil
}

// errSchemaMismatch: a database built with another scale than asked for.
var errSchemaMismatch = errors.New("schema of another scale")

// rebuild runs the scenario and renders its outcome.
func (a *app) rebuild(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, o scenario.RebuildOptions, asJSON bool,
	managed func(*scenario.Env)) error {
	env := a.scenarioEnv(st, scenario.Observer{Note: func(m string) { fmt.Fprintln(a.errw(), m) }})
	if managed != nil {
		managed(env)
	}
	out, err := env.Rebuild(ctx, db, tg, o)
	if out.RunID == 0 {
		return err
	}
	if asJSON {
		if jerr := writeJSON(a.out(), out); jerr != nil {
			return jerr
		}
	} else {
		a.printRebuild(out, storedIn(err, st.Path()))
	}
	if err != nil && out.Interrupted && errors.Is(err, context.Canceled) {
		return withCode(exitInterrupted, fmt.Errorf("interrupted: the %d rebuild(s) that finished are stored as result %d, marked %s", len(out.Phases), out.RunID, out.Status))
	}
	return err
}

// printRebuild renders a rebuild as a table, one row per rebuild.
func (a *app) printRebuild(r scenario.RebuildOutcome, storePath string) {
	printRebuildPhases(a.out(), r.Rebuild)
	a.printMonitorSummary(r.Monitor)
	if storePath != "" {
		fmt.Fprintf(a.out(), "stored as result %d (%s) in %s\n", r.RunID, r.Status, storePath)
	}
}

// storedIn is the store's path when err says nothing went wrong storing
// the result, else "" (the error says where it went).
func storedIn(err error, path string) string {
	var se *scenario.StoreError
	if errors.As(err, &se) {
		return ""
	}
	return path
}

// printRebuildPhases renders what a rebuild rewrote and one row per
// rebuild, with each cache state's spread and the notes (`oltplab
// rebuild` and `oltplab results show`).
func printRebuildPhases(w io.Writer, r summary.Rebuild) {
	what := "index " + r.Index
	if r.AllIndexes {
		what = "every index"
	}
	fmt.Fprintf(w, "\nrebuild of %s of %s: rewrites the %s\n", what, r.Table, r.Rebuild.Rewrites)
	if r.Rebuild.Method != "" {
		fmt.Fprintf(w, "  %s\n", r.Rebuild.Method)
	}
	for _, ix := range r.Indexes {
		size := "size unknown"
		if ix.SizeBytes >= 0 {
			size = fmt.Sprintf("%.1f MiB", float64(ix.SizeBytes)/(1<<20))
		}
		fmt.Fprintf(w, "  %s: %s before (%s)\n", ix.Name, size, ix.SizeSource)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\nrepeat\tcache\tpage cache dropped\telapsed s\tserver CPU s\twaited s\twaited %\tserver read MB\treads\tserver written MB\twrites\tdevice read MB/s\twrite MB/s\tsize after MiB\t")
	for _, p := range r.Phases {
		dropped := "-"
		if p.Cache == summary.CacheCold {
			dropped = map[bool]string{true: "yes", false: "no"}[p.CacheDropped]
		}
		cpu, wait, waitPct := "-", "-", "-"
		if p.ServerCPUSeconds != nil {
			cpu, wait = fmt.Sprintf("%.2f", *p.ServerCPUSeconds), fmt.Sprintf("%.2f", *p.WaitSeconds)
			if p.ElapsedSeconds > 0 {
				waitPct = fmt.Sprintf("%.0f", 100**p.WaitSeconds/p.ElapsedSeconds)
			}
		}
		// The devices under the data directory (all of them when it is
		// not known).
		var readMBps, writeMBps float64
		for _, d := range p.Host.Devices {
			if len(d.Roles) > 0 || !hasRoles(p.Host.Devices) {
				readMBps += d.ReadMBps
				writeMBps += d.WriteMBps
			}
		}
		elapsed := fmt.Sprintf("%.2f", p.ElapsedSeconds)
		if p.Error != "" {
			elapsed = "FAILED"
		}
		size := "-"
		if p.SizeAfterBytes >= 0 {
			size = fmt.Sprintf("%.1f", float64(p.SizeAfterBytes)/(1<<20))
		}
		io := "-\t-\t-\t-"
		if c := p.ServerIO; c != nil {
			io = fmt.Sprintf("%.1f\t%d\t%.1f\t%d", float64(c.ReadBytes)/1e6, c.ReadIOs, float64(c.WriteBytes)/1e6, c.WriteIOs)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t\n", p.Repeat, p.Cache, dropped, elapsed, cpu, wait, waitPct,
			io, readMBps, writeMBps, size)
	}
	tw.Flush()
	for _, c := range []struct {
		name string
		s    *summary.RebuildSpread
	}{{"cold", r.Cold}, {"warm", r.Warm}} {
		if c.s == nil || c.s.Elapsed.N < 2 {
			continue
		}
		line := fmt.Sprintf("%s: elapsed %.2f s mean (min %.2f, max %.2f, sd %.2f)", c.name, c.s.Elapsed.Mean, c.s.Elapsed.Min, c.s.Elapsed.Max, c.s.Elapsed.StdDev)
		if c.s.CPU != nil {
			line += fmt.Sprintf(", server CPU %.2f s, waited %.2f s", c.s.CPU.Mean, c.s.Wait.Mean)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "MB: 10^6 bytes; server I/O as its cgroup counted it, device MB/s from the host's disk statistics (every process)")
	if r.CPUSource != "" {
		fmt.Fprintf(w, "server CPU: %s; waited = elapsed - server CPU: I/O, locks, and a CPU when the host is busy\n", r.CPUSource)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: only the rebuilds above finished")
	}
}

// hasRoles reports whether any device is known to hold the data.
func hasRoles(devs []sampler.DeviceSummary) bool {
	for _, d := range devs {
		if len(d.Roles) > 0 {
			return true
		}
	}
	return false
}
