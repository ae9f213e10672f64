package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Error numbers of the stored procedures' own signals (procedures.sql).
// They lie outside the ranges MariaDB and MySQL use for server errors
// (1000-1999, 3000-4999; MySQL's 10000+ are error-log messages only).
const (
	// errnoRollback is New-Order's expected rollback on an unused item
	// number (TPC-C 2.4.2.3): SIGNAL SQLSTATE 'OLRB1' SET MYSQL_ERRNO = 30001.
	errnoRollback = 30001
	// errnoNoCustomer: no customer has the last name a Payment or an
	// Order-Status asked for (the population guarantees one; 2.5.2.2).
	errnoNoCustomer = 30002
)

// errorClasses maps server error numbers, MariaDB's and MySQL's, to classes.
var errorClasses = map[uint16]dialect.ErrClass{
	1213:          dialect.ClassDeadlock,        // ER_LOCK_DEADLOCK: the transaction was rolled back
	1205:          dialect.ClassLockTimeout,     // ER_LOCK_WAIT_TIMEOUT: only the statement was rolled back
	1044:          dialect.ClassAuth,            // ER_DBACCESS_DENIED_ERROR
	1045:          dialect.ClassAuth,            // ER_ACCESS_DENIED_ERROR
	1698:          dialect.ClassAuth,            // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
	1049:          dialect.ClassUndefinedObject, // ER_BAD_DB_ERROR
	1146:          dialect.ClassUndefinedObject, // ER_NO_SUCH_TABLE
	1054:          dialect.ClassUndefinedObject, // ER_BAD_FIELD_ERROR
	1305:          dialect.ClassUndefinedObject, // ER_SP_DOES_NOT_EXIST
	1040:          dialect.ClassConnection,      // ER_CON_COUNT_ERROR: too many connections
	1053:          dialect.ClassConnection,      // ER_SERVER_SHUTDOWN
	1927:          dialect.ClassConnection,      // ER_CONNECTION_KILLED (MariaDB)
	2006:          dialect.ClassConnection,      // CR_SERVER_GONE_ERROR
	2013:          dialect.ClassConnection,      // CR_SERVER_LOST
	4031:          dialect.ClassConnection,      // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
	1317:          dialect.ClassCanceled,        // ER_QUERY_INTERRUPTED
	errnoRollback: dialect.ClassRollback,
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
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if c, ok := errorClasses[me.Number]; ok {
			return c
		}
		return dialect.ClassOther
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return dialect.ClassCanceled
	case errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return dialect.ClassConnection
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return dialect.ClassConnection
	}
	var de *dialect.Error
	if errors.As(err, &de) {
		return de.Class
	}
	return dialect.ClassOther
}

// errno returns the server error number in err's chain, or 0.
func errno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}
