package mysql

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
)

func TestOpenErrors(t *testing.T) {
	good := dbtest.MySQL(t)
	password := dbtest.Password(good)
	if password == "" {
		t.Fatal("the private server's target has no password: the redaction test would prove nothing")
	}

	// A loopback port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	freePort := l.Addr().(*net.TCPAddr).Port
	l.Close()

	withURL := func(f func(u *url.URL)) dialect.Target {
		tg := good
		u := *good.URL
		f(&u)
		tg.URL = &u
		return tg
	}
	wrongPassword := good
	wrongPassword.Password = dialect.Secret(password + "-wrong")

	tests := []struct {
		name   string
		target dialect.Target
		want   dialect.ErrClass
	}{
		{"wrong password", wrongPassword, dialect.ClassAuth},
		{"unknown user", withURL(func(u *url.URL) { u.User = url.User("no_such_user") }), dialect.ClassAuth},
		{"unknown database", withURL(func(u *url.URL) { u.Path = "/no_such_database" }), dialect.ClassUndefinedObject},
		{"connection refused", withURL(func(u *url.URL) { u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort)) }), dialect.ClassConnection},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			db, err := Open(ctx, tc.target)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded, want an error")
			}
			t.Logf("error: %v", err)
			if got := dialect.ClassOf(err); got != tc.want {
				t.Errorf("class: got %v, want %v (error: %v)", got, tc.want, err)
			}
			var de *dialect.Error
			if !errors.As(err, &de) {
				t.Errorf("error %T is not a *dialect.Error", err)
			}
			for _, secret := range []string{password, tc.target.Password.Reveal()} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error text holds a password: %q", err.Error())
				}
			}
		})
	}
}

func TestOpenPasswordFromEnvironment(t *testing.T) {
	target := dbtest.MySQL(t)
	password := dbtest.Password(target)
	target.Password, target.PasswordSet = "", false
	// From the environment the caller passes in, not the process's.
	target.Env.Getenv = func(k string) string {
		if k == "MYSQL_PWD" {
			return password
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := Open(ctx, target)
	if err != nil {
		t.Fatalf("Open with MYSQL_PWD: %v", err)
	}
	db.Close()
}

func TestVersionAndSettings(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	v, err := d.Version(ctx)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	if !strings.Contains(v, ".") {
		t.Errorf("Version: got %q, want a version number", v)
	}
	s, err := d.Settings(ctx)
	if err != nil {
		t.Fatalf("Settings: %v", err)
	}
	for _, k := range []string{"innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "innodb_flush_method",
		"innodb_log_file_size", "innodb_doublewrite", "sync_binlog", "transaction_isolation", "max_connections", "datadir"} {
		if s[k] == "" {
			t.Errorf("Settings[%q]: got nothing, want a value (all: %v)", k, s)
		}
	}
	if got, want := s["max_connections"], "300"; got != want {
		t.Errorf("Settings[max_connections]: got %q, want %q (scripts/testservers.sh)", got, want)
	}
}
