package dialect

import "context"

// DataDirer is implemented by a Database whose files may be on this host,
// so that the host sampler can watch the block device under them and
// results can describe that storage.
type DataDirer interface {
	// DataDir returns the directory holding the database's files (an
	// embedded database's file, a server's data directory), or "" when
	// the server does not show it to this user. Whether a server's path
	// is on this host is the caller's to decide (scenario.Place).
	DataDir(ctx context.Context) (string, error)
}
