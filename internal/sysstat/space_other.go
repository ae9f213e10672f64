//go:build !linux

package sysstat

import "errors"

func freeBytes(string) (int64, error) { return 0, errors.New("free space: only known on Linux") }
