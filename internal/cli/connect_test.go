package cli

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
)

// silentListener accepts connections and never answers them.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestConnectIsBounded: a port that accepts and never answers, or answers
// in the other database's protocol, fails as unreachable (exit 3) within
// the connect timeout instead of hanging; connect_timeout=1 keeps the
// test short (the default is dialect.ConnectTimeout).
func TestConnectIsBounded(t *testing.T) {
	pg, my := dbtest.Postgres(t), dbtest.MySQL(t)
	silent := silentListener(t)
	cases := []struct{ name, target string }{
		{"mysql on a silent port", fmt.Sprintf("mysql://bench:x@%s/db?connect_timeout=1", silent)},
		{"postgres on a silent port", fmt.Sprintf("postgres://bench:x@%s/db?connect_timeout=1", silent)},
		{"mysql on the postgres port", fmt.Sprintf("mysql://bench:x@%s/db?connect_timeout=1", pg.URL.Host)},
		{"postgres on the mysql port", fmt.Sprintf("postgres://bench:x@%s/db?connect_timeout=1", my.URL.Host)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := oltplab(t, storeEnv(t), "check", "--target", c.target)
			if r.code != exitConnect {
				t.Errorf("exit code: got %d, want %d", r.code, exitConnect)
			}
			if strings.Contains(r.err, "%!") || strings.Contains(r.err, "context") {
				t.Errorf("unclear message: %q", r.err)
			}
		})
	}
}

// TestPostgresErrorsShowTheirCause: the TLS attempt that precedes a plain
// connection (sslmode=prefer) is not what a failed login reports.
func TestPostgresErrorsShowTheirCause(t *testing.T) {
	tg := dbtest.Postgres(t)
	wrong := strings.Replace(dbtest.RawURL(tg), dbtest.Password(tg), "wrong-password", 1)
	wrong = strings.Replace(wrong, "sslmode=disable", "sslmode=prefer", 1)
	r := oltplab(t, storeEnv(t), "check", "--target", wrong)
	if r.code != exitAuth {
		t.Errorf("exit code: got %d, want %d", r.code, exitAuth)
	}
	if strings.Contains(r.err, "tls error") || !strings.Contains(r.err, "password authentication failed") {
		t.Errorf("message does not lead with the cause: %q", r.err)
	}
}
