//go:build !linux

package sysstat

import (
	"errors"
	"fmt"
)

func statDev(path string) (dev, rdev devNum, err error) {
	return devNum{}, devNum{}, fmt.Errorf("device of %s: %w", path, errors.ErrUnsupported)
}

// FreeBytes is not known on this platform.
func FreeBytes(path string) (int64, error) {
	return 0, fmt.Errorf("free space of %s: %w", path, errors.ErrUnsupported)
}
