package instance

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/dialect"
)

// TestBackupMissingTool: a method whose tool is not installed fails at
// once, with one line naming the Debian package to install.
func TestBackupMissingTool(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		engine Engine
		method BackupMethod
		want   []string
	}{
		{Postgres, BaseBackup, []string{"pg_basebackup", "postgresql-client-15"}},
		{Postgres, Dump, []string{"pg_dump", "postgresql-client-15"}},
		{MariaDB, "", []string{"mariadb-backup", "install the Debian package mariadb-backup"}},
	}
	for _, c := range cases {
		t.Run(string(c.engine)+"/"+string(c.method), func(t *testing.T) {
			tg := dialect.Target{Scheme: engines[c.engine].scheme(), URL: &url.URL{Scheme: engines[c.engine].scheme(), Host: "127.0.0.1:1", Path: "/x"}}
			b, err := NewBackupper(context.Background(), BackupSource{Engine: c.engine, Target: tg, BinDir: empty},
				BackupOptions{Method: c.method}, nil)
			if err == nil {
				b.Close()
				t.Fatal("got no error, want a missing tool")
			}
			if KindOf(err) != KindBinary || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v (kind %s), want one line of kind binary", err, KindOf(err))
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestBackupMethodNames(t *testing.T) {
	for in, want := range map[string]BackupMethod{"": "", "pg_basebackup": BaseBackup, "Dump": Dump,
		"mariabackup": MariaBackup, "online": Online} {
		var m BackupMethod
		if err := m.UnmarshalText([]byte(in)); err != nil || m != want {
			t.Errorf("%q: got %q, %v; want %q", in, m, err, want)
		}
	}
	var m BackupMethod
	if err := m.UnmarshalText([]byte("tar")); err == nil {
		t.Error("tar: got no error, want an unknown method")
	}
	tg := dialect.Target{Scheme: "postgres", URL: &url.URL{Scheme: "postgres", Host: "127.0.0.1:1"}}
	_, err := NewBackupper(context.Background(), BackupSource{Engine: Postgres, Target: tg}, BackupOptions{Method: MariaBackup}, nil)
	if KindOf(err) != KindSpec {
		t.Errorf("mariadb-backup on postgres: got %v, want a spec error", err)
	}
}

// TestCappedRestoreCopiesDirectly: the base backup of a managed
// PostgreSQL with a cgroup v1 write cap is restored by oltplab's own
// direct copy inside the cap's group (the cap holds for it), the
// restored server starts, and the backupper says the cap does not hold
// for what its tools write through the page cache.
func TestCappedRestoreCopiesDirectly(t *testing.T) {
	needEngine(t, Postgres)
	ctx := context.Background()
	hs, err := liveHierarchies()
	if err != nil {
		t.Skip(err)
	}
	if _, ok := findV1(hs, ctlBlkio); !ok {
		t.Skip("no cgroup v1 blkio")
	}
	dir := fromTemplate(t, Postgres, "pg-capped-src")
	src, err := Start(ctx, Spec{Name: "pg-capped-src", Engine: Postgres, DataDir: dir, Settings: fastSettings,
		IOLimit: IOLimit{WriteMBps: 200}}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Stop(ctx)
	b, err := NewBackupper(ctx, BackupSource{Instance: src, Target: src.Target()}, BackupOptions{Method: BaseBackup}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	w := b.Info().WriteCap
	if w == nil || w.HoldsBuffered || w.Method != "cgroup v1 blkio throttle" || w.Limit.WriteMBps != 200 {
		t.Fatalf("write cap: %+v", w)
	}
	bk, err := b.Backup(ctx, filepath.Join(testRoot, "pg-capped-backup"), claim.NewMark(claim.KindBackup))
	if err != nil {
		t.Fatal(err)
	}
	inst, rep, err := b.Restore(ctx, bk, filepath.Join(testRoot, "pg-capped-restored"), claim.NewMark(claim.KindRestore))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(ctx)
	if !rep.DirectCopy {
		t.Error("the restore copied through the page cache under a v1 write cap")
	}
	if rep.Bytes < 10<<20 {
		t.Errorf("restored %d bytes", rep.Bytes)
	}
	if note := w.Note(bk.Bytes, bk.Ended.Sub(bk.Started).Seconds(), false); !strings.Contains(note, "MB/s achieved") {
		t.Errorf("the backup's note: %q", note)
	}
}
