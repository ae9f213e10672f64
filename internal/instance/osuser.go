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

// writeOwnFile writes the file name of dir (a directory of oltplab's
// making that acct may write: a run directory, the tools' home) with
// content, mode 0600, handed to acct. Whatever is in its place is
// removed first, never followed: acct could have put a link or a hard
// link to another file there. The file is created with O_EXCL and
// O_NOFOLLOW and handed over through its descriptor.
func writeOwnFile(dir, name, content string, acct *osAccount) (string, error) {
	p := filepath.Join(dir, name)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	_, err = f.WriteString(content)
	if err == nil && acct != nil {
		err = f.Chown(acct.UID, acct.GID)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	return p, nil
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
