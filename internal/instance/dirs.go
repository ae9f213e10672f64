package instance

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/oltplab/oltplab/internal/claim"
)

// An instance's directories are taken with internal/claim: data_dir (and
// wal_dir) must be new, empty, or marked by oltplab before (a managed
// instance's, or a restored copy's); the path may not go through a link
// or a directory another user could change (the server's own account
// aside), nor be a system directory. The directory stays oltplab's user's
// (never handed to the server's account); the server gets the engine's
// own directory in it, which oltplab creates for it, and its log is a
// file oltplab opens there without following a link. Nothing is chowned
// that oltplab did not create.

// instanceReuse are the marks a start accepts as they are.
var instanceReuse = []claim.Kind{claim.KindInstance, claim.KindRestore}

// trust is who may own the directories of the instance's paths: root,
// oltplab's user and the server's account.
func trust(acct *osAccount) claim.Trust {
	if acct == nil {
		return nil
	}
	return claim.Trust{acct.UID}
}

// dirError is a directory refused or unusable, as a KindDirectory error
// naming the field and the directory as given.
func dirError(field, dir string, err error) error {
	return errorf(KindDirectory, "%s %s: %v", field, dir, unwrapPath(err))
}

// logError is the server log refused or unusable: claim's refusal names
// the file already.
func logError(file string, err error) error {
	var ce *claim.Error
	if errors.As(err, &ce) {
		return errorf(KindDirectory, "server log: %v", ce)
	}
	return errorf(KindDirectory, "server log %s: %v", file, unwrapPath(err))
}

// takeDirs takes data_dir and wal_dir, creates the engine's directories
// in them for the server's account (when they do not exist yet) and
// checks that the account can reach them.
func (i *Instance) takeDirs() error {
	o := claim.TakeOptions{Trust: trust(i.acct), Reuse: instanceReuse}
	d, err := claim.Take(i.dataDir, claim.NewMark(claim.KindInstance), o)
	if err != nil {
		return dirError("data_dir", i.spec.DataDir, err)
	}
	i.data, i.dataDir = d, d.Path()
	i.engineDir = filepath.Join(i.dataDir, string(i.spec.Engine))
	i.logFile = i.engineDir + ".log"
	if i.walDir != "" {
		w, err := claim.Take(i.walDir, claim.NewMark(claim.KindInstance), o)
		if err != nil {
			return dirError("wal_dir", i.spec.WALDir, err)
		}
		i.wal, i.walDir = w, w.Path()
		i.engineWALDir = filepath.Join(i.walDir, string(i.spec.Engine)+"-wal")
	}
	if !i.eng.server() {
		return nil
	}
	if err := engineDir(i.data, string(i.spec.Engine), i.acct); err != nil {
		return dirError("data_dir", i.spec.DataDir, err)
	}
	if i.wal != nil {
		if err := engineDir(i.wal, string(i.spec.Engine)+"-wal", i.acct); err != nil {
			return dirError("wal_dir", i.spec.WALDir, err)
		}
	}
	if i.acct != nil {
		for _, d := range []struct{ field, given, dir string }{{"data_dir", i.spec.DataDir, i.engineDir}, {"wal_dir", i.spec.WALDir, i.engineWALDir}} {
			if d.dir == "" {
				continue
			}
			if err := reachable(d.dir, i.acct); err != nil {
				return dirError(d.field, d.given, err)
			}
		}
	}
	return nil
}

// engineDir makes sure the directory name in parent exists, a directory
// (not a link); when missing it is created, mode 0700, for acct.
func engineDir(parent *claim.Dir, name string, acct *osAccount) error {
	d, err := parent.OpenDir(name)
	if errors.Is(err, fs.ErrNotExist) {
		uid, gid := -1, -1
		if acct != nil {
			uid, gid = acct.UID, acct.GID
		}
		d, err = parent.Mkdir(name, 0o700, uid, gid)
	}
	if err != nil {
		return err
	}
	return d.Close()
}

// closeDirs releases the instance's directories.
func (i *Instance) closeDirs() {
	for _, d := range []*claim.Dir{i.data, i.wal} {
		_ = d.Close()
	}
}

// openLog opens the server log for appending: a regular file of
// oltplab's user (or, written by an earlier oltplab, the server's
// account) in data_dir, never through a link.
func (i *Instance) openLog() (*os.File, error) {
	var owners []int
	if i.acct != nil {
		owners = append(owners, i.acct.UID)
	}
	f, err := i.data.AppendFile(filepath.Base(i.logFile), 0o640, owners...)
	if err != nil {
		return nil, logError(i.logFile, err)
	}
	return f, nil
}

// CheckBackupDirs tells, creating nothing, whether backups of engine e
// could go to dirs (and restores): the checks Backup and Restore make of
// where they write (claim.CheckWithin), for a plan's dry run. A refusal
// is a KindDirectory error.
func CheckBackupDirs(e Engine, dirs ...string) error {
	var acct *osAccount
	if eng, ok := engines[e]; ok && eng.server() && os.Geteuid() == 0 {
		acct, _ = lookupAccount(eng.osUser()) // Check reports a missing account
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if _, err := claim.CheckWithin(d, trust(acct)); err != nil {
			return dirError("directory", d, err)
		}
	}
	return nil
}
