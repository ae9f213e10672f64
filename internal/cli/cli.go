// Package cli is oltplab's command line: it parses flags into one Options
// struct per command, opens targets and the results store, calls the
// domain packages (load, driver, tpcc, store, report) and renders their
// results. Exit codes and user-facing error lines are decided here and
// nowhere else (exitcode.go).
//
// It may import every package of oltplab; only cmd/oltplab imports it.
package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"

	// Dialects register their URL schemes.
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlserver"
)

// Stdio is where a command reads and writes.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Env is the process environment as a lookup.
type Env map[string]string

func envMap(kv []string) Env {
	m := Env{}
	for _, s := range kv {
		if k, v, ok := strings.Cut(s, "="); ok {
			m[k] = v
		}
	}
	return m
}

type command struct {
	name    string
	summary string // "" hides the command from the help
	// group is the heading of the help the command is listed under.
	group string
	run   func(ctx context.Context, a *app, args []string) error
	// subs are the subcommands run dispatches to (findCommand): the one
	// list the help and the shell completions read too.
	subs []command
}

// The headings of `oltplab --help`, in its order: what a reader looks for.
const (
	groupWorkload = "The workload"
	groupInfra    = "Infrastructure: storage, instances and the studies' scenarios"
	groupResults  = "Results"
	groupScaleOut = "Scale-out"
	groupTool     = "The tool"
)

// app is what every command shares: streams, environment, logger, and the
// secrets to scrub from any line printed.
type app struct {
	stdio    Stdio
	env      Env
	log      *slog.Logger
	secrets  []dialect.Secret
	commands []command
	// noCrossCheck is scenario.Env.NoCrossCheck: set only by tests that
	// are not about the cross-check (mainWith's options), never by a flag.
	noCrossCheck bool
	// describe, when set, is given the flag set a command parses instead
	// of parsing it (describeCommand): the command then stops as after
	// --help.
	describe func(fs *pflag.FlagSet)
}

func commands() []command {
	return []command{
		{name: "quickstart", group: groupWorkload, run: runQuickstart,
			summary: "build 1 warehouse on embedded SQLite, run a short profile, write a report"},
		{name: "build", group: groupWorkload, run: runBuild, summary: "create and load a TPC-C schema of W warehouses"},
		{name: "run", group: groupWorkload, run: runRun, summary: "drive the workload with virtual users and measure it"},
		{name: "check", group: groupWorkload, run: runCheck, summary: "evaluate the consistency conditions of TPC-C clause 3.3.2"},
		{name: "tpch", group: groupWorkload, run: runTPCH, subs: tpchCommands(),
			summary: "the analytic workload: TPC-H build, power and throughput tests (TPROC-H style figures), check"},

		{name: "experiment", group: groupInfra, run: runExperiment, subs: experimentCommands(),
			summary: "run a plan file: whole infrastructures compared on instances oltplab starts itself (run, resume, list, show)"},
		{name: "instance", group: groupInfra, run: runInstance, subs: instanceCommands(),
			summary: "start, list and stop managed PostgreSQL/MariaDB servers on a chosen data directory"},
		{name: "storage", group: groupInfra, run: runStorage, subs: storageCommands(),
			summary: "storage micro-benchmarks with fio: IOPS, MB/s and latency percentiles of a directory's device"},
		{name: "backup", group: groupInfra, run: runBackup,
			summary: "timed backup and restore cycles with the engine's own tools, each restored copy checked"},
		{name: "rebuild", group: groupInfra, run: runRebuild,
			summary: "rebuild the largest index of ORDER-LINE with a cold and a warm cache: elapsed vs server CPU time"},
		{name: "cpu", group: groupInfra, run: runCPU,
			summary: "time a fixed single-threaded CPU loop in the database server and in oltplab, to compare hosts"},
		{name: "neighbours", group: groupInfra, run: runNeighbours,
			summary: "noisy neighbours: instances on shared storage, some backing up while the others run the load; each victim's loss"},
		{name: "parallel", group: groupInfra, run: runParallel,
			summary: "drive several targets at once with one synchronised measured window: per-target and total NOPM/TPM"},

		{name: "results", group: groupResults, run: runResults, subs: resultsCommands(), summary: "list, show and export stored results"},
		{name: "compare", group: groupResults, run: runCompare,
			summary: "compare profiles step by step, or TPC-H results query by query, with ratios"},
		{name: "report", group: groupResults, run: runReport,
			summary: "render profiles and monitor results as one self-contained HTML (or Markdown) report"},
		{name: "cost", group: groupResults, run: runCost,
			summary: "price the targets of a prices file: total cost, cost per 1,000 NOPM/TPM, savings"},
		{name: "serve", group: groupResults, run: runServe,
			summary: "browse a results store in a web browser: profiles, comparisons, experiments, reports, downloads (read-only)"},

		{name: "agent", group: groupScaleOut, run: runAgent,
			summary: "act for a plan on another machine: this host's metrics, managed instances, fio, backups and the driver here (TLS, token)"},
		{name: "k8s", group: groupScaleOut, run: runK8s, subs: k8sCommands(),
			summary: "write a Kubernetes Indexed Job running oltplab run as N shards (manifest)"},
		{name: "monitor", group: groupScaleOut, run: runMonitor,
			summary: "sample host (and database) metrics into the results store while something else runs"},

		{name: "selftest", group: groupTool, run: runSelftest,
			summary: "check the dialect on your own server, in a scratch database it creates and drops: what tests cannot reach"},
		{name: "clean", group: groupTool, run: runClean,
			summary: "remove the database copy --reset-between keeps, or (--leftovers) what killed oltplab processes left on disk"},
		{name: "completion", group: groupTool, run: runCompletion, subs: completionCommands(),
			summary: "print a shell completion script (bash, zsh or fish) made from these commands and their flags"},
		{name: "version", group: groupTool, run: runVersion, summary: "print the version"},
	}
}

// findCommand is the command of cmds named name.
func findCommand(cmds []command, name string) (command, bool) {
	for _, c := range cmds {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// Main runs oltplab with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, environ []string, stdio Stdio) int {
	return mainWith(ctx, args, environ, stdio, commands())
}

// mainWith is Main with the command table given (tests add commands) and
// options applied to the app (tests only).
func mainWith(ctx context.Context, args []string, environ []string, stdio Stdio, cmds []command, opts ...func(*app)) (code int) {
	a := &app{stdio: stdio, env: envMap(environ), commands: cmds}
	for _, o := range opts {
		o(a)
	}
	defer a.recoverPanic(&code)
	// Passwords the drivers read from the environment are scrubbed too.
	for _, k := range []string{"PGPASSWORD", "MYSQL_PWD", "SQLCMDPASSWORD"} {
		if v := a.env[k]; v != "" {
			a.secrets = append(a.secrets, dialect.Secret(v))
		}
	}
	if v := a.env["OLTPLAB_RESULTS"]; store.IsPostgresURL(v) {
		a.addURLSecret(v)
	}
	level := slog.LevelInfo
	if a.env["OLTPLAB_DEBUG"] != "" {
		level = slog.LevelDebug
	}
	a.log = slog.New(slog.NewTextHandler(a.errw(), &slog.HandlerOptions{Level: level}))

	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 && args[0] == "help" {
			return a.exit(dispatch(ctx, a, []string{args[1], "--help"}))
		}
		a.usage(stdio.Out)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	return a.exit(dispatch(ctx, a, args))
}

func dispatch(ctx context.Context, a *app, args []string) error {
	if c, ok := findCommand(a.commands, args[0]); ok {
		return c.run(ctx, a, args[1:])
	}
	return usageErrorf("unknown command %s (run `oltplab --help`)", quoted(args[0]))
}

func (a *app) usage(w io.Writer) {
	fmt.Fprintf(w, `oltplab %s: what does this infrastructure do to my OLTP database?

Usage: oltplab COMMAND [FLAGS]
`, version())
	group := "\x00" // no heading yet
	for _, c := range a.commands {
		if c.summary == "" {
			continue // hidden
		}
		if c.group != group {
			group = c.group
			fmt.Fprintf(w, "\n%s:\n", cmp.Or(group, "Commands"))
		}
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
Workload: TPROC-C style, as HammerDB's: the five TPC-C transactions and mix, with no keying
or think time. Its NOPM and TPM are not tpmC and do not compare with published TPC-C results.
check evaluates the TPC-C 3.3.2 consistency conditions.

Targets: postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB,
sqlserver://USER@HOST:PORT?database=DB, sqlite:PATH.
Passwords: in the URL, PGPASSWORD or ~/.pgpass (PostgreSQL), MYSQL_PWD (MySQL),
SQLCMDPASSWORD (SQL Server) or --password-file; they never appear in output,
logs or results.
Results are stored in %s (override with --results or OLTPLAB_RESULTS;
a postgres://USER@HOST:PORT/DB URL keeps them in a PostgreSQL database a team shares).
A finished result waits up to OLTPLAB_STORE_WAIT (default 10m) for a store another
process holds locked, then stays in a file that "oltplab results import" loads.

%s

Run "oltplab COMMAND --help" for a command's flags; "oltplab completion bash|zsh|fish"
prints a script that completes commands and flags in your shell.
`, defaultResultsHint, exitCodesHelp(90))
}

// scrubWriter removes secrets from everything written through it: known
// passwords from results, and also passwords by structure from
// diagnostics (documents such as CSS could look like connection strings).
type scrubWriter struct {
	a           *app
	w           io.Writer
	diagnostics bool
}

func (s *scrubWriter) Write(p []byte) (int, error) {
	out := dialect.ScrubKnown(string(p), s.a.secrets...)
	if s.diagnostics {
		out = s.a.scrub(string(p))
	}
	if _, err := io.WriteString(s.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// scrub removes passwords from s: by structure (a password in any target
// or connection string in s), then by exact match of the passwords this
// process knows (dialect.Scrub explains the minimum length).
func (a *app) scrub(s string) string { return dialect.Scrub(s, a.secrets...) }

// out is the writer for results (stdout), with secrets scrubbed.
func (a *app) out() io.Writer { return &scrubWriter{a: a, w: a.stdio.Out} }

// errw is the writer for diagnostics (stderr), with secrets scrubbed.
func (a *app) errw() io.Writer { return &scrubWriter{a: a, w: a.stdio.Err, diagnostics: true} }
