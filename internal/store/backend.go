package store

import (
	"context"
	"time"
)

// A backend is the database engine that holds a store: an embedded SQLite
// file (the default) or a PostgreSQL database shared by a team. Everything
// else in this package is written once, in the SQL both understand; what
// differs is data a backend supplies (the DDL's type names, placeholders,
// a row lock clause) and the few checks each engine does its own way
// (what marks a store as ours, integrity, serializing creation, which
// errors are worth retrying).
type backend interface {
	// location is the store as the user may see it: a file's absolute
	// path, a URL without its password.
	location() string
	// ddl turns a migration statement, written in SQLite's words, into
	// this engine's.
	ddl(stmt string) string
	// rebind turns the '?' placeholders of a statement into this
	// engine's.
	rebind(q string) string
	// forUpdate is the clause that locks the rows a write transaction
	// reads before it changes them ("" where the transaction already
	// holds the whole store).
	forUpdate() string
	// setWait is the statement that bounds, on one connection, how long a
	// statement waits for another writer's lock.
	setWait(d time.Duration) string
	// checkVersion returns the stored schema version (0 for an empty
	// store), ErrNewerSchema for a newer one and ErrNotStore for a file
	// or schema that holds something else. It only reads.
	checkVersion(ctx context.Context, q queryer) (int, error)
	// checkIntegrity refuses a damaged store with ErrDamaged.
	checkIntegrity(ctx context.Context, c *dbConn) error
	// prepare readies a connection before the migration transaction.
	prepare(ctx context.Context, c *dbConn) error
	// lockMigration serializes migrations between processes inside the
	// migration transaction (when BEGIN does not already).
	lockMigration(ctx context.Context, t *dbTx) error
	// markStore marks a new store as oltplab's, in the transaction that
	// creates it.
	markStore(ctx context.Context, t *dbTx) error
	// classify maps the engine's errors (by code, never by message) to
	// this package's sentinels, wrapping err.
	classify(err error) error
	// savedLocation is where a result the store cannot take is saved:
	// directories to try in order and the file name's prefix.
	savedLocation() (dirs []string, prefix string)
}
