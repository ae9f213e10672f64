package postgres

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
)

func TestOpenErrors(t *testing.T) {
	tg := dbtest.Postgres(t)
	password := dbtest.Password(tg)
	if password == "" {
		t.Fatal("the test server has no password: cannot check that errors hide it")
	}

	wrongPassword := tg
	wrongPassword.Password = dialect.Secret(password + "x")

	missingDB := tg
	u := *tg.URL
	u.Path = "/no_such_database_here"
	missingDB.URL = &u

	closedPort := tg
	u2 := *tg.URL
	u2.Host = "127.0.0.1:" + closedLoopbackPort(t)
	closedPort.URL = &u2

	cases := []struct {
		name   string
		target dialect.Target
		want   dialect.ErrClass
	}{
		{"wrong password", wrongPassword, dialect.ClassAuth},
		{"missing database", missingDB, dialect.ClassUndefinedObject},
		{"closed port", closedPort, dialect.ClassConnection},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Open(context.Background(), c.target)
			if err == nil {
				_ = d.Close()
				t.Fatalf("Open succeeded, want a %v error", c.want)
			}
			var de *dialect.Error
			if !errors.As(err, &de) {
				t.Fatalf("Open error %T is not a *dialect.Error", err)
			}
			if got := dialect.ClassOf(err); got != c.want {
				t.Errorf("dialect.ClassOf = %v, want %v (error: %v)", got, c.want, err)
			}
			if got := classify(err); got != c.want {
				t.Errorf("Classify = %v, want %v", got, c.want)
			}
			for _, secret := range []string{password, c.target.Password.Reveal()} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error text contains the password: %q", err.Error())
				}
			}
			if !strings.HasPrefix(err.Error(), "connect to ") {
				t.Errorf("error %q does not say what was being done", err.Error())
			}
		})
	}
}

func TestOpenWorks(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	v, err := d.Version(ctx)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	if !strings.Contains(v, "PostgreSQL") {
		t.Errorf("Version = %q, want it to contain version()", v)
	}
	s, err := d.Settings(ctx)
	if err != nil {
		t.Fatalf("Settings: %v", err)
	}
	for _, k := range []string{"shared_buffers", "synchronous_commit", "fsync", "max_connections"} {
		if s[k] == "" {
			t.Errorf("Settings[%q] is empty; got %v", k, s)
		}
	}
	for k := range s {
		if !contains(recordedSettings, k) {
			t.Errorf("Settings has unexpected key %q", k)
		}
	}
	if got, want := d.Name(), "postgres"; got != want {
		t.Errorf("Name = %q, want %q", got, want)
	}
	if got := d.Caps(); !got.Procedures || got.MoneyTolerance != 0 || got.MaxLoadWorkers != 0 {
		t.Errorf("Caps = %+v, want procedures, exact money, unlimited loaders", got)
	}
	// Sessions say who they are in pg_stat_activity.
	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var app string
	if err := c.QueryRow(ctx, "SELECT current_setting('application_name')").Scan(&app); err != nil || app != "oltplab" {
		t.Errorf("application_name = %q (%v), want oltplab", app, err)
	}
	c.Close()
	opened, err := dialect.Open(ctx, dbtest.Postgres(t))
	if err != nil {
		t.Fatalf("dialect.Open through the registry: %v", err)
	}
	_ = opened.Close()
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// closedLoopbackPort returns a loopback port nobody listens on (it was
// free a moment ago).
func closedLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_ = l.Close()
	return port
}

// TestSessionConnectErrorNamesTheCause: with sslmode=prefer (pgx tries
// TLS, then plain text) a session that cannot connect says why (the
// database is gone), not that the server refused TLS first.
func TestSessionConnectErrorNamesTheCause(t *testing.T) {
	tg := dbtest.Postgres(t)
	u := *tg.URL
	q := u.Query()
	q.Set("sslmode", "prefer")
	u.RawQuery = q.Encode()
	tg.URL = &u
	ctx := context.Background()
	d, err := Open(ctx, tg)
	if err != nil {
		t.Fatalf("Open with sslmode=prefer: %v", err)
	}
	defer d.Close()
	admin, err := pgx.Connect(ctx, os.Getenv("OLTPLAB_TEST_POSTGRES"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE "+strings.TrimPrefix(u.Path, "/")+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	_, err = d.NewSession(ctx, dialect.StyleClientSQL)
	if err == nil || strings.Contains(err.Error(), "TLS") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("session on a dropped database: got %v, want the cause (does not exist) without the TLS attempt", err)
	}
}
