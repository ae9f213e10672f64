package dbtest

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
)

// ServerDir is a new directory a server running as another user can
// read: where the build benchmarks write the files their limit loads.
func ServerDir(b testing.TB, prefix string) string {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}

// Files writes lines into new files of one directory, one per key (a
// table), each created at its first line (never an existing file) and
// written through a buffer.
type Files[K comparable] struct {
	dir  string
	outs map[K]*bufio.Writer
	open []*os.File
}

// NewFiles writes into dir.
func NewFiles[K comparable](dir string) *Files[K] {
	return &Files[K]{dir: dir, outs: map[K]*bufio.Writer{}}
}

// Write appends line to k's file; the first line of k creates the file
// named name() and returns its path (later ones return "").
func (f *Files[K]) Write(k K, name func() string, line []byte) (created string, err error) {
	w := f.outs[k]
	if w == nil {
		created = filepath.Join(f.dir, name())
		file, err := os.OpenFile(created, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return "", err
		}
		f.open = append(f.open, file)
		w = bufio.NewWriterSize(file, 1<<20)
		f.outs[k] = w
	}
	_, err = w.Write(line)
	return created, err
}

// Close flushes and closes every file, and returns the first error.
func (f *Files[K]) Close() error {
	var err error
	for _, w := range f.outs {
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
	}
	for _, file := range f.open {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
