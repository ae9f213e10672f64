package results

import (
	"fmt"

	"github.com/oltplab/oltplab/internal/store"
)

// RefError is a profile or experiment a user named that cannot be shown:
// no such label or id, or nothing measured in it.
type RefError struct {
	What string // "profile", "experiment"
	Ref  string // the name given; empty when none was
	Err  error
}

func (e *RefError) Error() string {
	if e.Ref == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s %q: %v", e.What, e.Ref, e.Err)
}

func (e *RefError) Unwrap() error { return e.Err }

// storeErr is a failure to read the store.
func storeErr(op string, err error) error {
	return &store.OpError{Op: op, Err: err}
}
