package store

// OpError is a failure of the results store while a caller recorded or
// read something in it (Op): the measurement may be fine, the store is
// not. Callers wrap what a Store method returned in it so that the
// command maps it onto the store's exit code.
type OpError struct {
	Op  string // what was being done, e.g. "record the run"
	Err error
}

func (e *OpError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }
