package dialect

import "context"

// ServerBackuper is implemented by a Database whose server backs its
// databases up and restores them by statements of its own (SQL Server's
// BACKUP DATABASE and RESTORE DATABASE): the server writes and reads the
// files, so every path is one on the server's file system, which need not
// be this host's.
type ServerBackuper interface {
	// ServerBackup writes a full backup of the database, one that leaves
	// the database's own backup chain as it was, into the new file path.
	ServerBackup(ctx context.Context, path string) (ServerBackup, error)
	// RestoreBackup restores the backup in path as a new database whose
	// files go into the existing directory dir, marked as oltplab's as a
	// Scratcher's databases are, and returns a target for it; the
	// Scratcher's DropScratch drops it.
	RestoreBackup(ctx context.Context, path, dir string) (Target, error)
	// DeleteBackup removes the backup file path from the server, where
	// the server can remove files; otherwise it returns an error saying
	// the file is left there.
	DeleteBackup(ctx context.Context, path string) error
}

// ServerBackup is one backup a ServerBackuper wrote.
type ServerBackup struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Statement is what ran.
	Statement string `json:"statement"`
}
