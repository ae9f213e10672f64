package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/fio"
	"github.com/oltplab/oltplab/internal/scenario"
)

const storageSynopsis = "storage bench DIR [--profile NAME[,NAME]|all] [--runtime D] [--size SIZE] [--fio-option KEY=VALUE]... [--label L] [--json]"

// storageHelp is the synopsis with what the command does and one line per
// profile.
func storageHelp() string {
	var b strings.Builder
	b.WriteString(storageSynopsis + `

Measures the storage under DIR with fio (Debian package fio) before the database
tests: one test file in DIR, written once, then each profile with direct I/O.
Prints per profile and direction IOPS, MB/s (10^6 bytes/s) and fio's completion
latency (mean, p50, p99, p99.9), samples the host meanwhile, stores everything,
and removes the test file, also when interrupted (if oltplab is killed,
oltplab clean --leftovers removes it). DIR must be a directory no other user
could put something in the test file's place in: no link or directory of
another user's on its path, none others may write without the sticky bit.

Profiles (--profile, comma-separated; all runs them in this order):
`)
	for _, p := range fio.Profiles {
		fmt.Fprintf(&b, "  %-15s %s\n", p.Name, p.Describe())
	}
	b.WriteString("All run with ioengine=libaio, direct=1, time_based, group_reporting, jobs as threads.")
	return b.String()
}

// storageOptions are the flags of `oltplab storage bench`.
type storageOptions struct {
	results  storeFlags
	fio      fio.Options
	profiles string
	size     string
	label    string
	json     bool
}

// fioOptionFlag collects repeated --fio-option KEY=VALUE, checked as given.
type fioOptionFlag struct{ opts *[]fio.Option }

func (f fioOptionFlag) String() string {
	if f.opts == nil {
		return ""
	}
	s := make([]string, len(*f.opts))
	for i, o := range *f.opts {
		s[i] = o.String()
	}
	return strings.Join(s, ",")
}

func (f fioOptionFlag) Set(s string) error {
	o, err := fio.ParseOption(s)
	if err != nil {
		return err
	}
	*f.opts = append(*f.opts, o)
	return nil
}

// Type names the value in pflag's help.
func (f fioOptionFlag) Type() string { return "KEY=VALUE" }

func storageCommands() []command {
	return []command{{name: "bench", run: runStorageBench, summary: "measure a directory's device with fio"}}
}

func runStorage(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usageErrorf("storage: want a subcommand: bench DIR (see `oltplab storage --help`)")
	}
	if c, ok := findCommand(storageCommands(), args[0]); ok {
		return c.run(ctx, a, args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		return runStorageBench(ctx, a, []string{"--help"})
	}
	return usageErrorf("storage: unknown subcommand %q (want bench)", args[0])
}

func runStorageBench(ctx context.Context, a *app, args []string) error {
	var o storageOptions
	fs := newFlagSet("storage bench")
	o.results.register(fs, a.env)
	fs.StringVar(&o.profiles, "profile", "all", "profiles to run: `NAME[,NAME]` or all (listed above)")
	fs.DurationVar(&o.fio.Runtime, "runtime", 0, "`DURATION`: measured time of each profile, whole seconds, at least 1s (default: the profile's own, 30s)")
	fs.StringVar(&o.size, "size", "", "test file `SIZE`, e.g. 32G (K, M, G, T: powers of 1024; KB, MB, GB: of 1000); "+
		"default: the host's memory so the page cache could not hold it (twice that without direct I/O, 1 GiB on tmpfs)")
	fs.Var(fioOptionFlag{&o.fio.Extra}, "fio-option", "extra fio job option `KEY=VALUE` applied to every profile after its own, e.g. rwmixread=50 (repeatable)")
	fs.StringVar(&o.label, "label", "", "`LABEL` stored with the result")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
	pos, err := a.parseWithArgs(fs, storageHelp(), args)
	if err != nil {
		return helpOK(err)
	}
	if err := checkLabel("storage bench", o.label); err != nil {
		return err
	}
	if fs.Changed("runtime") && o.fio.Runtime < fio.MinRuntime {
		return usageErrorf("storage bench: --runtime %s: want whole seconds, at least %s (leave it out for each profile's own)", o.fio.Runtime, fio.MinRuntime)
	}
	if len(pos) != 1 {
		return usageErrorf("storage bench: want exactly one directory to measure (see `oltplab storage --help`)")
	}
	o.fio.Dir = pos[0]
	if o.fio.Profiles, err = fio.LookupProfiles(o.profiles); err != nil {
		return storageError(err)
	}
	if o.size != "" {
		if o.fio.SizeBytes, err = fio.ParseSize(o.size); err != nil {
			return storageError(err)
		}
	}
	if p, ok := a.env["PATH"]; ok {
		o.fio.Path = filepath.SplitList(p)
	}
	o.fio.Logger = a.log
	if err := o.fio.Validate(); err != nil {
		return storageError(err)
	}

	st, err := a.openStore(ctx, o.results)
	if err != nil {
		return err
	}
	defer st.Close()
	// A reader that goes away (oltplab storage bench ... | head) must not
	// kill oltplab before it removes the test file: with SIGPIPE notified,
	// writes to the closed pipe fail instead, and the result is stored.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	env := a.scenarioEnv(st, scenario.Observer{Note: func(m string) { fmt.Fprintln(a.errw(), m) }})
	// The test file is recorded before it exists: if oltplab is killed,
	// `oltplab clean --leftovers` removes it.
	o.fio.Tracker = env.Leftovers()
	b, err := fio.Prepare(ctx, o.fio)
	if err != nil {
		return storageError(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			a.log.Warn("storage bench: " + err.Error())
		}
	}()
	res, err := env.Storage(ctx, b, o.label)
	if res.RunID == 0 {
		return err
	}
	if o.json {
		if jerr := writeJSON(a.out(), res); jerr != nil {
			return jerr
		}
	} else {
		a.printStorage(res, st.Path())
	}
	switch {
	case err == nil:
		return nil
	case res.Interrupted && errors.Is(err, context.Canceled):
		return withCode(exitInterrupted, fmt.Errorf("interrupted: the %d profile(s) that finished are stored as result %d, marked partial", len(res.Profiles), res.RunID))
	}
	return err
}

// storageError turns the benchmark's typed errors into exit codes.
func storageError(err error) error {
	var ie *fio.InputError
	switch {
	case errors.As(err, &ie):
		return usageErrorf("storage bench: %s", ie.Msg)
	case errors.Is(err, fio.ErrNotInstalled):
		return withCode(exitFailure, err)
	}
	return err
}

// printStorage renders a storage benchmark as a table.
func (a *app) printStorage(r scenario.StorageOutcome, storePath string) {
	w := a.out()
	how := "direct I/O"
	if !r.DirectIO {
		how = "buffered I/O"
	}
	fmt.Fprintf(w, "\nstorage bench of %s: %s, %s test file (%s), %s\n", r.Dir, r.FioVersion, fio.FormatBytes(r.FileSizeBytes), r.SizeFrom, how)
	if r.Layout != nil {
		fmt.Fprintf(w, "test file written in %.1f s\n", float64(r.Layout.ToMillis-r.Layout.FromMillis)/1000)
	}
	fmt.Fprintln(w)
	if len(r.Profiles) == 0 {
		fmt.Fprintln(w, "no profile finished")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "profile\tdirection\tIOPS\tMB/s\tlat mean ms\tp50 ms\tp99 ms\tp99.9 ms\t")
	for _, p := range r.Profiles {
		for i, d := range p.Directions {
			name := p.Profile
			if i > 0 {
				name = ""
			}
			l := d.CompletionLatency
			pct := func(v float64) string {
				if l.PercentileSource == "" {
					return "-"
				}
				return fmt.Sprintf("%.3f", v)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f\t%.3f\t%s\t%s\t%s\t\n", name, d.Direction, d.IOPS, d.MBPerSec,
				l.MeanMillis, pct(l.P50Millis), pct(l.P99Millis), pct(l.P999Millis))
		}
	}
	if len(r.Profiles) > 0 {
		tw.Flush()
		fmt.Fprintln(w, "MB/s: 10^6 bytes per second; latency: fio's completion latency (clat), per I/O")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: only the profiles above finished")
	}
	a.printMonitorSummary(r.Monitor)
	fmt.Fprintf(w, "stored as result %d (%s) in %s\n", r.RunID, r.Status, storePath)
}
