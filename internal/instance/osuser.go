package instance

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// osAccount is the unprivileged account a server runs as when oltplab
// runs as root (PostgreSQL refuses to run as root; MariaDB should not).
type osAccount struct {
	Name     string `json:"name"`
	UID, GID int    `json:"-"`
}

// lookupAccount finds the account the engine's package created.
func lookupAccount(name string) (*osAccount, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %s has a non-numeric id", name)
	}
	return &osAccount{Name: name, UID: uid, GID: gid}, nil
}

// credential is what the child process runs as; nil runs it as oltplab.
func (a *osAccount) credential() *syscall.Credential {
	if a == nil {
		return nil
	}
	return &syscall.Credential{Uid: uint32(a.UID), Gid: uint32(a.GID), NoSetGroups: false, Groups: []uint32{}}
}

// prepareDir creates dir when missing, hands it to the server's account
// and checks that the account can reach and write it. Failures are
// KindDirectory.
func prepareDir(role, dir string, acct *osAccount) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return errorf(KindDirectory, "%s %s: cannot create it: %v", role, dir, unwrapPath(err))
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return errorf(KindDirectory, "%s %s: %v", role, dir, unwrapPath(err))
	}
	if !fi.IsDir() {
		return errorf(KindDirectory, "%s %s is not a directory", role, dir)
	}
	if acct != nil {
		if err := os.Chown(dir, acct.UID, acct.GID); err != nil {
			return errorf(KindDirectory, "%s %s: cannot hand it to user %s: %v", role, dir, acct.Name, unwrapPath(err))
		}
		if err := reachable(dir, acct); err != nil {
			return errorf(KindDirectory, "%s %s: %v", role, dir, err)
		}
	}
	probe := filepath.Join(dir, ".oltplab-probe-"+randomString(8))
	f, err := os.OpenFile(probe, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return errorf(KindDirectory, "%s %s is not writable: %v", role, dir, unwrapPath(err))
	}
	f.Close()
	os.Remove(probe)
	return nil
}

// reachable checks that acct may search every directory above dir (the
// permission bits; root's own access proves nothing for the server).
func reachable(dir string, acct *osAccount) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok {
			mode := fi.Mode().Perm()
			var can bool
			switch {
			case int(st.Uid) == acct.UID:
				can = mode&0o100 != 0
			case int(st.Gid) == acct.GID:
				can = mode&0o010 != 0
			default:
				can = mode&0o001 != 0
			}
			if !can {
				return fmt.Errorf("user %s cannot reach it: %s is mode %04o, owned by uid %d (allow others to search it: chmod o+x %s)",
					acct.Name, d, mode, st.Uid, d)
			}
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

// chownTree hands a tree to acct (nil: nothing to do).
func chownTree(root string, acct *osAccount) error {
	if acct == nil {
		return nil
	}
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, acct.UID, acct.GID)
	})
}

// unwrapPath drops the path from an *fs.PathError (the message names the
// directory already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// randomString is n (at most 26) random letters and digits, from
// crypto/rand (passwords, names).
func randomString(n int) string { return rand.Text()[:n] }
