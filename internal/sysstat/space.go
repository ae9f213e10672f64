package sysstat

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// FreeBytes is the space an unprivileged user can still write on the file
// system that holds path, or would hold it: a path that does not exist
// yet is measured at its nearest existing parent.
func FreeBytes(path string) (int64, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	for {
		if _, err := os.Stat(abs); err == nil {
			return freeBytes(abs)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return 0, fs.ErrNotExist
		}
		abs = parent
	}
}
