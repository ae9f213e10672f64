package sqlserver

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

func parseTarget(t *testing.T, raw, passwordFile string) dialect.Target {
	t.Helper()
	tg, err := dialect.ParseTarget(raw, passwordFile)
	if err != nil {
		t.Fatalf("ParseTarget(%q): %v", raw, err)
	}
	return tg
}

func TestConfig(t *testing.T) {
	const pw = "s3cret-Passw0rd"
	env := func(vars map[string]string) dialect.Env {
		return dialect.Env{Getenv: func(k string) string { return vars[k] }}
	}
	tests := []struct {
		name                 string
		raw                  string
		env                  dialect.Env
		wantHost             string
		wantPort             uint64
		wantDB, wantUser     string
		wantPassword         string
		wantTimeout          time.Duration
		wantEncryptDisabled  bool
		wantTrustCertificate bool
	}{
		// Without encrypt only the login is encrypted, and the server's
		// certificate is not checked (go-mssqldb's default).
		{name: "defaults", raw: "sqlserver://sa@db.example", wantHost: "db.example", wantPort: 1433,
			wantDB: "tpcc", wantUser: "sa", wantTimeout: dialect.ConnectTimeout, wantTrustCertificate: true},
		{name: "all given", raw: "sqlserver://bench:" + pw + "@127.0.0.1:14330?database=tpcc2&encrypt=disable&connect_timeout=3",
			wantHost: "127.0.0.1", wantPort: 14330, wantDB: "tpcc2", wantUser: "bench", wantPassword: pw,
			wantTimeout: 3 * time.Second, wantEncryptDisabled: true},
		{name: "parameters without case", raw: "sqlserver://bench@h?Database=x&TrustServerCertificate=true&encrypt=true",
			wantHost: "h", wantPort: 1433, wantDB: "x", wantUser: "bench", wantTimeout: dialect.ConnectTimeout, wantTrustCertificate: true},
		{name: "password and user from the environment, as sqlcmd takes them", raw: "sqlserver://h:1444",
			env:      env(map[string]string{"SQLCMDPASSWORD": pw, "SQLCMDUSER": "envuser"}),
			wantHost: "h", wantPort: 1444, wantDB: "tpcc", wantUser: "envuser", wantPassword: pw, wantTimeout: dialect.ConnectTimeout,
			wantTrustCertificate: true},
		{name: "no host", raw: "sqlserver://sa@:1500?encrypt=true", wantHost: "127.0.0.1", wantPort: 1500, wantDB: "tpcc", wantUser: "sa",
			wantTimeout: dialect.ConnectTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := parseTarget(t, tc.raw, "")
			tg.Env = tc.env
			cfg, timeout, err := config(tg)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			if cfg.Host != tc.wantHost || cfg.Port != tc.wantPort || cfg.Database != tc.wantDB || cfg.User != tc.wantUser ||
				cfg.Password != tc.wantPassword || timeout != tc.wantTimeout {
				t.Errorf("config = host %q port %d database %q user %q password set %v timeout %v, want %q %d %q %q %v %v",
					cfg.Host, cfg.Port, cfg.Database, cfg.User, cfg.Password != "", timeout,
					tc.wantHost, tc.wantPort, tc.wantDB, tc.wantUser, tc.wantPassword != "", tc.wantTimeout)
			}
			if got := cfg.Encryption == 3; got != tc.wantEncryptDisabled { // msdsn.EncryptionDisabled
				t.Errorf("encryption %v, want disabled %v", cfg.Encryption, tc.wantEncryptDisabled)
			}
			if cfg.TrustServerCertificate != tc.wantTrustCertificate {
				t.Errorf("TrustServerCertificate = %v, want %v", cfg.TrustServerCertificate, tc.wantTrustCertificate)
			}
			if s := tg.String(); strings.Contains(s, pw) {
				t.Errorf("target %q shows the password", s)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	const pw = "s3cret-Passw0rd"
	tests := []struct{ name, raw string }{
		{"unknown parameter", "sqlserver://sa:" + pw + "@h?datbase=x"},
		{"no user", "sqlserver://h:1433?database=x"},
		{"bad encrypt", "sqlserver://sa:" + pw + "@h?encrypt=maybe"},
		{"bad trustServerCertificate", "sqlserver://sa@h?trustServerCertificate=perhaps"},
		{"bad timeout", "sqlserver://sa@h?connect_timeout=soon"},
		{"parameter twice", "sqlserver://sa@h?database=a&database=b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := config(parseTarget(t, tc.raw, ""))
			if err == nil {
				t.Fatal("config succeeded, want an error")
			}
			if !errors.Is(err, dialect.ErrBadTarget) {
				t.Errorf("error %v does not wrap dialect.ErrBadTarget", err)
			}
			if strings.Contains(err.Error(), pw) {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	good := dbtest.SQLServer(t)
	password := dbtest.Password(good)
	if password == "" {
		t.Fatal("the private server's target has no password: the redaction test would prove nothing")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	freePort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// A port that accepts and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()

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
		{"unknown database", withURL(func(u *url.URL) {
			q := u.Query()
			q.Set("database", "no_such_database")
			u.RawQuery = q.Encode()
		}), dialect.ClassUndefinedObject},
		{"connection refused", withURL(func(u *url.URL) { u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort)) }), dialect.ClassConnection},
		{"a port that never answers", withURL(func(u *url.URL) {
			u.Host = silent.Addr().String()
			q := u.Query()
			q.Set("connect_timeout", "1")
			u.RawQuery = q.Encode()
		}), dialect.ClassConnection},
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
			if tc.want == dialect.ClassUndefinedObject && !errors.Is(err, dialect.ErrNoDatabase) {
				t.Errorf("error %v does not wrap dialect.ErrNoDatabase", err)
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
	target := dbtest.SQLServer(t)
	password := dbtest.Password(target)
	target.Password, target.PasswordSet = "", false
	// From the environment the caller passes in, not the process's.
	target.Env.Getenv = func(k string) string {
		if k == "SQLCMDPASSWORD" {
			return password
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := Open(ctx, target)
	if err != nil {
		t.Fatalf("Open with SQLCMDPASSWORD: %v", err)
	}
	db.Close()
}
