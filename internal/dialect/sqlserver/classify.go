package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Server error numbers the dialect acts on, besides the classes below.
const (
	// errnoCannotOpenDatabase: the login succeeded, the database named in
	// it cannot be opened (missing, or not this login's to open).
	errnoCannotOpenDatabase = 4060
	// errnoNoSuchDatabase: "Database '%.*ls' does not exist" (also
	// Babelfish's answer to a login naming a missing database).
	errnoNoSuchDatabase = 911
	// errnoUnmapped is Babelfish's number for a PostgreSQL error it has no
	// SQL Server number for (an unknown relation, an unsupported statement,
	// a lock timeout or a serialization failure alike): it says nothing of
	// the class.
	errnoUnmapped = 33557097
)

// errorClasses maps SQL Server's error numbers to classes
// (https://learn.microsoft.com/sql/relational-databases/errors-events/database-engine-events-and-errors).
// Babelfish answers with the same numbers where it maps a PostgreSQL
// error (deadlock 1205, duplicate key 2627, login 18456), else with
// errnoUnmapped.
var errorClasses = map[int32]dialect.ErrClass{
	1205:                    dialect.ClassDeadlock,        // chosen as the deadlock victim: the transaction was rolled back
	1222:                    dialect.ClassLockTimeout,     // lock request time out period exceeded (SET LOCK_TIMEOUT)
	3960:                    dialect.ClassSerialization,   // snapshot isolation: update conflict
	3961:                    dialect.ClassSerialization,   // snapshot isolation: the object was changed by DDL
	41302:                   dialect.ClassSerialization,   // memory-optimized table: update conflict
	41305:                   dialect.ClassSerialization,   // memory-optimized table: repeatable read validation
	41325:                   dialect.ClassSerialization,   // memory-optimized table: serializable validation
	41301:                   dialect.ClassSerialization,   // memory-optimized table: commit dependency failed
	18456:                   dialect.ClassAuth,            // login failed
	18452:                   dialect.ClassAuth,            // login from an untrusted domain
	18486:                   dialect.ClassAuth,            // login locked out
	18487:                   dialect.ClassAuth,            // password expired
	18488:                   dialect.ClassAuth,            // password must be changed
	208:                     dialect.ClassUndefinedObject, // invalid object name
	207:                     dialect.ClassUndefinedObject, // invalid column name
	2812:                    dialect.ClassUndefinedObject, // could not find stored procedure
	errnoCannotOpenDatabase: dialect.ClassUndefinedObject,
	errnoNoSuchDatabase:     dialect.ClassUndefinedObject,
	233:                     dialect.ClassConnection, // no process is on the other end of the pipe
	6005:                    dialect.ClassConnection, // SHUTDOWN is in progress
	596:                     dialect.ClassConnection, // the session is in the kill state
	40613:                   dialect.ClassConnection, // Azure SQL: database not currently available
	40197:                   dialect.ClassConnection, // Azure SQL: the service had an error processing the request
	40501:                   dialect.ClassConnection, // Azure SQL: the service is busy
	17142:                   dialect.ClassConnection, // the server is paused: no new connections
	3617:                    dialect.ClassCanceled,   // the client canceled the request (attention)
}

// Classify maps err to a class by server error number, never by message.
func (d *DB) Classify(err error) dialect.ErrClass { return classify(err) }

func classify(err error) dialect.ErrClass {
	if err == nil {
		return dialect.ClassNone
	}
	if errors.Is(err, tpcc.ErrRollback) {
		return dialect.ClassRollback
	}
	var me mssql.Error
	if errors.As(err, &me) {
		// A login failure comes as several errors (4060, then 18456):
		// the first one with a class says most.
		all := me.All
		if len(all) == 0 {
			all = []mssql.Error{me}
		}
		for _, e := range all {
			if c, ok := errorClasses[e.Number]; ok {
				return c
			}
		}
		var se mssql.ServerError
		if errors.As(err, &se) {
			// A fatal error that severed the connection.
			return dialect.ClassConnection
		}
		return dialect.ClassOther
	}
	var le loginTimeout
	switch {
	case errors.As(err, &le):
		return dialect.ClassConnection
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return dialect.ClassCanceled
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return dialect.ClassConnection
	}
	var ne net.Error
	var st mssql.StreamError
	if errors.As(err, &ne) || errors.As(err, &st) {
		return dialect.ClassConnection
	}
	var de *dialect.Error
	if errors.As(err, &de) {
		return de.Class
	}
	return dialect.ClassOther
}

// serverErrno returns the number of the first server error in err's
// chain, or 0.
func serverErrno(err error) int32 {
	var me mssql.Error
	if !errors.As(err, &me) {
		return 0
	}
	if len(me.All) > 0 {
		return me.All[0].Number
	}
	return me.Number
}
