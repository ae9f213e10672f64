package postgres

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// RollbackSQLState is the SQLSTATE that oltplab_new_order raises on an
// unused item number (TPC-C 2.4.2.3). Class "TP" is not used by PostgreSQL;
// Classify maps it to dialect.ClassRollback and sessions to tpcc.ErrRollback.
const RollbackSQLState = "TP001"

// sqlStateClass maps SQLSTATEs (and, for class 08, the class) to oltplab's
// classes. See https://www.postgresql.org/docs/15/errcodes-appendix.html.
var sqlStateClass = map[string]dialect.ErrClass{
	"40001":          dialect.ClassSerialization, // serialization_failure
	"40P01":          dialect.ClassDeadlock,      // deadlock_detected
	"55P03":          dialect.ClassLockTimeout,   // lock_not_available: lock_timeout and NOWAIT
	"57P01":          dialect.ClassConnection,    // admin_shutdown
	"57P02":          dialect.ClassConnection,    // crash_shutdown
	"57P03":          dialect.ClassConnection,    // cannot_connect_now (starting up, shutting down)
	"53300":          dialect.ClassConnection,    // too_many_connections
	"28P01":          dialect.ClassAuth,          // invalid_password
	"28000":          dialect.ClassAuth,          // invalid_authorization_specification (pg_hba reject, no such role)
	"42P01":          dialect.ClassUndefinedObject,
	"42883":          dialect.ClassUndefinedObject, // undefined_function: procedures not installed
	"42703":          dialect.ClassUndefinedObject, // undefined_column
	"3D000":          dialect.ClassUndefinedObject, // invalid_catalog_name: no such database
	"3F000":          dialect.ClassUndefinedObject, // invalid_schema_name
	RollbackSQLState: dialect.ClassRollback,
}

// Classify maps an error from this dialect to a class, by SQLSTATE or by
// the Go error type, never by message text.
func (d *Database) Classify(err error) dialect.ErrClass { return classify(err) }

func classify(err error) dialect.ErrClass {
	if err == nil {
		return dialect.ClassNone
	}
	if errors.Is(err, tpcc.ErrRollback) {
		return dialect.ClassRollback
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if c, ok := sqlStateClass[pe.Code]; ok {
			return c
		}
		if len(pe.Code) == 5 && pe.Code[:2] == "08" { // connection_exception
			return dialect.ClassConnection
		}
		return dialect.ClassOther
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && !errors.Is(err, context.Canceled) {
		// Also a connect that ran out of time (connect_timeout): the
		// server did not answer, it is unreachable.
		return dialect.ClassConnection
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return dialect.ClassCanceled
	}
	var ne net.Error
	if errors.As(err, &ne) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, pgconn.ErrConnClosed) {
		return dialect.ClassConnection
	}
	var de *dialect.Error
	if errors.As(err, &de) {
		return de.Class
	}
	return dialect.ClassOther
}
