package cli

import (
	"context"
	"errors"
	"fmt"

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
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// Exit codes. Each failure a user can act on has its own code, documented
// in `oltplab --help` and README.
const (
	exitOK          = 0
	exitFailure     = 1 // unexpected failure
	exitUsage       = 2 // bad flags or values
	exitConnect     = 3 // target unreachable
	exitAuth        = 4 // authentication failed
	exitSchema      = 5 // schema missing, incomplete, of another version, or already present (or the user's at the baseline copy's name)
	exitCheckFailed = 6 // a consistency condition failed
	exitStore       = 7 // results store unusable
	exitRunFailed   = 8 // the run could not continue (e.g. connection lost for good)
	// Managed instances (internal/instance), one code per kind of failure.
	exitBinary      = 9  // a managed server's binaries are not installed
	exitDirectory   = 10 // a managed instance's directory cannot be created, written or reached
	exitCPUs        = 11 // cpus names CPUs this host does not offer
	exitNoDevice    = 12 // io_limit on a directory with no block device under it
	exitControl     = 13 // the environment cannot provide a requested control (e.g. no writable cgroup)
	exitServer      = 14 // a managed server failed to start or stopped on its own
	exitNoSpace     = 15 // too little free space for a build (a plan's or build's)
	exitSuspect     = 16 // measured and stored, but the database's figures disagree with the driver's own counts
	exitPermission  = 17 // the database user lacks a privilege the command needs
	exitBackup      = 18 // a backup, or the restore of one, failed (the source is untouched)
	exitFailures    = 19 // measured and stored, but more transactions failed than --max-failure-rate allows
	exitStartAt     = 20 // --start-at is in the past or too far ahead: the shards cannot share it
	exitShardMissed = 21 // a sharded run was merged without one of its shards (the merged profile is partial and names it)
	exitRendezvous  = 22 // not every shard arrived at the rendezvous within --rendezvous-timeout
	exitSelftest    = 23 // a check of oltplab selftest failed
	exitInterrupted = 130
)

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
	var fails *scenario.FailuresError
	if errors.As(err, &fails) {
		return exitFailures
	}
	var sus *scenario.SuspectError
	if errors.As(err, &sus) {
		return exitSuspect
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
	var sce *tpcc.SchemaError
	var fe *load.ForeignTablesError
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
