package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/fio"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

const resultsSynopsis = `results list [--kind K] [--label L] [--limit N]
       oltplab results show ID [--json]
       oltplab results export PROFILE|MONITOR... [--format csv|json] [-o FILE] [--include-suspect] [--include-contaminated]
       oltplab results import [--untagged] FILE...
       oltplab ` + resultsMergeSynopsis

func resultsCommands() []command {
	return []command{
		{name: "list", run: resultsList, summary: "list stored results, newest first"},
		{name: "show", run: resultsShow, summary: "show one stored result"},
		{name: "export", run: resultsExport, summary: "export profiles or monitor results as CSV or JSON"},
		{name: "import", run: resultsImport, summary: "load results files into the store"},
		{name: "merge", run: resultsMerge, summary: "merge the shards of a sharded run into one profile"},
	}
}

func runResults(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usageErrorf("results: want a subcommand: list, show ID, export PROFILE|MONITOR..., import FILE... or merge --shard-group NAME --shards N (see `oltplab results --help`)")
	}
	if c, ok := findCommand(resultsCommands(), args[0]); ok {
		return c.run(ctx, a, args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintf(a.stdio.Out, "Usage: oltplab %s\n", resultsSynopsis)
		return nil
	}
	return usageErrorf("results: unknown subcommand %s (want list, show, export, import or merge)", quoted(args[0]))
}

func resultsList(ctx context.Context, a *app, args []string) error {
	var (
		sf     storeFlags
		kind   string
		label  string
		limit  int
		asJSON bool
	)
	fs := newFlagSet("results list")
	sf.register(fs, a.env)
	fs.StringVar(&kind, "kind", "", "only results of this `KIND`: build, run, check, monitor, storage, backup, rebuild, cpu, parallel, neighbours, or profile (the sweeps that group runs)")
	fs.StringVar(&label, "label", "", "only runs with this `LABEL`")
	fs.IntVar(&limit, "limit", 50, "at most `N` results, newest first (0: all)")
	fs.BoolVar(&asJSON, "json", false, "print as JSON")
	if err := a.parseFlags(fs, "results list [--kind K] [--label L] [--limit N]", args); err != nil {
		return helpOK(err)
	}
	if kind != "" && kind != kindProfile && !store.Kind(kind).Valid() {
		return usageErrorf("results list: unknown kind %s (want build, run, check, monitor, storage, backup, rebuild, cpu, parallel, neighbours or profile)", quoted(kind))
	}
	if limit < 0 {
		return usageErrorf("results list: --limit must be 0 (all) or more, got %d", limit)
	}
	st, err := a.openStoreToRead(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	if kind == kindProfile {
		return a.listProfiles(ctx, st, label, limit, asJSON)
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{Kind: store.Kind(kind), Label: label, Limit: limit})
	if err != nil {
		return withCode(exitStore, fmt.Errorf("list results: %w", err))
	}
	if asJSON {
		return writeJSON(a.out(), runs)
	}
	w := a.out()
	if len(runs) == 0 {
		fmt.Fprintln(w, noneFound("results", kind, label, st.Path()))
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTARTED\tSTATUS\tPROFILE\tLABEL\tVUS\tTARGET\tHEADLINE")
	for _, r := range runs {
		prof := ""
		if r.ProfileID != 0 {
			prof = fmt.Sprintf("%d (step %d, rep %d)", r.ProfileID, r.Step, r.Repeat)
		}
		vus := ""
		if r.VUs > 0 {
			vus = strconv.Itoa(r.VUs)
		}
		// Labels, targets and errors are printed as text, whatever was stored.
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Kind, r.StartedAt.Local().Format("2006-01-02 15:04:05"),
			r.Status, prof, printable(cut(r.Label, maxLabel)), vus, printable(r.Target), printable(cut(headline(r), maxEcho)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range runs {
		if r.Status == store.StatusSuspect {
			fmt.Fprintln(w, a.red(fmt.Sprintf("result %d is suspect: %s", r.ID, strings.Join(suspectReasons(r), "; "))))
		}
		if r.Status == store.StatusFailures {
			fmt.Fprintln(w, a.red(fmt.Sprintf("result %d failed too often: %s", r.ID, failuresReason(r))))
		}
		if s, err := summary.DecodeRun(r.Summary); err == nil && r.Kind == store.KindRun && len(r.Summary) > 0 {
			if r.Status == store.StatusFailed && s.ServerFailed() {
				fmt.Fprintln(w, a.red(fmt.Sprintf("result %d: its server failed: %s", r.ID, s.ServerFailureText())))
			}
			if r.Status == store.StatusContaminated {
				fmt.Fprintln(w, a.red(fmt.Sprintf("result %d is contaminated: %s", r.ID, strings.Join(s.Contaminated, "; "))))
			}
		}
	}
	return nil
}

// noneFound says that a list is empty: that nothing matches its filters,
// or, without filters, that nothing is stored yet.
func noneFound(what, kind, label, path string) string {
	var filters []string
	if kind != "" {
		filters = append(filters, "of kind "+kind)
	}
	if label != "" {
		filters = append(filters, "with the label "+quoted(label))
	}
	if len(filters) == 0 {
		return fmt.Sprintf("no %s in %s yet", what, path)
	}
	return fmt.Sprintf("no %s %s in %s", what, strings.Join(filters, " and "), path)
}

// failuresReason reads from a stored run's summary how many of its
// transactions failed (status failures).
func failuresReason(r store.Run) string {
	if s, err := summary.DecodeRun(r.Summary); err == nil && r.Kind == store.KindRun && s.TooManyFailures != "" {
		return s.TooManyFailures
	}
	return "no reason recorded"
}

// suspectReasons reads why a stored run is suspect from its summary.
func suspectReasons(r store.Run) []string {
	if s, err := summary.DecodeRun(r.Summary); err == nil && r.Kind == store.KindRun && len(s.Suspect) > 0 {
		return s.Suspect
	}
	return []string{"no reason recorded"}
}

// kindProfile lists profiles (virtual-user sweeps) rather than runs.
const kindProfile = "profile"

// listProfiles prints the stored profiles, newest first, with their
// steps and the number of runs in each state.
func (a *app) listProfiles(ctx context.Context, st *store.Store, label string, limit int, asJSON bool) error {
	ps, err := st.ListProfiles(ctx, store.ProfileFilter{Label: label, Limit: limit})
	if err != nil {
		return withCode(exitStore, fmt.Errorf("list profiles: %w", err))
	}
	if asJSON {
		return writeJSON(a.out(), ps)
	}
	w := a.out()
	if len(ps) == 0 {
		fmt.Fprintln(w, noneFound("profiles", "", label, st.Path()))
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tSTATUS\tLABEL\tVUS\tREPEAT\tRUNS\tTARGET")
	for _, p := range ps {
		runs, err := st.ListRuns(ctx, store.RunFilter{Kind: store.KindRun, ProfileID: p.ID})
		if err != nil {
			return withCode(exitStore, fmt.Errorf("list the runs of profile %d: %w", p.ID, err))
		}
		byStatus := map[store.Status]int{}
		for _, r := range runs {
			byStatus[r.Status]++
		}
		var counts []string
		for _, s := range []store.Status{store.StatusOK, store.StatusSuspect, store.StatusContaminated, store.StatusFailures, store.StatusPartial, store.StatusFailed, store.StatusRunning, store.StatusAbandoned} {
			if n := byStatus[s]; n > 0 {
				counts = append(counts, fmt.Sprintf("%d %s", n, s))
			}
		}
		params := results.Flatten(p.Params)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.CreatedAt.Local().Format("2006-01-02 15:04:05"), p.Status,
			p.Label, params["vus_spec"], params["repeat"], strings.Join(counts, ", "), params["target"])
	}
	return tw.Flush()
}

// stepStop says how the stopping rule of an auto-repeated profile ended
// the step a run belongs to; false for a profile of fixed repeats.
func (a *app) stepStop(ctx context.Context, st *store.Store, r store.Run) (string, bool) {
	p, err := st.GetProfile(ctx, r.ProfileID)
	if err != nil {
		return "", false
	}
	var params struct {
		Stopping *profile.Stopping `json:"stopping"`
	}
	if json.Unmarshal(p.Params, &params) != nil || params.Stopping == nil {
		return "", false
	}
	for _, s := range params.Stopping.Stops {
		if s.Users == r.VUs {
			return s.Text(params.Stopping.Rule.Precision), true
		}
	}
	return "has not stopped yet", true
}

// headline is the one line that best describes a stored result (its
// summary's Headline), or why it has none.
func headline(r store.Run) string {
	if len(r.Summary) == 0 {
		return r.Error
	}
	sum, err := summary.Decode(r.Kind, r.Summary)
	if err != nil {
		return ""
	}
	return sum.Headline()
}

func resultsShow(ctx context.Context, a *app, args []string) error {
	var (
		sf     storeFlags
		asJSON bool
	)
	fs := newFlagSet("results show")
	sf.register(fs, a.env)
	fs.BoolVar(&asJSON, "json", false, "print the whole stored result as JSON")
	pos, err := a.parseWithArgs(fs, "results show ID [--json]", args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) != 1 {
		return usageErrorf("results show: want exactly one result ID (see `oltplab results list`)")
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id <= 0 {
		return usageErrorf("results show: %q is not a result ID (a positive number)", pos[0])
	}
	st, err := a.openStoreToRead(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := st.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return usageErrorf("results show: %v", err)
	}
	if err != nil {
		return withCode(exitStore, fmt.Errorf("results show: %w", err))
	}
	if asJSON {
		return writeJSON(a.out(), r)
	}
	w := a.out()
	fmt.Fprintf(w, "result %d: %s, %s\n", r.ID, r.Kind, r.Status)
	fmt.Fprintf(w, "  started  %s\n", r.StartedAt.Local().Format(time.RFC3339))
	if !r.EndedAt.IsZero() {
		fmt.Fprintf(w, "  ended    %s (%.1f s)\n", r.EndedAt.Local().Format(time.RFC3339), r.EndedAt.Sub(r.StartedAt).Seconds())
	}
	fmt.Fprintf(w, "  target   %s (%s)\n  tool     %s\n", printable(r.Target), r.Dialect, printable(r.ToolVersion))
	if r.Label != "" {
		fmt.Fprintf(w, "  label    %s\n", printable(r.Label))
	}
	// Shown as far as it decodes; --json shows it whole.
	var sum summary.Summary
	if len(r.Summary) > 0 {
		var err error
		if sum, err = summary.Decode(r.Kind, r.Summary); err != nil {
			fmt.Fprintf(w, "  (its summary cannot be read: %v)\n", err)
		}
	}
	run, _ := sum.(summary.Run)
	var opts *driver.Options
	if run.Result != nil {
		opts = &run.Options
	}
	if r.ProfileID != 0 {
		users := "virtual user(s)"
		if opts != nil && opts.Mode == driver.ModeTPCC {
			users = "terminal(s)"
		}
		fmt.Fprintf(w, "  profile  %d, step %d, repeat %d, %d %s\n", r.ProfileID, r.Step, r.Repeat, r.VUs, users)
		if stop, ok := a.stepStop(ctx, st, r); ok {
			fmt.Fprintf(w, "  repeat   auto: its step %s\n", stop)
		}
	}
	if r.Seed != nil {
		fmt.Fprintf(w, "  seed     %d\n", *r.Seed)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  error    %s\n", printable(r.Error))
	}
	if r.Status == store.StatusSuspect {
		for _, reason := range suspectReasons(r) {
			fmt.Fprintln(w, a.red("  SUSPECT  "+reason))
		}
	}
	if h := headline(r); h != "" {
		fmt.Fprintf(w, "  result   %s\n", h)
	}
	if opts != nil {
		fmt.Fprintf(w, "  mode     %s\n", opts.ModeLabel())
	}
	if res := run.Result; res != nil && len(res.Kinds) > 0 {
		fmt.Fprintf(w, "  NOPM %s from %s; TPM %s from %s; driver's own counts: NOPM %s, TPM %s%s\n",
			thousands(res.NOPM), res.NOPMSource, thousands(res.TPM), res.TPMSource,
			thousands(res.DriverNOPM), thousands(res.DriverTPM), agreement(res))
		a.printFaults(w, res)
		if res.Shards != nil {
			printShards(w, res.Shards)
		}
		for _, warn := range res.Warnings {
			fmt.Fprintf(w, "  note: %s\n", warn)
		}
		fmt.Fprintln(w)
		printKindsTable(w, res)
		if res.Deferred != nil {
			printDeferred(w, res.Deferred)
		}
		if res.Spec != nil {
			printSpecChecks(w, res.Spec, a.red)
		}
	}
	switch s := sum.(type) {
	case summary.Rebuild:
		if len(s.Phases) > 0 {
			printRebuildPhases(w, s)
		}
	case summary.CPU:
		if len(s.Client.Runs) > 0 {
			printCPULoops(w, s, r.Target)
		}
	case summary.TPCH:
		fmt.Fprintln(w)
		printTPCH(w, s)
	case summary.TPCHCheck:
		printTPCHChecks(w, s.Checks)
	}
	if sum != nil {
		if m := sum.Sampling(); m != nil {
			a.printMonitorSummary(*m)
		}
	}
	printFlat(w, "parameters", results.Flatten(r.Params))
	printFlat(w, "context", results.Flatten(r.Context))
	fmt.Fprintf(w, "(the full result: oltplab results show %d --json)\n", r.ID)
	return nil
}

func printFlat(w io.Writer, title string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(tw, "    %s\t%s\n", printable(k), printable(m[k]))
	}
	tw.Flush()
}

func resultsExport(ctx context.Context, a *app, args []string) error {
	var (
		sf     storeFlags
		format string
		output string
		inc    report.Include
	)
	fs := newFlagSet("results export")
	sf.register(fs, a.env)
	registerInclude(fs, &inc)
	fs.StringVar(&format, "format", "csv", "`FORMAT`: csv (one row per profile, step and repeat; for monitors, one row per second) or json")
	fs.StringVarP(&output, "output", "o", "", "write to `FILE` instead of standard output")
	refs, err := a.parseWithArgs(fs, "results export PROFILE|MONITOR... [--format csv|json] [-o FILE] [--include-suspect] [--include-contaminated]", args)
	if err != nil {
		return helpOK(err)
	}
	write := map[string]func(io.Writer, report.Input) error{"csv": report.CSV, "json": report.JSON}[format]
	if write == nil {
		return usageErrorf("results export: unknown --format %q (want csv or json)", format)
	}
	return a.renderProfiles(ctx, sf, refs, inc, output, write)
}

// renderProfiles loads profiles and writes them with one renderer, to a
// file (written whole, then renamed) or to stdout.
func (a *app) renderProfiles(ctx context.Context, sf storeFlags, refs []string, inc report.Include, output string, write func(io.Writer, report.Input) error) error {
	st, err := a.openStoreToRead(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	var in report.Input
	hs, err := a.compareKind(ctx, sf, "report", refs)
	if err != nil {
		return err
	}
	if hs != nil {
		in = tpchReport(hs)
	} else {
		ps, ms, err := results.LoadInputs(ctx, st, refs, inc)
		if err != nil {
			return err
		}
		in = report.Input{Title: "oltplab performance profiles", Profiles: ps, Monitors: ms}
		if len(ps) == 0 {
			in.Title = "oltplab monitors"
		}
	}
	in.Generated, in.Version = time.Now().UTC(), version()
	wr := func(w io.Writer) error {
		err := write(w, in)
		if errors.Is(err, report.ErrMixedCSV) {
			return usageErrorf("%v", err)
		}
		return err
	}
	if output == "" {
		return wr(a.out())
	}
	return writeFileAtomic(ctx, output, wr)
}

// writeFileAtomic writes a file through a temporary sibling and a rename,
// so a failure never leaves half a file where a good one was. An
// interrupt (ctx canceled: Ctrl-C, SIGTERM) before the rename leaves the
// file as it was and returns the cancellation (exit 130).
func writeFileAtomic(ctx context.Context, path string, fill func(io.Writer) error) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usageErrorf("%s is a directory: name the file to write (such as %s)", quoted(path), filepath.Join(path, "report.html"))
	}
	f, err := os.CreateTemp(dirOf(path), ".oltplab-*")
	if err != nil {
		return usageErrorf("cannot write %s: %v", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := fill(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %s: interrupted, the file left as it was: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// registerInclude adds --include-suspect and --include-contaminated to a
// command that reads profiles.
func registerInclude(fs *pflag.FlagSet, inc *report.Include) {
	fs.BoolVar(&inc.Suspect, "include-suspect", false,
		"count runs stored as suspect (their database figures disagreed with the driver's own counts) in statistics, peaks and verdicts")
	fs.BoolVar(&inc.Contaminated, "include-contaminated", false,
		"count runs stored as contaminated (other processes, or other machines through steal, took more of the CPU than allowed while they measured) in statistics, peaks and verdicts")
}

// resultsImport stores results saved to files when the store could not
// take them: only files an oltplab using this store wrote, unchanged, each
// once, judged by the rules a live run's result obeys.
func resultsImport(ctx context.Context, a *app, args []string) error {
	var (
		sf       storeFlags
		untagged bool
	)
	fs := newFlagSet("results import")
	sf.register(fs, a.env)
	fs.BoolVar(&untagged, "untagged", false, "also take files saved by an oltplab older than integrity tags (they carry none): "+
		"such a file may only complete a run this store created and never finished")
	files, err := a.parseWithArgs(fs, "results import [--untagged] FILE...", args)
	if err != nil {
		return helpOK(err)
	}
	if len(files) == 0 {
		return usageErrorf("results import: name the files to import (oltplab names them when it saves a result it could not store)")
	}
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	w := a.out()
	opt := store.ImportOptions{Check: checkImported, Untagged: untagged}
	for _, name := range files {
		imp, err := importFile(ctx, st, name, opt)
		if err != nil {
			if errors.Is(err, store.ErrSavedUntagged) && !untagged {
				err = fmt.Errorf("%w; if you trust it, import it with --untagged (it can then only complete a run this store created and never finished)", err)
			}
			return fmt.Errorf("results import: %s: %w", quoted(name), err)
		}
		fmt.Fprintf(w, "%s: stored as run %d in %s (the file may now be deleted)\n", name, imp.RunID, st.Path())
	}
	return nil
}

// importFile imports one saved file: a regular file, its size checked
// (store.MaxSavedBytes) before any of it is read.
func importFile(ctx context.Context, st *store.Store, name string, opt store.ImportOptions) (store.Imported, error) {
	f, err := os.Open(name)
	if err != nil {
		return store.Imported{}, usageErrorf("results import: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return store.Imported{}, usageErrorf("results import: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return store.Imported{}, fmt.Errorf("%w: not a regular file (%s)", store.ErrNotSaved, fi.Mode().Type())
	}
	if fi.Size() > store.MaxSavedBytes {
		return store.Imported{}, fmt.Errorf("%w: %d bytes, more than the %s a saved result may be", store.ErrSavedTooLarge,
			fi.Size(), fio.FormatBytes(store.MaxSavedBytes))
	}
	return st.Import(ctx, f, fi.Size(), opt)
}

// checkImported applies to a saved result the rules its live run obeyed:
// labels as --label takes them, and the run's status against its figures
// (summary.CheckStored).
func checkImported(sr store.SavedRun) error {
	if p := labelProblem(sr.Run.Label); p != "" {
		return fmt.Errorf("its label %s", p)
	}
	if sr.Profile != nil {
		if p := labelProblem(sr.Profile.Label); p != "" {
			return fmt.Errorf("its profile's label %s", p)
		}
	}
	return summary.CheckStored(sr.Run.Kind, sr.Outcome)
}
