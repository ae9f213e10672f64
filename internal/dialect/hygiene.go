package dialect

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// Per-step hygiene: optional abilities that make repeated measurements
// start from the same state (`oltplab run --checkpoint-before`,
// `--reset-between`). Shared code finds them by type assertion.

// Checkpointer is implemented by a Database that can write its dirty pages
// and log to the data files on demand, so that a measurement does not pay
// for the writes of the step before it (PostgreSQL CHECKPOINT, InnoDB
// flushing its buffer pool, SQLite checkpointing its WAL).
//
// A user without the privilege gets a *Error of class ClassAuth that wraps
// ErrNotPermitted.
type Checkpointer interface {
	Checkpoint(ctx context.Context) error
}

// Syncer is implemented by a Database whose server may acknowledge a
// commit before it is durable (PostgreSQL's synchronous_commit = off,
// InnoDB's innodb_flush_log_at_trx_commit = 0 or 2). SyncCommitted returns
// once every transaction committed before the call survives a crash of
// the server. A build calls it last: a build stored as done must still be
// there after the server dies a second later.
type Syncer interface {
	SyncCommitted(ctx context.Context) error
}

// Resetter is implemented by a Database that can return to its post-build
// state, by the fastest method it has, so that repeats start equal.
//
// SaveBaseline records the current state (right after a build) as the
// baseline, replacing an older one; Reset returns the database to it;
// DropBaseline removes it when the steps are done.
//
// The baseline is a copy under a name derived from the database's
// (<db>_oltplab_base, <file>.oltplab-base), where the user may keep
// something of their own. SaveBaseline marks the copy it creates
// (BaselineMark, in a form native to the engine); none of the three
// replaces, reads back or removes anything at that name without the mark:
// they refuse with ErrNotOurs and leave it as it is. A file is never
// reached through a symbolic link.
// Neither may run while the caller holds sessions, loaders, connections,
// snapshots or wait probes of the Database: the caller closes them first
// and opens new ones after. The Database itself stays usable.
//
// The baseline remembers the build it was taken from (Fingerprint of the
// metadata in tpcc.MetaTable). Reset refuses, with ErrBaselineStale, a
// database rebuilt since, and with ErrNoBaseline one that has none.
type Resetter interface {
	SaveBaseline(ctx context.Context) error
	Reset(ctx context.Context) error
	// DropBaseline removes the baseline and the space it takes; no
	// baseline is not an error.
	DropBaseline(ctx context.Context) error
}

// BaselineSizer is implemented by a Resetter whose baseline is a full
// copy of the database: BaselineBytes is what that copy takes, so that
// the caller can check the free space before making it.
type BaselineSizer interface {
	BaselineBytes(ctx context.Context) (int64, error)
}

// SessionEnder is implemented by a Resetter that needs the database free
// of other sessions to reset it (a PostgreSQL template copy). By default
// it ends none: SaveBaseline and Reset wait a little for sessions that
// are closing and then fail with ErrInUse, naming who is connected. With
// EndOtherSessions(true) they end the sessions of the same database user
// (never another user's), as the user asked.
type SessionEnder interface {
	EndOtherSessions(on bool)
}

var (
	// ErrInUse: other sessions are connected to a database that a reset
	// must have to itself.
	ErrInUse = errors.New("other sessions are connected to the database")
	// ErrNotPermitted: the database user lacks the privilege a hygiene step
	// needs (PostgreSQL superuser or pg_checkpoint for CHECKPOINT, MariaDB
	// SUPER for SET GLOBAL, CREATEDB for a template copy).
	ErrNotPermitted = errors.New("not permitted for this database user")
	// ErrNoBaseline: Reset found no baseline (SaveBaseline did not run).
	ErrNoBaseline = errors.New("no baseline saved: save one right after a build")
	// ErrNotOurs: something at the name of the baseline copy lacks
	// oltplab's mark: oltplab did not create it, and neither replaces,
	// uses nor removes it.
	ErrNotOurs = errors.New("was not created by oltplab (no mark)")
	// ErrBaselineStale: the database was rebuilt after its baseline was
	// saved, or the baseline was taken from another build.
	ErrBaselineStale = errors.New("the baseline was saved from another build of this database: run with a fresh build")
)

// Fingerprint identifies one build by its metadata: the build time and the
// load seed. A baseline stores it; Reset compares it with the database's.
func Fingerprint(m tpcc.Meta) string {
	return "built_at=" + m.BuiltAt.UTC().Format(time.RFC3339Nano) + " seed=" + strconv.FormatUint(m.LoadSeed, 10)
}

// CheckFingerprint returns a *Error wrapping ErrBaselineStale when the
// database's fingerprint is not the baseline's. op says what was being done.
func CheckFingerprint(op, database, baseline string) error {
	if database == baseline {
		return nil
	}
	return &Error{Class: ClassOther, Op: op,
		Err: fmt.Errorf("%w (database: %s; baseline: %s)", ErrBaselineStale, database, baseline)}
}

// NotOurs is the refusal of op to touch what (e.g. "database
// tpcc_oltplab_base"), which lacks oltplab's mark; then says what was not
// done and what the user may do: "not dropped; drop it yourself if it is
// yours to lose".
func NotOurs(op, what, then string) error {
	return &Error{Class: ClassOther, Op: op, Err: fmt.Errorf("%s %w: %s", what, ErrNotOurs, then)}
}

// BaselineMark is what SaveBaseline writes into the copy it creates, so
// that it is known as oltplab's: a random id of the copy, when it was
// saved, and the fingerprint of the build it holds.
type BaselineMark struct {
	ID          string
	Saved       time.Time
	Fingerprint string
}

// baselineMarkPrefix begins every mark (and the marks of older oltplab
// versions, which held the fingerprint alone).
const baselineMarkPrefix = "oltplab baseline "

// NewBaselineMark marks a copy of the build with fingerprint fp, saved now.
func NewBaselineMark(fp string) BaselineMark {
	return BaselineMark{ID: strings.ToLower(rand.Text()[:16]), Saved: time.Now().UTC().Truncate(time.Second), Fingerprint: fp}
}

// String is the mark as it is stored: "oltplab baseline id=... saved=...
// built_at=... seed=...".
func (m BaselineMark) String() string {
	return baselineMarkPrefix + "id=" + m.ID + " saved=" + m.Saved.UTC().Format(time.RFC3339) + " " + m.Fingerprint
}

// ParseBaselineMark reads a stored mark; ok is false for anything else.
func ParseBaselineMark(s string) (m BaselineMark, ok bool) {
	rest, ok := strings.CutPrefix(s, baselineMarkPrefix)
	if !ok {
		return m, false
	}
	if v, after, ok := strings.Cut(rest, " "); ok && strings.HasPrefix(v, "id=") {
		m.ID, rest = v[len("id="):], after
	}
	if v, after, ok := strings.Cut(rest, " "); ok && strings.HasPrefix(v, "saved=") {
		t, err := time.Parse(time.RFC3339, v[len("saved="):])
		if err != nil {
			return BaselineMark{}, false
		}
		m.Saved, rest = t, after
	}
	if !strings.HasPrefix(rest, "built_at=") || strings.ContainsAny(rest, "\n\x00") {
		return BaselineMark{}, false
	}
	m.Fingerprint = rest
	return m, true
}
