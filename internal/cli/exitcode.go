package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/tpcc"
	"github.com/oltplab/oltplab/internal/tpchload"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// Exit codes. Each failure a user can act on has its own code, said in
// exitCodes.
const (
	exitOK           = 0
	exitFailure      = 1
	exitUsage        = 2
	exitConnect      = 3
	exitAuth         = 4
	exitSchema       = 5
	exitCheckFailed  = 6
	exitStore        = 7
	exitRunFailed    = 8
	exitBinary       = 9
	exitDirectory    = 10
	exitCPUs         = 11
	exitNoDevice     = 12
	exitControl      = 13
	exitServer       = 14
	exitNoSpace      = 15
	exitSuspect      = 16
	exitPermission   = 17
	exitBackup       = 18
	exitFailures     = 19
	exitStartAt      = 20
	exitShardMissed  = 21
	exitRendezvous   = 22
	exitSelftest     = 23
	exitServerDied   = 24
	exitContaminated = 25
	exitInterrupted  = 130
)

// exitCodes says what each exit code means: the one list of them, which
// `oltplab --help` prints (help: a few words each) and README's table
// repeats (doc, Markdown), held to it by TestExitCodesDocumented.
var exitCodes = []struct {
	code      int
	help, doc string
}{
	{exitOK, "ok",
		"success"},
	{exitFailure, "unexpected failure",
		"unexpected failure"},
	{exitUsage, "bad flags or values",
		"bad flags or values, including a run larger than the server's connections or the host's memory allow, a plan or profile beyond its bounds, a `sqlite:` path that is a directory or another program's file, and a file `results import` refuses (not saved by this store's oltplab, changed since, already stored, or breaking a measured result's rules)"},
	{exitConnect, "target (or agent) unreachable",
		"target unreachable (also: a `sqlite:` file in a directory that does not exist; an `--agent` that does not answer)"},
	{exitAuth, "authentication failed",
		"authentication failed (also: an agent whose certificate is not the pinned fingerprint, or that refuses the token)"},
	{exitSchema, "schema missing/incomplete/other version/already present",
		"schema missing, incomplete, of another version, or already present (use `build --drop`); or a database or file of the user's at the name of `--reset-between`'s copy, which `run` and `clean` leave alone"},
	{exitCheckFailed, "consistency check failed",
		"a consistency condition failed (`check`, `tpch check`, or a plan's `check` step)"},
	{exitStore, "results store unusable",
		"results store unusable"},
	{exitRunFailed, "run could not continue",
		"the run could not continue: the server did not come back within `--reconnect-for` (default 5m), or a virtual user hit a missing schema object"},
	{exitBinary, "server binaries not installed",
		"a managed server's binaries are not installed (the message names the Debian package)"},
	{exitDirectory, "instance directory unusable",
		"a directory a target needs (a managed instance's, a plan's SQLite file's) cannot be created, written, or reached by the server's user"},
	{exitCPUs, "cpus not on this host",
		"`cpus` names CPUs this host does not offer"},
	{exitNoDevice, "no block device for io_limit",
		"`io_limit` on a directory with no block device under it (tmpfs, overlay)"},
	{exitControl, "control unavailable here (cgroups)",
		"the environment cannot provide a requested control (no writable cgroup for `io_limit` or `memory_limit`)"},
	{exitServer, "managed server failed",
		"a managed server failed to start, or stopped on its own"},
	{exitNoSpace, "too little free space for a build",
		"too little free space for a build (`oltplab build` on a local database, or a plan's)"},
	{exitSuspect, "result suspect (stored, but the database's figures disagree with the driver's own counts)",
		"a result is suspect: measured and stored (status `suspect`, with the reason), but the database's NOPM or TPM disagrees with the driver's own counts beyond the tolerance, went negative or backwards (another client wrote to the database, it was rebuilt, or its statistics were reset during the run); left out of peaks and verdicts"},
	{exitPermission, "database privilege missing",
		"the database user lacks a privilege the command needs (e.g. `CHECKPOINT`; `REPLICATION` for a base backup, checked before `pg_basebackup` runs)"},
	{exitBackup, "a backup or restore failed (the source is untouched)",
		"a backup, or the restore of one, failed (the source is untouched, the partial backup removed)"},
	{exitFailures, "too many failed transactions (stored, status failures)",
		"too many failed transactions: measured and stored (status `failures`, with the count), but more of the window's transactions failed than `--max-failure-rate` allows (default 5%): the database does not hold what its metadata says, or the server misbehaved; left out of peaks and verdicts"},
	{exitStartAt, "--start-at passed or too far ahead",
		"`--start-at` has passed, or is more than 24 h ahead: the shards cannot share it"},
	{exitShardMissed, "shards merged without one of them (stored partial, naming it)",
		"a sharded run was merged without one of its shards: the merged profile is stored partial and names the shard that stored no result"},
	{exitRendezvous, "shards did not all arrive at the rendezvous",
		"not every shard of a `--shard-group` arrived at the rendezvous within `--rendezvous-timeout`: start the missing ones, or give them more time"},
	{exitSelftest, "a selftest check failed",
		"a check of `oltplab selftest` failed (the scratch database is dropped all the same)"},
	{exitServerDied, "the server failed during a run (stored, status failed)",
		"the server failed during a run: it was down when the measured window ended (an outage still open), stood still for more than `--max-stall` of the window (default 10%), or, a managed server, exited; what the run measured is stored with status `failed` and the reason, left out of peaks, ratios and cost, and the profile stopped there (an experiment restarts a managed server and measures the run again: `retries`)"},
	{exitContaminated, "result contaminated (stored, but others took the CPU)",
		"a result is contaminated: measured and stored (status `contaminated`, with the figures), but foreign CPU (what neither the database server nor oltplab used, of the host's cores or of a confined server's own) or steal took more than `--max-foreign-cpu` or `--max-steal` (default 10% each) in the window; left out of peaks and verdicts unless `--include-contaminated`"},
	{exitInterrupted, "interrupted (what was measured is stored, marked partial)",
		"interrupted (what was measured is stored, marked partial)"},
}

// exitCodesHelp is the exit codes' paragraph of `oltplab --help`, lines
// wrapped at width columns.
func exitCodesHelp(width int) string {
	var items []string
	for _, c := range exitCodes {
		// A code stays on the line of its meaning's first word.
		items = append(items, fmt.Sprintf("%d\x00%s", c.code, c.help))
	}
	return strings.ReplaceAll(wrap("Exit codes: "+strings.Join(items, ", ")+".", width), "\x00", " ")
}

// wrap breaks text into lines of at most width columns between words (a
// longer word gets a line of its own).
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// usageError is bad input on the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// exitError carries an explicit exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// errSilent is returned when the command already printed what the user
// needs (e.g. a failed check table) and only the exit code remains.
type errSilent struct{ code int }

func (e errSilent) Error() string { return fmt.Sprintf("exit %d", e.code) }

// exit prints err as one line on stderr and returns the exit code for it.
func (a *app) exit(err error) int {
	if err == nil {
		return exitOK
	}
	var silent errSilent
	if errors.As(err, &silent) {
		return silent.code
	}
	code := exitCode(err)
	msg := err.Error()
	if errors.Is(err, store.ErrDamaged) {
		msg += "; oltplab does not write to a damaged store: restore it from a backup, or keep it aside and use a new one" +
			" (--results NEW.db); `oltplab results export` may still read what is intact, and sqlite3's .recover command may salvage more"
	}
	if code == exitUsage {
		var u *usageError
		if errors.As(err, &u) {
			msg = u.msg
		}
	}
	fmt.Fprintf(a.stdio.Err, "oltplab: %s\n", cut(oneLine(a.scrub(msg)), maxErrorLine))
	return code
}

func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	// A plan's mistake is bad input, unless what it wraps has a code of
	// its own (a directory, the host, a server).
	var pe *yamldoc.Error
	if errors.As(err, &pe) {
		if c := exitCode(pe.Err); c != exitFailure {
			return c
		}
		return exitUsage
	}
	var de *plan.DirError
	if errors.As(err, &de) {
		return exitDirectory
	}
	var ne *experiment.SpaceError
	if errors.As(err, &ne) {
		return exitNoSpace
	}
	if errors.Is(err, experiment.ErrCheckFailed) {
		return exitCheckFailed
	}
	var busy *experiment.StillRunningError
	if errors.As(err, &busy) || errors.Is(err, experiment.ErrFinished) || errors.Is(err, experiment.ErrPlanChanged) ||
		errors.Is(err, experiment.ErrPlanPassword) {
		return exitUsage
	}
	var se *scenario.StoreError
	if errors.As(err, &se) {
		// Interrupted while the store was being opened or read: an
		// interrupt, not a store that failed.
		if errors.Is(err, context.Canceled) {
			return exitInterrupted
		}
		return exitStore
	}
	var re *scenario.RunError
	if errors.As(err, &re) {
		// A run that stopped for a reason with its own code (connection,
		// authentication, schema) keeps it; otherwise it could not continue.
		// A server that did not come back within --reconnect-for is a run
		// that could not continue, not an unreachable target.
		if errors.Is(re.Err, driver.ErrServerGone) {
			return exitRunFailed
		}
		if c := exitCode(re.Err); c != exitFailure {
			return c
		}
		return exitRunFailed
	}
	var be *scenario.BackupError
	if errors.As(err, &be) {
		// A missing tool, an unusable directory or a restored server that
		// did not start keep their own codes; a tool that failed is this.
		if c := exitCode(be.Err); c != exitFailure {
			return c
		}
		return exitBackup
	}
	var rv *scenario.RendezvousError
	if errors.As(err, &rv) {
		return exitRendezvous
	}
	var died *scenario.ServerFailedError
	if errors.As(err, &died) {
		return exitServerDied
	}
	var fails *scenario.FailuresError
	if errors.As(err, &fails) {
		return exitFailures
	}
	var sus *scenario.SuspectError
	if errors.As(err, &sus) {
		return exitSuspect
	}
	var dirty *scenario.ContaminatedError
	if errors.As(err, &dirty) {
		return exitContaminated
	}
	var spe *scenario.SpaceError
	if errors.As(err, &spe) || errors.Is(err, dialect.ErrInUse) {
		return exitRunFailed
	}
	var ue *scenario.UnsupportedError
	var she *scenario.ShardError
	var tooMuch *scenario.CapacityError
	if errors.As(err, &ue) || errors.As(err, &she) || errors.As(err, &tooMuch) {
		return exitUsage
	}
	var u *usageError
	if errors.As(err, &u) || errors.Is(err, scenario.ErrInvalidOptions) {
		return exitUsage
	}
	var ref *results.RefError
	if errors.As(err, &ref) {
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	if code, ok := instanceExitCodes[instance.KindOf(err)]; ok {
		return code
	}
	// A directory oltplab refused to use (internal/claim): a system
	// directory, a link or directory another user could change, files it
	// did not create.
	var ce *claim.Error
	if errors.As(err, &ce) {
		return exitDirectory
	}
	if errors.Is(err, tpchload.ErrNoTPCH) {
		return exitUsage // a dialect without the analytic workload
	}
	var sce *tpcc.SchemaError
	var fe *load.ForeignTablesError
	var tfe *tpchload.ForeignTablesError
	if errors.As(err, &tfe) || errors.Is(err, tpchload.ErrSchemaExists) || errors.Is(err, tpchload.ErrNoSchema) ||
		errors.Is(err, tpchload.ErrIncompleteSchema) {
		return exitSchema
	}
	if errors.As(err, &sce) || errors.As(err, &fe) || errors.Is(err, load.ErrSchemaExists) || errors.Is(err, scenario.ErrNoSchema) ||
		errors.Is(err, scenario.ErrIncompleteSchema) || errors.Is(err, scenario.ErrNotPostBuild) ||
		errors.Is(err, errSchemaMismatch) || errors.Is(err, dialect.ErrNotOurs) {
		return exitSchema
	}
	if errors.Is(err, store.ErrUnwritable) || errors.Is(err, store.ErrNewerSchema) || errors.Is(err, store.ErrDamaged) ||
		errors.Is(err, store.ErrBusy) || errors.Is(err, store.ErrNotStore) {
		return exitStore
	}
	// A file `results import` refuses is bad input: nothing was stored.
	for _, refused := range []error{store.ErrNotSaved, store.ErrSavedTooLarge, store.ErrSavedAltered, store.ErrSavedElsewhere,
		store.ErrSavedUntagged, store.ErrAlreadyImported, store.ErrSavedInvalid} {
		if errors.Is(err, refused) {
			return exitUsage
		}
	}
	if errors.Is(err, dialect.ErrUnknownScheme) || errors.Is(err, dialect.ErrBadTarget) {
		return exitUsage
	}
	if errors.Is(err, dialect.ErrNotPermitted) {
		return exitPermission // logged in fine: not an authentication failure
	}
	var are *agent.RemoteError
	if errors.Is(err, agent.ErrTrust) || errors.As(err, &are) && are.Unauthorized() {
		return exitAuth // an agent not pinned, or refusing the token
	}
	if errors.Is(err, agent.ErrUnreachable) {
		return exitConnect // the database host's agent: unreachable as a target would be
	}
	if errors.Is(err, dialect.ErrNoDatabase) {
		// The server is there, the database is not: the target is wrong
		// (or not created yet), not its schema.
		return exitConnect
	}
	switch dialect.ClassOf(err) {
	case dialect.ClassConnection:
		return exitConnect
	case dialect.ClassAuth:
		return exitAuth
	case dialect.ClassUndefinedObject:
		return exitSchema
	}
	return exitFailure
}

// instanceExitCodes maps the kinds of managed-instance failures.
var instanceExitCodes = map[instance.Kind]int{
	instance.KindSpec:      exitUsage,
	instance.KindBinary:    exitBinary,
	instance.KindDirectory: exitDirectory,
	instance.KindCPUs:      exitCPUs,
	instance.KindDevice:    exitNoDevice,
	instance.KindControl:   exitControl,
	instance.KindStart:     exitServer,
}
