package dialect

import (
	"errors"
	"fmt"
)

// ErrClass is oltplab's own error class; dialects map SQLSTATEs and server
// error numbers onto it.
type ErrClass int

const (
	ClassNone            ErrClass = iota
	ClassSerialization            // retry the whole transaction
	ClassDeadlock                 // retry the whole transaction
	ClassLockTimeout              // retry the whole transaction (after rollback)
	ClassConnection               // connection lost or refused: reconnect
	ClassAuth                     // authentication failed
	ClassUndefinedObject          // table, column or function missing: schema not built
	ClassRollback                 // the expected New-Order rollback (tpcc.ErrRollback)
	ClassCanceled                 // context canceled or deadline exceeded
	ClassOther
	NumErrClasses
)

var classNames = [NumErrClasses]string{"none", "serialization", "deadlock", "lock_timeout", "connection", "auth", "undefined_object", "rollback", "canceled", "other"}

func (c ErrClass) String() string {
	if c < 0 || c >= NumErrClasses {
		return "unknown"
	}
	return classNames[c]
}

// Retryable reports whether the whole transaction should be retried.
func (c ErrClass) Retryable() bool {
	return c == ClassSerialization || c == ClassDeadlock || c == ClassLockTimeout
}

// Error is a classified error. Dialects return it from Open and from
// administrative calls so the CLI can choose an exit code without parsing
// text. Neither Op nor Err's text may contain a password.
type Error struct {
	Class ErrClass
	Op    string // what was being done: "connect", "create tables", ...
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %v", e.Op, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// ErrNoDatabase is wrapped by the error of a dialect's Open when the server
// is reachable but has no database of the target's name; the error says
// how to create it.
var ErrNoDatabase = errors.New("no such database on the server")

// ClassOf returns the class carried by a wrapped *Error, or ClassOther.
func ClassOf(err error) ErrClass {
	if err == nil {
		return ClassNone
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ClassOther
}
