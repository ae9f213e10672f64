package instance

import (
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/testenv"
)

// nobody is an unprivileged user's id: the one that plants links and
// owns files here.
func nobody(t testing.TB) int {
	if u, err := user.Lookup("nobody"); err == nil {
		if id, err := strconv.Atoi(u.Uid); err == nil {
			return id
		}
	}
	return 65534
}

// fileState is what a test checks did not change: the owner, group and
// mode of a path, its entries when a directory, its content when a file.
type fileState struct {
	uid, gid uint32
	mode     os.FileMode
	entries  []string
	content  string
}

func stateOf(t testing.TB, p string) fileState {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	s := fileState{uid: st.Uid, gid: st.Gid, mode: fi.Mode()}
	if fi.IsDir() {
		es, err := os.ReadDir(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			s.entries = append(s.entries, e.Name())
		}
	} else if fi.Mode().IsRegular() {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s.content = string(b)
	}
	return s
}

func (s fileState) equal(o fileState) bool {
	return s.uid == o.uid && s.gid == o.gid && s.mode == o.mode && slices.Equal(s.entries, o.entries) && s.content == o.content
}

// unchanged fails the test when any path's state differs from before.
func unchanged(t testing.TB, before map[string]fileState) {
	t.Helper()
	for p, want := range before {
		if got := stateOf(t, p); !got.equal(want) {
			t.Errorf("%s changed: %+v, was %+v", p, got, want)
		}
	}
}

// victimDir is a directory only root may use, holding a file only root
// may read: what an unprivileged user would like oltplab to hand over.
func victimDir(t testing.TB, parent string) string {
	t.Helper()
	v := filepath.Join(parent, "victim")
	if err := os.Mkdir(v, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v, "secret"), []byte("root's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return v
}

// worldDir is a directory everyone may write, with the sticky bit, as
// /tmp, /var/tmp and /dev/shm are.
func worldDir(t testing.TB, parent string) string {
	t.Helper()
	w := filepath.Join(parent, "world")
	if err := os.Mkdir(w, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(w, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	return w
}

// plantLink makes link point at target, owned by uid, as a user who may
// write link's directory would.
func plantLink(t testing.TB, target, link string, uid int) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// TestDataDirRefused: a managed instance refuses a data directory that is
// not its to take, says why in one line of kind directory, and changes
// nothing there: a link an unprivileged user planted in a world-writable
// directory (pointing at a directory of root's), a user's directory with
// files in it, another cluster's directory, / and other system
// directories. Check (the dry run) refuses them too.
func TestDataDirRefused(t *testing.T) {
	testenv.Require(t, testenv.Root)
	needEngine(t, Postgres)
	base := filepath.Join(testRoot, "refused")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := victimDir(t, base)
	world := worldDir(t, base)
	plantLink(t, victim, filepath.Join(world, "link"), nobody(t))
	userDir := filepath.Join(base, "user")
	if err := os.Mkdir(userDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userDir, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{userDir, filepath.Join(userDir, "notes.txt")} {
		if err := os.Chown(p, nobody(t), nobody(t)); err != nil {
			t.Fatal(err)
		}
	}
	// A cluster oltplab did not make (its own files, no mark of oltplab's).
	cluster := filepath.Join(fromTemplate(t, Postgres, "refused-cluster"), string(Postgres))

	before := map[string]fileState{}
	for _, p := range []string{victim, filepath.Join(victim, "secret"), userDir, filepath.Join(userDir, "notes.txt"), cluster, "/"} {
		before[p] = stateOf(t, p)
	}
	cases := []struct {
		name   string
		engine Engine
		dir    string
		start  bool // Start as well as Check (never for /: main would have chowned it)
		why    string
	}{
		{"link in a world-writable directory", Postgres, filepath.Join(world, "link"), true, "symbolic link"},
		{"below a link in a world-writable directory", Postgres, filepath.Join(world, "link", "data"), true, "symbolic link"},
		{"a user's directory with files", Postgres, userDir, true, "user " + strconv.Itoa(nobody(t))},
		{"another cluster's directory", Postgres, cluster, true, "oltplab did not create"},
		{"root", Postgres, "/", false, "system directory"},
		{"root, embedded", SQLite, "/", true, "system directory"},
		{"/etc", SQLite, "/etc", false, "system directory"},
		{"below /proc", SQLite, "/proc/oltplab", false, "system directory"},
		{"/tmp", SQLite, "/tmp", false, "system directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := Spec{Name: "refused", Engine: c.engine, DataDir: c.dir, Settings: nil}
			err := Check(spec)
			if KindOf(err) != KindDirectory || !strings.Contains(err.Error(), c.why) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Check: got %v (kind %s), want one line of kind directory saying %q", err, KindOf(err), c.why)
			}
			if c.start {
				inst, err := Start(context.Background(), spec, testLog(t))
				if err == nil {
					inst.Stop(context.Background())
					t.Fatalf("Start took %s", c.dir)
				}
				if KindOf(err) != KindDirectory || !strings.Contains(err.Error(), c.why) || strings.Contains(err.Error(), "\n") {
					t.Errorf("Start: got %v (kind %s), want one line of kind directory saying %q", err, KindOf(err), c.why)
				}
				t.Logf("refused: %v", err)
			}
			unchanged(t, before)
		})
	}
}

// TestServerLogLinkRefused: a link where the server log goes (planted in
// the instance's own directory) is never followed: the start is refused
// and the file it points at keeps its owner, mode and content.
func TestServerLogLinkRefused(t *testing.T) {
	testenv.Require(t, testenv.Root)
	needEngine(t, Postgres)
	dir := fromTemplate(t, Postgres, "log-link")
	secret := filepath.Join(testRoot, "log-link-secret")
	if err := os.WriteFile(secret, []byte("root:x:0:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, string(Postgres)+".log")
	if err := os.Remove(log); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	plantLink(t, secret, log, 0)
	before := map[string]fileState{secret: stateOf(t, secret)}
	inst, err := Start(context.Background(), Spec{Name: "log-link", Engine: Postgres, DataDir: dir, Settings: fastSettings}, testLog(t))
	if err == nil {
		inst.Stop(context.Background())
		t.Error("started with the server log linked to another file")
	} else if KindOf(err) != KindDirectory || !strings.Contains(err.Error(), log) {
		t.Errorf("got %v (kind %s), want a directory error naming %s", err, KindOf(err), log)
	}
	unchanged(t, before)
}

// TestDataDirReused: what oltplab made it takes again: a directory it
// created and marked is reused after a stop (the experiments restart
// instances on their directories), with whatever oltplab left in it; an
// empty directory is taken and marked.
func TestDataDirReused(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(testRoot, "reused")
	for i := range 2 {
		inst, err := Start(ctx, Spec{Name: "reused", Engine: SQLite, DataDir: dir}, nil)
		if err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
		if err := inst.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		// What an earlier oltplab left there (a test file of a killed
		// storage bench) does not make it foreign.
		if err := os.WriteFile(filepath.Join(dir, "oltplab-fio-left.dat"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	empty := filepath.Join(testRoot, "reused-empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	inst, err := Start(ctx, Spec{Name: "reused", Engine: SQLite, DataDir: empty}, nil)
	if err != nil {
		t.Fatalf("an empty directory: %v", err)
	}
	inst.Stop(ctx)
	if _, err := os.Lstat(filepath.Join(empty, claim.MarkFile)); err != nil {
		t.Errorf("the empty directory taken is not marked: %v", err)
	}
}

// TestBackupDirsRefused: as root, a backup is never written, nor restored,
// through a link an unprivileged user planted in a world-writable
// directory, nor into a user's directory; what it does write is a marked
// directory of its own that claim.Remove takes away whole.
func TestBackupDirsRefused(t *testing.T) {
	testenv.Require(t, testenv.Root)
	needEngine(t, Postgres)
	ctx := context.Background()
	src, err := Start(ctx, Spec{Name: "bk-src", Engine: Postgres, DataDir: fromTemplate(t, Postgres, "bk-src"), Settings: fastSettings}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Stop(ctx)
	b, err := NewBackupper(ctx, BackupSource{Instance: src, Target: src.Target()}, BackupOptions{Method: BaseBackup}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	base := filepath.Join(testRoot, "bk-refused")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := victimDir(t, base)
	empty := filepath.Join(base, "empty-victim")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	world := worldDir(t, base)
	plantLink(t, victim, filepath.Join(world, "link"), nobody(t))
	plantLink(t, empty, filepath.Join(world, "empty-link"), nobody(t))
	before := map[string]fileState{}
	for _, p := range []string{victim, filepath.Join(victim, "secret"), empty} {
		before[p] = stateOf(t, p)
	}

	if err := b.PrepareDirs(filepath.Join(world, "link")); KindOf(err) != KindDirectory || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("prepare the backups' directory through the link: got %v, want a directory error", err)
	}
	_, err = b.Backup(ctx, filepath.Join(world, "link", "b1"), claim.NewMark(claim.KindBackup))
	if KindOf(err) != KindDirectory || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("backup through the link: got %v, want a directory error", err)
	}

	m := claim.NewMark(claim.KindBackup)
	bk, err := b.Backup(ctx, filepath.Join(base, "backups", "b1"), m)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := readMarkOf(bk.Dir); err != nil || got.ID != m.ID || bk.Data != filepath.Join(bk.Dir, string(BaseBackup)) {
		t.Errorf("backup %+v: mark %+v, %v; want its own marked directory holding the base backup", bk, got, err)
	}
	for _, into := range []string{filepath.Join(world, "empty-link"), victim} {
		if inst, _, err := b.Restore(ctx, bk, into, claim.NewMark(claim.KindRestore)); err == nil {
			inst.Stop(ctx)
			t.Errorf("restored into %s", into)
		} else if KindOf(err) != KindDirectory {
			t.Errorf("restore into %s: got %v, want a directory error", into, err)
		}
	}
	unchanged(t, before)

	mr := claim.NewMark(claim.KindRestore)
	restored := filepath.Join(base, "restored")
	inst, _, err := b.Restore(ctx, bk, restored, mr)
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Stop(ctx); err != nil {
		t.Error(err)
	}
	for p, mk := range map[string]claim.Mark{bk.Dir: m, restored: mr} {
		if err := claim.Remove(p, mk); err != nil {
			t.Errorf("remove %s: %v", p, err)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
}

// readMarkOf reads the mark of the directory dir.
func readMarkOf(dir string) (claim.Mark, bool, error) {
	d, err := claim.Within(dir, nil, false)
	if err != nil {
		return claim.Mark{}, false, err
	}
	defer d.Close()
	return d.Mark()
}

// TestPrivateFilesNoFollow: the files oltplab writes into a directory the
// server's account owns (the run directory: pg_hba.conf, init.sql; the
// tools' home: password files) replace what is in their place: a link
// planted there is neither followed nor handed over, and the file it
// points at keeps its owner, mode and content.
func TestPrivateFilesNoFollow(t *testing.T) {
	testenv.Require(t, testenv.Root)
	needEngine(t, Postgres)
	acct, err := lookupAccount("postgres")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(testRoot, "private-run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, acct.UID, acct.GID); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(testRoot, "private-secret")
	if err := os.WriteFile(secret, []byte("root:x:0:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := map[string]fileState{secret: stateOf(t, secret)}
	plantLink(t, secret, filepath.Join(dir, "pg_hba.conf"), acct.UID)
	plantLink(t, secret, filepath.Join(dir, "source.pgpass"), acct.UID)
	i := &Instance{runDir: dir, acct: acct}
	r := &toolRunner{homeDir: dir, acct: acct}
	for name, write := range map[string]func(string, string) (string, error){"pg_hba.conf": i.writePrivate, "source.pgpass": r.writePrivate} {
		p, err := write(name, "written\n")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := stateOf(t, p)
		if !got.mode.IsRegular() || got.content != "written\n" || int(got.uid) != acct.UID || got.mode.Perm() != 0o600 {
			t.Errorf("%s: %+v, want a regular file of the account's, mode 0600, holding what was written", name, got)
		}
	}
	unchanged(t, before)
}
