package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// missingTable is a table no build creates.
const missingTable = "oltplab_conformance_missing"

func testErrors(t *testing.T, tg dialect.Target) {
	ctx := subtestContext(t)
	db := openDB(t, tg)

	// An existing database without the TPC-C tables: created, then
	// emptied (an SQLite file exists only once tables were created).
	if err := db.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	if err := db.DropSchema(ctx); err != nil {
		t.Fatalf("DropSchema: %v", err)
	}
	for _, name := range schemaTables() {
		if ok, err := db.HasTable(ctx, name); err != nil || ok {
			t.Errorf("HasTable(%q) after DropSchema = %v, %v: want false, nil", name, ok, err)
		}
	}
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()

	t.Run("classify", func(t *testing.T) {
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		var one int64
		driverCanceled := c.QueryRow(canceled, "SELECT 1").Scan(&one)
		expired, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel2()
		driverExpired := c.QueryRow(expired, "SELECT 1").Scan(&one)

		cases := []struct {
			name string
			err  error
			want dialect.ErrClass
		}{
			{"nil", nil, dialect.ClassNone},
			{"context.Canceled wrapped", fmt.Errorf("run payment: %w", context.Canceled), dialect.ClassCanceled},
			{"context.DeadlineExceeded wrapped", fmt.Errorf("run payment: %w", context.DeadlineExceeded), dialect.ClassCanceled},
			{"query on a canceled context", driverCanceled, dialect.ClassCanceled},
			{"query past its deadline", driverExpired, dialect.ClassCanceled},
			{"tpcc.ErrRollback wrapped", fmt.Errorf("new-order: %w", tpcc.ErrRollback), dialect.ClassRollback},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if tc.want != dialect.ClassNone && tc.err == nil {
					t.Fatalf("the operation succeeded, want an error of class %v", tc.want)
				}
				if got := db.Classify(tc.err); got != tc.want {
					t.Errorf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
				}
			})
		}
	})

	t.Run("missing table", func(t *testing.T) {
		var n int64
		err := c.QueryRow(ctx, "SELECT COUNT(*) FROM "+missingTable).Scan(&n)
		if err == nil {
			t.Fatalf("SELECT FROM %s succeeded with %d, want an error", missingTable, n)
		}
		if got := db.Classify(err); got == dialect.ClassNone {
			t.Errorf("Classify(%v) = %v, want a class", err, got)
		}
		t.Logf("missing table: class %v: %v", db.Classify(err), err)
		if _, err := tpcc.ReadMeta(ctx, c); err == nil {
			t.Errorf("ReadMeta without %s succeeded, want an error", tpcc.MetaTable)
		} else {
			t.Logf("ReadMeta without metadata: class %v: %v", db.Classify(err), err)
		}
		if ok, err := db.HasTable(ctx, missingTable); err != nil || ok {
			t.Errorf("HasTable(%q) = %v, %v: want false, nil", missingTable, ok, err)
		}
		// The connection is still usable after the failed statement.
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
			t.Errorf("SELECT 1 after the failed query = %d, %v: want 1, nil", n, err)
		}
	})

	t.Run("open", func(t *testing.T) {
		if tg.URL == nil || tg.URL.Host == "" {
			t.Skipf("%s targets a file, not a server: no password, no port", tg.Scheme)
		}
		right := tg.Password.Reveal()
		if right == "" {
			t.Fatal("the test server's target has no password: cannot check that errors hide it")
		}
		wrong := "wrong-" + randomHex(t)

		wrongPassword := tg
		wrongPassword.Password, wrongPassword.PasswordSet = dialect.Secret(wrong), true
		closedPort := tg
		u := *tg.URL
		u.Host = net.JoinHostPort("127.0.0.1", closedLoopbackPort(t))
		closedPort.URL = &u

		cases := []struct {
			name   string
			target dialect.Target
			want   dialect.ErrClass
		}{
			{"wrong password", wrongPassword, dialect.ClassAuth},
			{"closed loopback port", closedPort, dialect.ClassConnection},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				octx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				d, err := dialect.Open(octx, tc.target)
				if err == nil {
					_ = d.Close()
					t.Fatalf("Open succeeded, want an error of class %v", tc.want)
				}
				text := err.Error()
				leaked := false
				for _, secret := range []string{right, wrong} {
					if containsSecret(t, "Open error", text, secret) {
						leaked = true
					}
				}
				if got := dialect.ClassOf(err); got != tc.want {
					if leaked {
						t.Errorf("dialect.ClassOf(Open error) = %v, want %v", got, tc.want)
					} else {
						t.Errorf("dialect.ClassOf(%v) = %v, want %v", err, got, tc.want)
					}
				}
				var de *dialect.Error
				if !errors.As(err, &de) {
					t.Errorf("Open error is a %T, want a *dialect.Error", err)
				}
				if got := db.Classify(err); got != tc.want {
					t.Errorf("Classify(Open error) = %v, want %v", got, tc.want)
				}
			})
		}
	})
}

// closedLoopbackPort returns a loopback port nobody listens on (it was
// free a moment ago).
func closedLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free loopback port: %v", err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_ = l.Close()
	return port
}

func randomHex(t *testing.T) string {
	t.Helper()
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random: %v", err)
	}
	return hex.EncodeToString(b[:])
}
