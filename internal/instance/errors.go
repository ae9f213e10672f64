package instance

import (
	"errors"
	"fmt"
)

// Kind says why an instance could not be started or kept running. The
// command line maps each kind to its own exit code.
type Kind int

const (
	KindOther     Kind = iota // unexpected failure
	KindSpec                  // a value of the spec is invalid
	KindBinary                // the engine's server binaries are not installed
	KindDirectory             // a directory cannot be created, written or reached by the server's user
	KindCPUs                  // cpus names CPUs this host does not offer to oltplab
	KindDevice                // io_limit on a directory with no block device under it
	KindControl               // the environment cannot provide a requested control
	KindStart                 // the server did not start, or stopped on its own
)

var kindNames = map[Kind]string{
	KindOther: "other", KindSpec: "spec", KindBinary: "binary", KindDirectory: "directory",
	KindCPUs: "cpus", KindDevice: "device", KindControl: "control", KindStart: "start",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error is a failure of a given Kind. Its message is one line.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// KindOf returns the Kind of the first *Error in err's chain, KindOther
// when there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindOther
}
