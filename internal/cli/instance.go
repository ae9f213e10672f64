package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/store"
)

// instanceUsage is `oltplab instance --help`.
const instanceUsage = `Usage: oltplab instance start|list|stop ...

Managed instances: private PostgreSQL or MariaDB servers oltplab starts
from the installed binaries, on loopback, on a free port (or --port), with
a generated password, on the data directory (the storage) you choose, with
the memory, cores and I/O caps you give them.

  oltplab instance start --engine postgres --data-dir DIR [FLAGS]
      runs one in the foreground: prints its target URL and password file,
      stays until Ctrl-C, SIGTERM or "oltplab instance stop NAME", then
      shuts the server down. The server never outlives the command.
  oltplab instance list [--json]
      shows the running instances (stale ones: their process is gone).
  oltplab instance stop NAME
      asks the foreground process of NAME to stop it, and waits.

Running instances are listed, each with its password file, in
$XDG_STATE_HOME/oltplab/instances (else ~/.local/state/oltplab/instances),
removed when the instance stops. Instances an earlier oltplab listed in
./instances (or beside the results store, or in $XDG_RUNTIME_DIR/oltplab)
are still found, with a note; oltplab never removes that folder.

Run "oltplab instance start --help" for the flags.
`

func instanceCommands() []command {
	return []command{
		{name: "start", run: func(ctx context.Context, a *app, args []string) error { return a.instanceStart(ctx, args) }, summary: "start a managed server on a data directory"},
		{name: "list", run: func(_ context.Context, a *app, args []string) error { return a.instanceList(args) },
			summary: "list the managed servers running"},
		{name: "stop", run: func(ctx context.Context, a *app, args []string) error { return a.instanceStop(ctx, args) }, summary: "stop a managed server"},
	}
}

func runInstance(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(a.stdio.Out, instanceUsage)
		return usageErrorf("instance: want start, list or stop (see `oltplab instance --help`)")
	}
	if c, ok := findCommand(instanceCommands(), args[0]); ok {
		return c.run(ctx, a, args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(a.stdio.Out, instanceUsage)
		return nil
	}
	return usageErrorf("instance: unknown subcommand %q (want start, list or stop)", args[0])
}

// registry is where running instances are listed: the state directory,
// $XDG_STATE_HOME/oltplab/instances, else ~/.local/state/oltplab/instances.
func (a *app) registry() (instance.Registry, error) {
	d, err := instance.StateDir(func(k string) string { return a.env[k] })
	if err != nil {
		return instance.Registry{}, fmt.Errorf("locate the instance registry: %w", err)
	}
	return instance.Registry{Dir: filepath.Join(d, "instances")}, nil
}

// legacyRegistries are the places an earlier oltplab listed running
// instances in, that list some: $XDG_RUNTIME_DIR/oltplab/instances, the
// folder instances beside the default results store ($OLTPLAB_RESULTS's
// directory, often the current one) and ./instances. Their instances are
// still found (listed, stopped, used by name); oltplab writes nothing
// new there and never removes the folders.
func (a *app) legacyRegistries() []instance.Registry {
	cur, err := a.registry()
	if err != nil {
		return nil
	}
	var dirs []string
	if d := a.env["XDG_RUNTIME_DIR"]; d != "" && filepath.IsAbs(d) {
		dirs = append(dirs, filepath.Join(d, "oltplab", "instances"))
	}
	getenv := func(k string) string { return a.env[k] }
	if p, err := store.DefaultPath(getenv); err == nil && !store.IsPostgresURL(p) {
		dirs = append(dirs, filepath.Join(filepath.Dir(p), "instances"))
	}
	if d, err := store.DataDir(getenv); err == nil {
		dirs = append(dirs, filepath.Join(d, "instances"))
	}
	dirs = append(dirs, "instances")
	var out []instance.Registry
	seen := map[string]bool{cur.Dir: true}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil || seen[abs] {
			continue
		}
		seen[abs] = true
		if r := (instance.Registry{Dir: abs}); r.HasEntries() {
			out = append(out, r)
		}
	}
	return out
}

// noteLegacy says where an earlier oltplab's instances were found.
func (a *app) noteLegacy(legacy []instance.Registry) {
	cur, err := a.registry()
	if err != nil {
		return
	}
	for _, r := range legacy {
		fmt.Fprintf(a.errw(), "oltplab: note: %s lists instances an earlier oltplab started: they are still found; new ones are listed in %s. "+
			"oltplab leaves that folder as it is: remove it yourself once it lists none you need.\n", r.Dir, cur.Dir)
	}
}

// listInstances lists the running instances of the registry and of the
// legacy ones, sorted by name.
func (a *app) listInstances() ([]instance.Entry, []instance.Registry, error) {
	reg, err := a.registry()
	if err != nil {
		return nil, nil, err
	}
	entries, err := reg.List()
	if err != nil {
		return nil, nil, err
	}
	legacy := a.legacyRegistries()
	for _, r := range legacy {
		more, err := r.List()
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, more...)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return entries, legacy, nil
}

// findInstance finds the instance of that name in the registry, else in
// a legacy one (instance.ErrNotRegistered when none lists it).
func (a *app) findInstance(name string) (instance.Entry, instance.Registry, error) {
	reg, err := a.registry()
	if err != nil {
		return instance.Entry{}, reg, err
	}
	e, err := reg.Get(name)
	if !errors.Is(err, instance.ErrNotRegistered) {
		return e, reg, err
	}
	for _, r := range a.legacyRegistries() {
		if le, lerr := r.Get(name); lerr == nil {
			return le, r, nil
		}
	}
	return e, reg, err
}

// settingsFlag collects repeated --set NAME=VALUE.
type settingsFlag map[string]string

func (s settingsFlag) String() string {
	var kv []string
	for k, v := range s {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// Type names the value for pflag's help.
func (s settingsFlag) Type() string { return "NAME=VALUE" }

func (s settingsFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	s[k] = val
	return nil
}

// latencyFlag is --latency: latency layer settings (latency.Parse).
type latencyFlag struct{ s **latency.Settings }

func (f latencyFlag) String() string {
	if f.s == nil || *f.s == nil {
		return ""
	}
	return (*f.s).String()
}

// Type names the value for pflag's help.
func (f latencyFlag) Type() string { return "SETTINGS" }

func (f latencyFlag) Set(v string) error {
	s, err := latency.Parse(v)
	if err != nil {
		return err
	}
	*f.s = &s
	return nil
}

// instanceStartOptions is `instance start`: a Spec from flags.
type instanceStartOptions struct {
	spec   instance.Spec
	engine string
}

// specFlags registers the flags of a managed instance's spec, shared by
// `instance start` and the commands that start an instance of their own
// (`rebuild --engine`).
func specFlags(fs *pflag.FlagSet, s *instance.Spec, engine *string, engines, defaultName, dataDirNote string) {
	if s.Settings == nil {
		s.Settings = map[string]string{}
	}
	fs.StringVar(engine, "engine", "", "`ENGINE`: "+engines)
	fs.StringVar(&s.Name, "name", "", "instance `NAME` for list and stop (default: "+defaultName+")")
	fs.StringVar(&s.DataDir, "data-dir", "", "`DIR` for the data: the storage under test (created when missing; an existing one must be empty, or oltplab's own from an earlier start, which is reused as it is"+dataDirNote+")")
	fs.StringVar(&s.WALDir, "wal-dir", "", "separate `DIR` for the WAL (PostgreSQL) or redo log (MariaDB)")
	fs.Var(&s.Memory, "memory", "buffer pool `SIZE` (shared_buffers, innodb_buffer_pool_size), e.g. 512MB, 4GiB (default: the engine's)")
	fs.Var(&s.MemoryLimit, "memory-limit", "cap the server's memory, page cache included, at `SIZE` (cgroup memory), so that a small buffer pool really reads from the device")
	fs.StringVar(&s.CPUs, "cpus", "", "`CPUS` the server may use, as a Linux CPU list: 0, 0-3, 0,2 (cgroup cpuset, else CPU affinity)")
	fs.Int64Var(&s.IOLimit.ReadIOPS, "read-iops", 0, "cap read IOPS on the disk under the directories at `N` (cgroup blkio or io.max)")
	fs.Int64Var(&s.IOLimit.WriteIOPS, "write-iops", 0, "cap write IOPS at `N`")
	fs.Float64Var(&s.IOLimit.ReadMBps, "read-mbps", 0, "cap reads at `MB/s` (10^6 bytes per second)")
	fs.Float64Var(&s.IOLimit.WriteMBps, "write-mbps", 0, "cap writes at `MB/s`")
	fs.Var(settingsFlag(s.Settings), "set", "further server setting `NAME=VALUE` (repeatable), e.g. --set work_mem=64MB; "+
		"settings that control listening, the port or socket, authentication, file locations or loaded code are refused, in any spelling")
	fs.StringVar(&s.BinDir, "bin-dir", "", "`DIR` of the server binaries (default: found, e.g. /usr/lib/postgresql/15/bin)")
}

// checkSpec completes a spec from flags: the engine by name, a data
// directory, and the spec's own validation against this host.
func checkSpec(cmd string, s *instance.Spec, engine string) error {
	if engine == "" {
		return usageErrorf("%s: --engine is required (postgres or mariadb)", cmd)
	}
	if err := s.Engine.UnmarshalText([]byte(engine)); err != nil {
		return usageErrorf("%s: %v", cmd, err)
	}
	if s.DataDir == "" {
		return usageErrorf("%s: --data-dir is required", cmd)
	}
	host, err := instance.LiveHost()
	if err != nil {
		return err
	}
	return s.Validate(host)
}

// startInstance starts a managed instance for the length of a command,
// listed in the registry under its name meanwhile (so that `instance list`
// shows it and `instance stop` stops the command). stop stops the server
// and removes the entry; the server also stops when ctx ends.
func (a *app) startInstance(ctx context.Context, s instance.Spec, pwFile func(instance.Registry, string) string) (inst *instance.Instance, stop func(), err error) {
	name := s.InstanceName()
	reg, err := a.registry()
	if err != nil {
		return nil, nil, err
	}
	for _, r := range a.legacyRegistries() {
		if e, err := r.Get(name); err == nil && !e.Stale {
			return nil, nil, usageErrorf("%v: %s runs in process %d (listed in %s): stop it or choose another --name", instance.ErrNameInUse, name, e.OwnerPID, r.Dir)
		}
	}
	if err := reg.Reserve(name); err != nil {
		if errors.Is(err, instance.ErrNameInUse) {
			return nil, nil, usageErrorf("%v: stop it or choose another --name", err)
		}
		return nil, nil, err
	}
	inst, err = instance.Start(ctx, s, a.log)
	if err != nil {
		reg.Remove(name)
		return nil, nil, err
	}
	stop = func() {
		if err := inst.Stop(context.WithoutCancel(ctx)); err != nil {
			a.log.Warn("stop instance "+name, "err", err)
		}
		reg.Remove(name)
	}
	tg := inst.Target()
	a.secrets = append(a.secrets, tg.Password)
	d := inst.Describe()
	e := instance.Entry{Name: name, Engine: s.Engine, ServerPID: inst.PID(), Target: tg.String(), Started: d.Started, Description: d}
	if pwFile != nil {
		e.PasswordFile = pwFile(reg, name)
	}
	if err := reg.Update(e); err != nil {
		stop()
		return nil, nil, err
	}
	return inst, stop, nil
}

func (a *app) instanceStart(ctx context.Context, args []string) error {
	var o instanceStartOptions
	s := &o.spec
	fs := newFlagSet("instance start")
	specFlags(fs, s, &o.engine, "postgres or mariadb (required)", "the engine", "; required")
	fs.IntVar(&s.Port, "port", 0, "loopback TCP `PORT` the server listens on (refused when another process listens there; default: a free one)")
	fs.IntVar(&s.MaxConnections, "max-connections", 0, "client connections oltplab will open, `N` (the largest VU step); the server accepts 10 more (default: the engine's)")
	fs.Var(latencyFlag{&s.Latency}, "latency", "put --data-dir and --wal-dir on a latency layer that delays each I/O: "+
		"read=4ms,write=1ms,fsync=6ms,meta=0.5ms; a kind's delay is fixed (4ms), normal 4ms p99 10ms, or lognormal 4ms p99 20ms, "+
		"optionally with 1% at 50ms (a tail) and jitter 0.5ms or 10%; jitter=J for every kind, on=data or on=wal for one directory; "+
		"0 is the layer with zero delays (a tier's baseline). As root, with FUSE; not with the I/O caps")
	synopsis := "instance start --engine postgres|mariadb --data-dir DIR [FLAGS]"
	if err := a.parseFlags(fs, synopsis, args); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if o.engine == string(instance.SQLite) {
		return usageErrorf("instance start: sqlite is embedded and has no server to start: use --target sqlite:PATH")
	}
	if err := checkSpec("instance start", s, o.engine); err != nil {
		return err
	}
	name := s.InstanceName()
	var pwFile string
	inst, stop, err := a.startInstance(ctx, *s, func(reg instance.Registry, name string) string {
		pwFile = reg.PasswordFile(name)
		return pwFile
	})
	if err != nil {
		return err
	}
	defer stop()
	tg := inst.Target()
	if err := os.WriteFile(pwFile, []byte(tg.Password.Reveal()+"\n"), 0o600); err != nil {
		return fmt.Errorf("write the password file: %w", err)
	}
	a.printInstance(name, inst.Describe(), tg.String(), pwFile)

	select {
	case <-ctx.Done():
	case <-inst.Done():
		return withCode(exitServer, fmt.Errorf("instance %s: the server exited on its own (log: %s.log)", name, inst.DataDir()))
	}
	if err := inst.Stop(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("instance %s: stop: %w", name, err)
	}
	fmt.Fprintf(a.out(), "instance %s stopped\n", name)
	if l := inst.Describe().Latency; l != nil && l.SinceStart != nil {
		printLatencyFigures(a.out(), *l.SinceStart)
	}
	return nil
}

// printLatencyFigures prints what a latency layer measured: per kind of
// operation the latency the server saw, and the layer's CPU time.
func printLatencyFigures(w io.Writer, s latency.Summary) {
	fmt.Fprintf(w, "latency layer, over %.0f s:\n", s.Seconds)
	for _, k := range latency.Kinds() {
		f, ok := s.All[k.String()]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "  %-5s  %9d  mean %.3f ms  p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  (delay %.3f ms, layer %.0f µs)\n",
			k, f.Count, f.MeanMillis, f.P50Millis, f.P99Millis, f.P999Millis, f.DelayMeanMillis, f.OwnMeanMicros)
	}
	fmt.Fprintf(w, "  cpu    %.1f s, %.1f µs per operation\n", s.CPUSeconds, s.CPUMicrosPerOp)
}

func (a *app) printInstance(name string, d instance.Description, target, pwFile string) {
	w := a.out()
	version := ""
	if d.Server != nil {
		version = d.Server.Binaries.Version
	}
	fmt.Fprintf(w, "instance %s ready: %s\n", name, version)
	fmt.Fprintf(w, "  target:        %s\n", target)
	fmt.Fprintf(w, "  password file: %s (use --password-file; listed there until it stops)\n", pwFile)
	for _, role := range []string{"data", "wal"} {
		if dev, ok := d.Devices[role]; ok {
			disk := dev.Name
			if disk == "" {
				disk = dev.MountSource
			}
			fmt.Fprintf(w, "  %-13s  %s (%s on %s)\n", role+" dir:", dev.Path, dev.FSType, disk)
		}
	}
	for _, c := range d.Controls {
		fmt.Fprintf(w, "  %s\n", c)
	}
	if l := d.Latency; l != nil {
		fmt.Fprintf(w, "  latency layer: %s (process %d; mounted for the server's processes only, the data stays in the directories)\n", l.Settings, l.PID)
	}
	fmt.Fprintf(w, "Stop with Ctrl-C, SIGTERM or `oltplab instance stop %s`.\n", name)
}

func (a *app) instanceList(args []string) error {
	fs := newFlagSet("instance list")
	asJSON := fs.Bool("json", false, "print the entries, with each instance's description, as JSON")
	if err := a.parseFlags(fs, "instance list [--json]", args); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	entries, legacy, err := a.listInstances()
	if err != nil {
		return err
	}
	a.noteLegacy(legacy)
	if *asJSON {
		if entries == nil {
			entries = []instance.Entry{}
		}
		enc := json.NewEncoder(a.out())
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.out(), "no managed instances running")
		return nil
	}
	tw := tabwriter.NewWriter(a.out(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tENGINE\tSTATE\tPID\tTARGET\tDATA DIR")
	for _, e := range entries {
		state := "running"
		if e.Stale {
			state = "stale (its process is gone)"
		} else if e.ServerPID == 0 {
			state = "starting"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", e.Name, e.Engine, state, e.OwnerPID, e.Target, e.Description.Spec.DataDir)
	}
	return tw.Flush()
}

func (a *app) instanceStop(ctx context.Context, args []string) error {
	fs := newFlagSet("instance stop")
	pos, err := a.parseWithArgs(fs, "instance stop NAME", args)
	if err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("instance stop: want one instance NAME (see `oltplab instance list`)")
	}
	e, reg, err := a.findInstance(pos[0])
	if errors.Is(err, instance.ErrNotRegistered) {
		return usageErrorf("instance stop: no instance %q runs (see `oltplab instance list`)", pos[0])
	}
	if err != nil {
		return err
	}
	if e.Stale {
		if cur, err := a.registry(); err != nil || cur.Dir != reg.Dir {
			fmt.Fprintf(a.out(), "instance %s was not running (its process is gone); its entry in %s is left as it is\n", e.Name, reg.Dir)
			return nil
		}
		reg.Remove(e.Name)
		fmt.Fprintf(a.out(), "instance %s was not running (its process is gone): entry removed\n", e.Name)
		return nil
	}
	if err := syscall.Kill(e.OwnerPID, syscall.SIGTERM); err != nil {
		return fmt.Errorf("instance stop: signal process %d: %w", e.OwnerPID, err)
	}
	// The foreground process stops the server, then removes its entry.
	for deadline := time.Now().Add(5 * time.Minute); ; {
		cur, err := reg.Get(e.Name)
		if errors.Is(err, instance.ErrNotRegistered) || (err == nil && (cur.Stale || cur.OwnerPID != e.OwnerPID)) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("instance stop: %s (process %d) did not stop within 5 minutes", e.Name, e.OwnerPID)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	fmt.Fprintf(a.out(), "instance %s stopped\n", e.Name)
	return nil
}

var _ pflag.Value = settingsFlag(nil)
