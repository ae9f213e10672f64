package scenario

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
)

// BackupDatabase is the method of a server that backs itself up by a
// statement (dialect.ServerBackuper: SQL Server's BACKUP DATABASE).
const BackupDatabase instance.BackupMethod = "backup-database"

// statementCopier backs a database up with its server's own statements
// (dialect.ServerBackuper): the server writes each backup into a file
// beside the cycle's directory name in To (dir + ".bak": the server
// creates files, not directories) and restores it as a new database of
// its own with its files in RestoreDir, which the Scratcher drops after
// the check. To and RestoreDir are the server's paths, on its file
// system: nothing is created or measured under them on this host.
type statementCopier struct {
	sb         dialect.ServerBackuper
	sc         dialect.Scratcher
	restoreDir string
	keep       bool
	files      []string // the backups taken, removed by close unless keep
	log        func(msg string, err error)
}

func (s *statementCopier) info() BackupInfo { return BackupInfo{Method: BackupDatabase} }

func (s *statementCopier) onServer() bool { return true }

// prepare makes nothing: To and RestoreDir are the server's paths.
func (s *statementCopier) prepare(...string) error { return nil }

// backup has the server write dir + ".bak" on its own file system: no
// directory of this host's is made, so there is nothing to mark here.
func (s *statementCopier) backup(ctx context.Context, dir string, _ claim.Mark) (int64, string, error) {
	file := dir + ".bak"
	s.files = append(s.files, file)
	b, err := s.sb.ServerBackup(ctx, file)
	if err != nil {
		return 0, "", err
	}
	return b.Bytes, "the server (" + b.Statement + ")", nil
}

func (s *statementCopier) restore(ctx context.Context, dir, _ string, _ claim.Mark) (*restoredCopy, error) {
	started := time.Now()
	tg, err := s.sb.RestoreBackup(ctx, dir+".bak", s.restoreDir)
	steps := []instance.RestoreStep{{Name: "RESTORE DATABASE", Started: started, Ended: time.Now()}}
	if err != nil {
		return &restoredCopy{steps: steps, stop: func(context.Context) error { return nil }}, err
	}
	return &restoredCopy{target: tg, steps: steps,
		stop: func(ctx context.Context) error { return s.sc.DropScratch(ctx, tg) }}, nil
}

// close removes the backup files from the server, where it can.
func (s *statementCopier) close() error {
	if s.keep {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, f := range s.files {
		if err := s.sb.DeleteBackup(ctx, f); err != nil {
			s.log("backup file left on the server: "+f, err)
		}
	}
	return nil
}
