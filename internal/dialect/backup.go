package dialect

import "context"

// OnlineBackuper is implemented by embedded dialects that copy a live
// database themselves (SQLite's online backup API): no server tool is
// involved. Server databases are backed up with their engine's own tools
// by internal/instance instead.
type OnlineBackuper interface {
	// OnlineBackup copies the database, consistent as of one moment, into
	// the new file dst (which must not exist) and makes it durable; it
	// returns the bytes of dst. Other connections may read and write
	// meanwhile. When ctx ends it stops between steps and removes dst.
	OnlineBackup(ctx context.Context, dst string) (int64, error)
}
