package claim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/oltplab/oltplab/internal/testenv"
)

const nobody = 65534

func mkdir(t *testing.T, p string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func write(t *testing.T, p, content string) string {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func refused(t *testing.T, err error, want string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v, want a one-line refusal saying %q", err, want)
	}
}

func TestSystem(t *testing.T) {
	for _, c := range []struct {
		p            string
		take, within bool // refused
	}{
		{"/", true, true},
		{"/etc", true, true},
		{"/etc/oltplab", true, true},
		{"/usr/lib/x", true, true},
		{"/usr/local", true, false},
		{"/usr/local/pgsql", false, false},
		{"/proc/1", true, true},
		{"/dev/sda", true, true},
		{"/dev/shm", true, false},
		{"/dev/shm/x", false, false},
		{"/tmp", true, false},
		{"/tmp/x", false, false},
		{"/var/lib", true, false},
		{"/var/lib/oltplab", false, false},
		{"/home", true, false},
		{"/srv/oltplab", false, false},
		{"/libx", false, false},
	} {
		if got := system(c.p, true); got != c.take {
			t.Errorf("take %s: refused %v, want %v", c.p, got, c.take)
		}
		if got := system(c.p, false); got != c.within {
			t.Errorf("write in %s: refused %v, want %v", c.p, got, c.within)
		}
	}
	_, err := Take("/", NewMark(KindInstance), TakeOptions{})
	refused(t, err, "system directory")
	_, err = CheckTake("/etc", TakeOptions{})
	refused(t, err, "system directory")
	_, err = Within("/proc/self", nil, false)
	refused(t, err, "system directory")
}

// TestTake: a new directory is created and marked, an empty one taken and
// marked, a marked one reused only when its kind may be, and one holding
// anything else, or that others may write, is refused and left as it was.
func TestTake(t *testing.T) {
	base := mkdir(t, filepath.Join(t.TempDir(), "base"), 0o755)
	reuse := TakeOptions{Reuse: []Kind{KindInstance}}

	d, err := Take(filepath.Join(base, "new", "data"), NewMark(KindInstance), reuse)
	if err != nil {
		t.Fatal(err)
	}
	m, ok, err := d.Mark()
	d.Close()
	if err != nil || !ok || m.Kind != KindInstance {
		t.Errorf("new directory's mark: %+v %v %v", m, ok, err)
	}
	if fi, err := os.Stat(filepath.Join(base, "new")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("a parent made on the way: %v, %v; want mode 0755", fi.Mode(), err)
	}
	// Marked: reused as it is, with what oltplab put there.
	write(t, filepath.Join(base, "new", "data", "postgres.log"), "log\n")
	d, err = Take(filepath.Join(base, "new", "data"), NewMark(KindInstance), reuse)
	if err != nil {
		t.Errorf("reuse a marked directory: %v", err)
	} else if m2, _, _ := d.Mark(); m2.ID != m.ID {
		t.Errorf("reused directory's mark: %s, want the first one %s", m2.ID, m.ID)
	}
	d.Close()
	_, err = Take(filepath.Join(base, "new", "data"), NewMark(KindRestore), TakeOptions{})
	refused(t, err, "is not empty")

	empty := mkdir(t, filepath.Join(base, "empty"), 0o755)
	d, err = Take(empty, NewMark(KindInstance), reuse)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := os.Stat(filepath.Join(empty, MarkFile)); err != nil {
		t.Errorf("an empty directory taken is not marked: %v", err)
	}

	foreign := mkdir(t, filepath.Join(base, "foreign"), 0o755)
	write(t, filepath.Join(foreign, "notes.txt"), "mine\n")
	_, err = Take(foreign, NewMark(KindInstance), reuse)
	refused(t, err, "holds files oltplab did not create (notes.txt)")
	_, err = CheckTake(foreign, reuse)
	refused(t, err, "holds files oltplab did not create")
	if _, err := os.Stat(filepath.Join(foreign, MarkFile)); err == nil {
		t.Error("a refused directory was marked")
	}

	open := mkdir(t, filepath.Join(base, "open"), 0o777)
	_, err = Take(open, NewMark(KindInstance), reuse)
	refused(t, err, "may be written by other users")

	// A fake mark (a link to a mark elsewhere) is no mark.
	fake := mkdir(t, filepath.Join(base, "fake"), 0o755)
	if err := os.Symlink(filepath.Join(base, "new", "data", MarkFile), filepath.Join(fake, MarkFile)); err != nil {
		t.Fatal(err)
	}
	_, err = Take(fake, NewMark(KindInstance), reuse)
	refused(t, err, "oltplab did not create")

	// What does not exist yet is judged by its nearest existing parent.
	if got, err := CheckTake(filepath.Join(base, "later", "data"), reuse); err != nil || got != base {
		t.Errorf("check a new directory: %q, %v; want %s", got, err, base)
	}
	// oltplab's own link in its own directory is followed, and the
	// directory is known by its path without it.
	if err := os.Symlink("new", filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	d, err = Take(filepath.Join(base, "alias", "data"), NewMark(KindInstance), reuse)
	if err != nil {
		t.Fatalf("through a link of oltplab's user: %v", err)
	}
	if want := filepath.Join(base, "new", "data"); d.Path() != want {
		t.Errorf("path: %s, want %s", d.Path(), want)
	}
	d.Close()
}

// TestTakeRefusesOthers: as root, what another user could change is never
// taken: a link planted in a world-writable directory, a link of another
// user's, a directory another user owns, one below such a directory, one
// in a world-writable directory without the sticky bit.
func TestTakeRefusesOthers(t *testing.T) {
	testenv.Require(t, testenv.Root)
	base := mkdir(t, filepath.Join(t.TempDir(), "base"), 0o755)
	victim := mkdir(t, filepath.Join(base, "victim"), 0o700)
	secret := write(t, filepath.Join(victim, "secret"), "root's\n")
	world := mkdir(t, filepath.Join(base, "world"), os.ModeSticky|0o777)
	for _, l := range []struct{ name, target string }{{"link", victim}, {"rootlink", victim}} {
		if err := os.Symlink(l.target, filepath.Join(world, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Lchown(filepath.Join(world, "link"), nobody, nobody); err != nil {
		t.Fatal(err)
	}
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755)
	if err := os.Chown(theirs, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	theirLink := filepath.Join(base, "their-link")
	if err := os.Symlink(victim, theirLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(theirLink, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	open := mkdir(t, filepath.Join(base, "open"), 0o777)
	inWorld := mkdir(t, filepath.Join(world, "theirs"), 0o755)
	if err := os.Chown(inWorld, nobody, nobody); err != nil {
		t.Fatal(err)
	}

	cases := []struct{ path, why string }{
		{filepath.Join(world, "link"), "symbolic link in " + world},
		{filepath.Join(world, "rootlink"), "symbolic link in " + world},
		{filepath.Join(world, "link", "data"), "symbolic link in " + world},
		{theirLink, "symbolic link of user 65534"},
		{theirs, "belongs to user 65534"},
		{filepath.Join(theirs, "data"), "belongs to user 65534"},
		{filepath.Join(open, "data"), "may be written by other users (mode 0777)"},
		{inWorld, "belongs to user 65534"},
	}
	for _, c := range cases {
		_, err := Take(c.path, NewMark(KindInstance), TakeOptions{Reuse: []Kind{KindInstance}})
		refused(t, err, c.why)
		_, err = CheckTake(c.path, TakeOptions{})
		refused(t, err, c.why)
		_, err = Within(c.path, nil, true)
		refused(t, err, c.why)
	}
	// The server's account may own the directory it is given.
	d, err := Take(theirs, NewMark(KindInstance), TakeOptions{Trust: Trust{nobody}})
	if err != nil {
		t.Errorf("a directory of a trusted user: %v", err)
	} else {
		d.Close()
	}
	fi, err := os.Stat(victim)
	if err != nil || fi.Mode().Perm() != 0o700 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("victim: %v, %v; want root's, mode 0700", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 1 || read(t, secret) != "root's\n" {
		t.Errorf("victim holds %v, want its secret alone, unchanged", entries)
	}
	for _, p := range []string{open, world} {
		if entries, _ := os.ReadDir(p); len(entries) > 4 {
			t.Errorf("%s: %d entries, want nothing created", p, len(entries))
		}
	}
	if _, err := os.Stat(filepath.Join(open, "data")); err == nil {
		t.Errorf("created %s in a directory others may write", filepath.Join(open, "data"))
	}
}

// TestWithin: oltplab creates its own files in a directory of root's, a
// world-writable one with the sticky bit (/tmp), never in one without it.
func TestWithin(t *testing.T) {
	base := mkdir(t, filepath.Join(t.TempDir(), "base"), 0o755)
	d, err := Within(filepath.Join(base, "backups"), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := d.MkdirMarked("cycle-1", NewMark(KindBackup))
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()
	if _, err := d.MkdirMarked("cycle-1", NewMark(KindBackup)); !errors.Is(err, os.ErrExist) {
		t.Errorf("make it again: %v, want it exists", err)
	}
	d.Close()
	if _, err := Within(filepath.Join(base, "missing"), nil, false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing directory without create: %v, want not exist", err)
	}
	if _, err := Within(mkdir(t, filepath.Join(base, "sticky"), os.ModeSticky|0o777), nil, false); err != nil {
		t.Errorf("a world-writable directory with the sticky bit: %v", err)
	}
	_, err = Within(mkdir(t, filepath.Join(base, "open"), 0o777), nil, false)
	refused(t, err, "may be written by other users")
	write(t, filepath.Join(base, "file"), "")
	_, err = Within(filepath.Join(base, "file", "x"), nil, true)
	refused(t, err, "is not a directory")
}

// TestRemove: only what carries the mark goes, through no link.
func TestRemove(t *testing.T) {
	base := mkdir(t, filepath.Join(t.TempDir(), "base"), 0o755)
	outside := mkdir(t, filepath.Join(base, "outside"), 0o755)
	kept := write(t, filepath.Join(outside, "kept"), "stays\n")
	d, err := Within(base, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	m := NewMark(KindBackup)
	sub, err := d.MkdirMarked("backup", m)
	if err != nil {
		t.Fatal(err)
	}
	deep, err := sub.Mkdir("data", 0o700, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(deep.Path(), "f"), "x")
	if err := os.Symlink(outside, filepath.Join(deep.Path(), "to-outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(kept, filepath.Join(sub.Path(), "kept-link")); err != nil {
		t.Fatal(err)
	}
	deep.Close()
	sub.Close()

	if err := Remove(filepath.Join(base, "backup"), NewMark(KindBackup)); !errors.Is(err, ErrNotMarked) {
		t.Errorf("remove with another mark: %v, want ErrNotMarked", err)
	}
	if err := Remove(filepath.Join(base, "backup"), m); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(base, "backup")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("still there: %v", err)
	}
	if read(t, kept) != "stays\n" {
		t.Error("a file a link pointed at changed")
	}
	if err := Remove(filepath.Join(base, "backup"), m); err != nil {
		t.Errorf("remove what is gone: %v, want nil", err)
	}

	// A link in place of the marked directory: neither it nor what it
	// points at is removed.
	m2 := NewMark(KindBackup)
	sub, err = d.MkdirMarked("real", m2)
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()
	if err := os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "swapped")); err != nil {
		t.Fatal(err)
	}
	if err := Remove(filepath.Join(base, "swapped"), m2); !errors.Is(err, ErrNotMarked) {
		t.Errorf("remove a link: %v, want ErrNotMarked", err)
	}
	if _, err := os.Stat(filepath.Join(base, "real", MarkFile)); err != nil {
		t.Errorf("what the link points at was touched: %v", err)
	}
	// Without the mark (another's directory at that path): left alone.
	mkdir(t, filepath.Join(base, "unmarked"), 0o755)
	if err := Remove(filepath.Join(base, "unmarked"), m2); !errors.Is(err, ErrNotMarked) {
		t.Errorf("remove an unmarked directory: %v, want ErrNotMarked", err)
	}

	// A file is oltplab's by the id in its name.
	tm := NewMark(KindTestFile)
	f, err := d.CreateFile("oltplab-fio-"+tm.ID+".dat", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := d.CreateFile("oltplab-fio-"+tm.ID+".dat", 0o600); !errors.Is(err, os.ErrExist) {
		t.Errorf("create it again: %v, want it exists", err)
	}
	other := write(t, filepath.Join(base, "oltplab-fio-other.dat"), "user's")
	if err := Remove(other, tm); !errors.Is(err, ErrNotMarked) {
		t.Errorf("remove a file without the id: %v, want ErrNotMarked", err)
	}
	if err := Remove(filepath.Join(base, "oltplab-fio-"+tm.ID+".dat"), tm); err != nil {
		t.Errorf("remove the test file: %v", err)
	}
}

// TestAppendFile: a log file is appended to only when it is a plain file
// of its own: never through a link, a hard link or into a pipe.
func TestAppendFile(t *testing.T) {
	base := mkdir(t, filepath.Join(t.TempDir(), "base"), 0o755)
	secret := write(t, filepath.Join(base, "secret"), "root's\n")
	d, err := Within(base, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, err := d.AppendFile("server.log", 0o640)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("line\n")
	f.Close()
	if err := os.Symlink(secret, filepath.Join(base, "link.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(base, "hard.log")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(base, "fifo.log"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, why := range map[string]string{"link.log": "symbolic link", "hard.log": "hard links", "fifo.log": "not a regular file"} {
		f, err := d.AppendFile(name, 0o640)
		if err == nil {
			f.Close()
		}
		refused(t, err, why)
	}
	if read(t, secret) != "root's\n" {
		t.Error("the secret changed")
	}
}
