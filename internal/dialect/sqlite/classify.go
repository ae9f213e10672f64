package sqlite

import (
	"context"
	"errors"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Classify implements dialect.Database.
func (d *Database) Classify(err error) dialect.ErrClass { return classify(err) }

// classify maps an error to a class by SQLite result code (the primary code,
// the low byte of an extended one), never by message text. SQLite reports
// a missing table as the generic SQLITE_ERROR (ClassOther): callers tell
// "schema not built" apart with HasTable.
func classify(err error) dialect.ErrClass {
	if err == nil {
		return dialect.ClassNone
	}
	if errors.Is(err, tpcc.ErrRollback) {
		return dialect.ClassRollback
	}
	var de *dialect.Error
	if errors.As(err, &de) {
		return de.Class
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY: // also SQLITE_BUSY_SNAPSHOT, _RECOVERY, _TIMEOUT
			// busy_timeout expired waiting for another connection's lock.
			return dialect.ClassLockTimeout
		case sqlite3.SQLITE_LOCKED:
			// A conflict inside one connection or shared cache: retry.
			return dialect.ClassDeadlock
		case sqlite3.SQLITE_CANTOPEN:
			return dialect.ClassUndefinedObject
		case sqlite3.SQLITE_INTERRUPT:
			return dialect.ClassCanceled
		case sqlite3.SQLITE_NOTADB:
			return dialect.ClassOther
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return dialect.ClassCanceled
	}
	return dialect.ClassOther
}

// isNotADB reports SQLITE_NOTADB: the file exists but is not a database.
func isNotADB(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB
}
