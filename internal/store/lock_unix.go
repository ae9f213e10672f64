//go:build unix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive advisory lock (flock) on the store's
// directory while a process checks, creates and migrates the store, so
// that oltplab processes opening a new store at the same time see it
// either absent or complete. The lock is on the directory, not the file:
// closing a descriptor of the database file would drop SQLite's own
// (fcntl) locks. It waits up to timeout for another opener.
func lockDir(ctx context.Context, dir string, timeout time.Duration) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() {
				_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			if errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP) {
				return func() {}, nil // a file system without locks: go on unserialized
			}
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: another oltplab has been opening a results store there for %s: %w", dir, timeout, ErrBusy)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}
