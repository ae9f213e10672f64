package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchdriver"
	"github.com/oltplab/oltplab/internal/tpchload"
)

// tpchUsage is `oltplab tpch --help`.
const tpchUsage = `Usage: oltplab tpch build|power|throughput|run|check ...

The analytic workload: TPC-H's eight tables generated as dbgen generates them
(clause 4.2), its 22 queries with qgen's parameters (clause 2.4), and the tests
of clause 5, on PostgreSQL, MySQL/MariaDB and SQLite. Its figures are TPROC-H
style: measured as TPC-H clause 5.4 defines them, not an audited TPC-H result,
and they do not compare with published ones.

  oltplab tpch build --target URL --scale SF [--workers N] [--drop]
      creates and loads the schema of scale factor SF (SF 1: 6 million line
      items, about 1 GB of text), then its keys, indexes and statistics.
  oltplab tpch power --target URL
      the power test (clause 5.3.3): RF1, the 22 queries of stream 0 in their
      order, RF2, one after the other: each query's time, Power@Size.
  oltplab tpch throughput --target URL [--streams S]
      the throughput test (clause 5.3.4): S query streams, each in its order
      of clause 5.3.5.4, and a refresh stream of S RF1/RF2 pairs, at once:
      each stream's times, Throughput@Size.
  oltplab tpch run --target URL [--streams S]
      the performance test (clause 5.3.2): the power test, then the
      throughput test, and QphH@Size.
  oltplab tpch check --target URL
      verifies the rows of each table and that every foreign key refers to
      a row (exit 6 when one does not).

The refresh functions insert and delete the next unused update sets of the
build's scale, recorded in the database with their changes; a database has
as many as its ORDERS allow (SF x 1000 at SF 1 and above), then wants
"tpch build --drop". Results are stored with the host's and the database's
samples: "oltplab results show ID" and "oltplab compare" read them.

Run "oltplab tpch COMMAND --help" for the flags.
`

func tpchCommands() []command {
	tests := func(t tpchdriver.Test) func(context.Context, *app, []string) error {
		return func(ctx context.Context, a *app, args []string) error { return runTPCHTests(ctx, a, t, args) }
	}
	return []command{
		{name: "build", run: runTPCHBuild, summary: "create and load the TPC-H schema at a scale factor"},
		{name: "power", run: tests(tpchdriver.Power), summary: "the power test: RF1, the 22 queries of stream 0, RF2; Power@Size"},
		{name: "throughput", run: tests(tpchdriver.Throughput), summary: "the throughput test: S query streams and a refresh stream at once; Throughput@Size"},
		{name: "run", run: tests(tpchdriver.Both), summary: "the performance test: power, then throughput; QphH@Size"},
		{name: "check", run: runTPCHCheck, summary: "verify each table's rows and that every foreign key refers to a row"},
	}
}

func runTPCH(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(a.stdio.Out, tpchUsage)
		return usageErrorf("tpch: want build, power, throughput, run or check (see `oltplab tpch --help`)")
	}
	if c, ok := findCommand(tpchCommands(), args[0]); ok {
		return c.run(ctx, a, args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(a.stdio.Out, tpchUsage)
		return nil
	}
	return usageErrorf("tpch: unknown subcommand %q (want build, power, throughput, run or check)", args[0])
}

const tpchBuildSynopsis = `tpch build --target URL --scale SF [--workers N] [--drop] [--json]

Creates TPC-H's eight tables (clause 1.4) and loads them with the rows dbgen
generates at scale factor SF (clause 4.2; any SF from 0.01, in steps of
0.001), generated in parallel chunks and streamed into the database's bulk
path (COPY on PostgreSQL, LOAD DATA LOCAL INFILE on MySQL/MariaDB, batched
inserts on SQLite); then the primary keys, the foreign-key indexes and the
statistics. The build records itself in table oltplab_tpch_meta: oltplab
drops only a schema so marked (--drop), never tables it did not create.
The qgen seed of the tests defaults to the load's end (clause 2.1.3.3).`

func runTPCHBuild(ctx context.Context, a *app, args []string) error {
	var (
		target  targetFlags
		results storeFlags
		o       tpchload.Options
		scale   string
		asJSON  bool
	)
	fs := newFlagSet("tpch build")
	target.register(fs, a.env)
	results.register(fs, a.env)
	fs.StringVar(&scale, "scale", "1", "scale factor `SF`: 1 is 6 million line items (~1 GB of text); 0.01 upwards")
	fs.IntVar(&o.Workers, "workers", 0, "`N` parallel generators and load connections (default: one per CPU; SQLite uses 1)")
	fs.BoolVar(&o.Drop, "drop", false, "replace a TPC-H schema oltplab built (without it an existing one is an error)")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	if err := a.parseFlags(fs, tpchBuildSynopsis, args); err != nil {
		return helpOK(err)
	}
	s, err := tpch.ParseScale(scale)
	if err != nil {
		return usageErrorf("tpch build: --scale: %v", err)
	}
	if o.Workers < 0 {
		return usageErrorf("tpch build: --workers must be 0 (one per CPU) or more, got %d", o.Workers)
	}
	o.Scale, o.ToolVersion = s, version()
	return a.withTarget(ctx, results, target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
		w := a.errw()
		o.Progress = tpchProgress(w)
		id, res, err := a.scenarioEnv(st, scenario.Observer{Note: func(msg string) { fmt.Fprintln(w, msg) }}).TPCHBuild(ctx, db, tg, o)
		if err != nil && !isSaved(err) {
			return err
		}
		if asJSON {
			return errors.Join(err, writeJSON(a.out(), map[string]any{"run_id": id, "result": res}))
		}
		out := a.out()
		fmt.Fprintf(out, "built TPC-H SF %s in %s: %d rows in %.1f s\n", res.Scale, tg, res.TotalRows, res.TotalSeconds)
		fmt.Fprintf(out, "  text pool %.1f s, load %.1f s with %d worker(s), keys and indexes %.1f s, analyze %.1f s; qgen seed %d\n",
			res.TextSeconds, res.LoadSeconds, res.Workers, res.IndexSeconds, res.AnalyzeSeconds, res.QGenSeed)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "stored as run %d in %s\n", id, st.Path())
		return nil
	})
}

// tpchProgress writes a build's phases, and while it loads its rows every
// few seconds, as lines.
func tpchProgress(w io.Writer) func(tpchload.Progress) {
	var last time.Duration
	var phase tpchload.Phase
	return func(p tpchload.Progress) {
		switch {
		case p.Phase != phase:
			phase, last = p.Phase, p.Elapsed
			if p.Phase == tpchload.PhaseDone {
				return
			}
			fmt.Fprintf(w, "%6.1fs  %s\n", p.Elapsed.Seconds(), p.Phase)
		case p.Phase == tpchload.PhaseLoad && p.Elapsed-last >= 5*time.Second:
			last = p.Elapsed
			fmt.Fprintf(w, "%6.1fs  load: %d of about %d rows (%.0f%%)\n", p.Elapsed.Seconds(), p.Rows, p.ExpectedRows,
				100*float64(p.Rows)/float64(max(p.ExpectedRows, 1)))
		}
	}
}

const tpchTestsSynopsis = `tpch %s --target URL%s [--seed S] [--query-timeout D] [--validation] [--label L] [--json]

%s
Each query is timed from its submission to its last row (clause 5.3.7; Q15's
view created and dropped inside it), each refresh function as its
transaction; intervals are rounded as clause 5.3.7.5 says. A query cut off by
--query-timeout, or that fails, is recorded as such, never as a time, and the
figures it would enter are absent. The parameters are drawn by qgen's rules
(clause 2.4) from the seed (stream N uses seed+N): the default is the one the
build recorded. The figures are TPROC-H style, not an audited TPC-H result.`

var tpchTestsText = map[tpchdriver.Test]string{
	tpchdriver.Power: `The power test (clause 5.3.3): RF1, the 22 queries of stream 0 in their
order (clause 5.3.5.4), then RF2, one after the other, on one connection each
for the queries and the refresh functions. Reports each query's time, the
geometric mean and Power@Size (clause 5.4.1).
`,
	tpchdriver.Throughput: `The throughput test (clause 5.3.4): S query streams, each on its own
connection running the 22 queries in its order of clause 5.3.5.4, and a
refresh stream running S pairs of RF1 and RF2, all started together.
Reports each stream's query times and geometric mean, the measurement
interval Ts and Throughput@Size (clause 5.4.2).
`,
	tpchdriver.Both: `The performance test (clause 5.3.2): the power test (RF1, stream 0, RF2),
then the throughput test (S streams and the refresh stream), and the
composite QphH@Size (clause 5.4.3) of Power@Size and Throughput@Size.
`,
}

func tpchTestName(t tpchdriver.Test) string {
	if t == tpchdriver.Both {
		return "run"
	}
	return string(t)
}

func runTPCHTests(ctx context.Context, a *app, test tpchdriver.Test, args []string) error {
	var (
		target  targetFlags
		results storeFlags
		o       scenario.TPCHOptions
		asJSON  bool
	)
	o.Test = test
	name := "tpch " + tpchTestName(test)
	streamsSyn := ""
	if test.HasThroughput() {
		streamsSyn = " [--streams S]"
	}
	fs := newFlagSet(name)
	target.register(fs, a.env)
	results.register(fs, a.env)
	if test.HasThroughput() {
		fs.IntVar(&o.Streams, "streams", 0, "`S` query streams of the throughput test (default: clause 5.3.4's least for the scale, 2 below SF 1)")
	}
	fs.Int64Var(&o.Seed, "seed", 0, "qgen `SEED` of stream 0, 1 to 2147483646 (default: the one the build recorded)")
	fs.DurationVar(&o.QueryTimeout, "query-timeout", 0, "cut off a query that runs longer than `D`, stopping it on the server (default: none)")
	fs.BoolVar(&o.Validation, "validation", false, "use the validation parameters of clause 2.4.N.4 (qgen -d) in every stream instead of drawn ones")
	fs.StringVar(&o.Label, "label", "", "`LABEL` stored with the result")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	if err := a.parseFlags(fs, fmt.Sprintf(tpchTestsSynopsis, tpchTestName(test), streamsSyn, tpchTestsText[test]), args); err != nil {
		return helpOK(err)
	}
	if err := checkLabel(name, o.Label); err != nil {
		return err
	}
	if test.HasThroughput() && fs.Changed("streams") && o.Streams < 1 {
		return usageErrorf("%s: --streams must be at least 1, got %d", name, o.Streams)
	}
	return a.withTarget(ctx, results, target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
		if test.HasThroughput() && o.Streams == 0 {
			m, err := tpchload.ReadMeta(ctx, db)
			if err != nil {
				return err
			}
			o.Streams = defaultStreams(m.Scale)
		}
		if err := o.Validate(); err != nil {
			return usageErrorf("%s: %v", name, err)
		}
		return a.tpchTests(ctx, st, db, tg, o, asJSON)
	})
}

// defaultStreams is clause 5.3.4's least number of query streams at
// scale s, or 2 below SF 1 (which the clause does not list).
func defaultStreams(s tpch.Scale) int {
	if n, _ := s.MinStreams(); n > 0 {
		return n
	}
	return 2
}

// tpchTests runs the tests, printing each query as it ends, then the
// figures.
func (a *app) tpchTests(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, o scenario.TPCHOptions, asJSON bool) error {
	w := a.errw()
	var mu sync.Mutex
	o.Observe = func(e tpchdriver.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Query != nil:
			q := e.Query
			fmt.Fprintf(w, "  %-10s stream %d  Q%-2d %s\n", e.Test, q.Stream, q.Query, outcomeText(q.Outcome, q.Seconds, q.Error))
		case e.Refresh != nil:
			r := e.Refresh
			fmt.Fprintf(w, "  %-10s refresh   %s (set %d) %s\n", e.Test, r.Name(), r.Set, outcomeText(r.Outcome, r.Seconds, r.Error))
		}
	}
	out, err := a.scenarioEnv(st, scenario.Observer{Note: func(msg string) { fmt.Fprintln(w, msg) }}).TPCH(ctx, db, tg, o)
	if out.RunID == 0 || (err != nil && !isSaved(err) && !errors.Is(err, context.Canceled) && !isRunError(err)) {
		return err
	}
	if asJSON {
		return errors.Join(err, writeJSON(a.out(), map[string]any{"run_id": out.RunID, "status": out.Status, "result": out.TPCH}))
	}
	printTPCH(a.out(), out.TPCH)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out(), "stored as run %d in %s (status %s)\n", out.RunID, st.Path(), out.Status)
	return nil
}

func isRunError(err error) bool {
	var re *scenario.RunError
	return errors.As(err, &re)
}

func outcomeText(o tpch.Outcome, seconds float64, msg string) string {
	switch o {
	case tpch.Done:
		return fmt.Sprintf("%8.3f s", seconds)
	case tpch.TimedOut, tpch.Failed:
		return fmt.Sprintf("%s: %s", strings.ToUpper(string(o)), oneLine(msg))
	}
	return string(o)
}

// printTPCH renders a run of the tests: per query and stream the
// intervals, then the figures, labelled.
func printTPCH(w io.Writer, s summary.TPCH) {
	var streams []tpch.StreamResult
	if s.Power != nil {
		streams = append(streams, s.Power.Stream)
	}
	if s.Throughput != nil {
		streams = append(streams, s.Throughput.Streams...)
	}
	sort.SliceStable(streams, func(i, j int) bool { return streams[i].Stream < streams[j].Stream })
	fmt.Fprintf(w, "TPC-H %s, SF %s, %s, seed %d: query intervals in seconds (clause 5.3.7.5)\n", s.TestName(), s.Scale, s.Dialect, s.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "query\t")
	for _, st := range streams {
		fmt.Fprintf(tw, "stream %d\t", st.Stream)
	}
	fmt.Fprintln(tw)
	for q := 1; q <= tpch.Queries; q++ {
		fmt.Fprintf(tw, "Q%d\t", q)
		for _, st := range streams {
			fmt.Fprintf(tw, "%s\t", intervalCell(st.ByQuery(q)))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "geo. mean\t")
	for _, st := range streams {
		if st.GeoMean != nil {
			fmt.Fprintf(tw, "%.2f\t", *st.GeoMean)
		} else {
			fmt.Fprint(tw, "-\t")
		}
	}
	fmt.Fprintln(tw)
	tw.Flush()
	if p := s.Power; p != nil {
		fmt.Fprintf(w, "power test: RF1 %s, RF2 %s\n", refreshCell(p.RF1), refreshCell(p.RF2))
	}
	if t := s.Throughput; t != nil {
		var rfs []string
		for _, r := range t.Refresh {
			rfs = append(rfs, fmt.Sprintf("%s/%d %s", r.Name(), r.Set, refreshCell(r)))
		}
		fmt.Fprintf(w, "throughput test: %d stream(s), Ts %.1f s; refresh stream: %s\n", len(t.Streams), tpch.Interval(t.Seconds), strings.Join(rfs, ", "))
	}
	fmt.Fprintln(w, "TPROC-H style figures (TPC-H clause 5.4), not an audited TPC-H result:")
	if p := s.Power; p != nil {
		fmt.Fprintf(w, "  Power@Size       %s\n", figure(p.Power, p.Absent))
	}
	if t := s.Throughput; t != nil {
		fmt.Fprintf(w, "  Throughput@Size  %s\n", figure(t.Throughput, t.Absent))
	}
	if s.Test == string(tpchdriver.Both) {
		fmt.Fprintf(w, "  QphH@Size        %s\n", figure(s.QphH, s.QphHAbsent))
	}
	for _, n := range s.Notes[min(1, len(s.Notes)):] {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func intervalCell(q *tpch.QueryTime) string {
	switch {
	case q == nil:
		return "-"
	case q.Outcome == tpch.Done:
		return fmt.Sprintf("%.1f", q.Interval)
	}
	return string(q.Outcome)
}

func refreshCell(r tpch.RefreshTime) string {
	if r.Outcome == tpch.Done {
		return fmt.Sprintf("%.1f s", r.Interval)
	}
	return string(r.Outcome)
}

func figure(v *float64, absent string) string {
	if v != nil {
		return fmt.Sprintf("%.1f", *v)
	}
	return absent
}

const tpchCheckSynopsis = `tpch check --target URL [--json]

Verifies a TPC-H database oltplab built: each table's rows (clause 4.2.5; ORDERS
and LINEITEM as the build loaded them, changed by the refresh functions run
since, which the database records), every foreign key's rows referring to a row
of the table it references (clause 1.4.2.3), and every order with one to seven
line items (clause 4.2.3). Stored as a result of kind tpch-check; exit 6 when a
check fails.`

func runTPCHCheck(ctx context.Context, a *app, args []string) error {
	var (
		target  targetFlags
		results storeFlags
		asJSON  bool
	)
	fs := newFlagSet("tpch check")
	target.register(fs, a.env)
	results.register(fs, a.env)
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON")
	if err := a.parseFlags(fs, tpchCheckSynopsis, args); err != nil {
		return helpOK(err)
	}
	return a.withTarget(ctx, results, target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
		out, err := a.scenarioEnv(st, scenario.Observer{}).TPCHCheck(ctx, db, tg)
		if err != nil && !isSaved(err) {
			return err
		}
		if asJSON {
			if werr := writeJSON(a.out(), map[string]any{"run_id": out.RunID, "result": out.TPCHCheck}); werr != nil {
				return errors.Join(err, werr)
			}
		} else {
			w := a.out()
			fmt.Fprintf(w, "TPC-H SF %s on %s:\n", out.Scale, tg)
			printTPCHChecks(w, out.Checks)
			if err == nil {
				fmt.Fprintf(w, "checked in %.1f s; stored as run %d in %s\n", out.Seconds, out.RunID, st.Path())
			}
		}
		if err != nil {
			return err
		}
		if !out.Passed {
			if !asJSON {
				fmt.Fprintln(a.errw(), "oltplab: TPC-H check failed")
			}
			return errSilent{exitCheckFailed}
		}
		return nil
	})
}

func printTPCHChecks(w io.Writer, checks []tpch.CheckResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range checks {
		verdict := "pass"
		switch {
		case c.Skipped:
			verdict = "skipped: " + c.Detail
		case !c.Passed:
			verdict = fmt.Sprintf("FAIL: %d, want %d (%s)", c.Got, c.Want, c.Detail)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", c.Clause, c.Name, c.Got, verdict)
	}
	tw.Flush()
}
