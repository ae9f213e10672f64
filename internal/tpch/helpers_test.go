package tpch

import (
	"errors"
	"fmt"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// first returns the first non-nil error.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return errors.Join()
}
