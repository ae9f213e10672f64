//go:build !linux

package sysstat

import (
	"errors"
	"fmt"
)

func statDev(path string) (dev, rdev devNum, err error) {
	return devNum{}, devNum{}, fmt.Errorf("device of %s: %w", path, errors.ErrUnsupported)
}
