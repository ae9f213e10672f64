package dialect

import (
	"context"
	"strings"
)

// DataDirer is implemented by a Database whose files may be on this host,
// so that the host sampler can watch the block device under them and
// results can describe that storage.
type DataDirer interface {
	// DataDir returns the directory holding the database's files when
	// they are on this host (an embedded database's file, a server on
	// loopback or a Unix socket), or "" when they are elsewhere or the
	// server does not show its data directory to this user.
	DataDir(ctx context.Context) (string, error)
}

// OnThisHost reports whether a server host taken from a target is this
// machine: a loopback name or address, a Unix socket directory, or no
// host at all (the driver's local socket).
func OnThisHost(host string) bool {
	switch host {
	case "", "localhost", "127.0.0.1", "::1":
		return true
	}
	return strings.HasPrefix(host, "/")
}
