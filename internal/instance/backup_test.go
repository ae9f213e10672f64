package instance

import (
	"context"
	"net/url"
	"strings"
	"testing"

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
