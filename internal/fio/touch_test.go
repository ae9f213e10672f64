package fio

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/oltplab/oltplab/internal/testenv"
)

const nobody = 65534

// TestPrepareRefusesOthersDirectories: as root, the test file (which fio,
// running as root, opens by its path) is never created where another user
// could put something in its place: through a link planted in a
// world-writable directory, in a directory another user owns, or in one
// everyone may write without the sticky bit. Nothing changes there.
func TestPrepareRefusesOthersDirectories(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	testenv.Require(t, testenv.Root)
	profs, _ := LookupProfiles("oltp-4k-qd8")
	base := filepath.Join(t.TempDir(), "base")
	victim := filepath.Join(base, "victim")
	world := filepath.Join(base, "world")
	theirs := filepath.Join(base, "theirs")
	open := filepath.Join(base, "open")
	for _, d := range []string{victim, world, theirs, open} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(base, 0o755)
	os.Chmod(world, os.ModeSticky|0o777)
	os.Chmod(open, 0o777)
	os.Chown(theirs, nobody, nobody)
	link := filepath.Join(world, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	os.Lchown(link, nobody, nobody)
	for _, c := range []struct{ dir, why string }{
		{link, "symbolic link in " + world},
		{theirs, "belongs to user 65534"},
		{open, "may be written by other users"},
	} {
		b, err := Prepare(context.Background(), Options{Dir: c.dir, Profiles: profs, SizeBytes: 16 << 20})
		if err == nil {
			b.Close()
			t.Errorf("%s: prepared a test file there", c.dir)
			continue
		}
		if !strings.Contains(err.Error(), c.why) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line saying %q", c.dir, err, c.why)
		}
	}
	for _, d := range []string{victim, theirs, open} {
		if left := dirEntries(t, d); len(left) != 0 {
			t.Errorf("%s holds %v, want nothing created", d, left)
		}
	}
	fi, err := os.Stat(victim)
	if err != nil || fi.Mode().Perm() != 0o700 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("victim: %v, %v; want root's, mode 0700", fi.Mode(), err)
	}
}

// TestCloseRemovesOnlyItsFile: Close removes the test file it created and
// nothing that took its place.
func TestCloseRemovesOnlyItsFile(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	profs, _ := LookupProfiles("oltp-4k-qd8")
	dir := t.TempDir()
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte("stays\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Prepare(context.Background(), Options{Dir: dir, Profiles: profs, SizeBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	file := b.Plan().File
	if !strings.HasPrefix(filepath.Base(file), "oltplab-fio-") {
		t.Errorf("test file %s: want oltplab-fio-MARK.dat", file)
	}
	// Something else in its place: a link to another file.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, file); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err == nil {
		t.Error("Close removed what took the test file's place, want it left with an error")
	}
	if b, err := os.ReadFile(other); err != nil || string(b) != "stays\n" {
		t.Errorf("the file the link points at: %q, %v", b, err)
	}
	if _, err := os.Lstat(file); err != nil {
		t.Errorf("the link was removed: %v", err)
	}
}
