package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/instance"
)

const testToken = "0123456789abcdef-test-token"

// syncBuffer is a log sink the server's goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve runs srv on a loopback port until the test ends.
func serve(t *testing.T, srv *Server) (addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// TestAgentRefusesUntrusted: an agent with a token answers nothing to a
// request without it or with another, nor to plain HTTP; an agent
// without a token serves host metrics only; a client refuses an agent
// whose certificate is not the pinned one, and an agent off loopback
// without a fingerprint; the token never reaches the log.
func TestAgentRefusesUntrusted(t *testing.T) {
	id, err := EphemeralIdentity()
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	addr := serve(t, &Server{Identity: &id, Token: testToken, Log: slog.New(slog.NewTextHandler(&log, nil))})
	ctx := context.Background()

	good := Client{Addr: addr, Fingerprint: id.Fingerprint, Token: testToken}
	if _, err := good.List(ctx); err != nil {
		t.Fatalf("list with the token: %v", err)
	}
	if _, err := good.RTT(ctx, 3); err != nil {
		t.Errorf("ping with the token: %v", err)
	}
	for name, c := range map[string]Client{
		"no token":    {Addr: addr, Fingerprint: id.Fingerprint},
		"wrong token": {Addr: addr, Fingerprint: id.Fingerprint, Token: testToken + "x"},
	} {
		_, err := c.List(ctx)
		var re *RemoteError
		if !errors.As(err, &re) || !re.Unauthorized() {
			t.Errorf("%s: list: %v, want refused as unauthorized", name, err)
		}
		if _, err := Open(ctx, c, time.Second, nil); err == nil {
			t.Errorf("%s: the metrics stream was served", name)
		}
		if _, err := c.Tunnel(ctx, "x"); err == nil {
			t.Errorf("%s: a tunnel was opened", name)
		}
	}

	other, err := EphemeralIdentity()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Client{Addr: addr, Fingerprint: other.Fingerprint, Token: testToken}.List(ctx)
	if !errors.Is(err, ErrTrust) {
		t.Errorf("wrong fingerprint: %v, want %v", err, ErrTrust)
	}
	if _, err := (Client{Addr: "192.0.2.1:7300", Token: testToken}).List(ctx); !errors.Is(err, ErrTrust) {
		t.Errorf("an agent off loopback without a fingerprint: %v, want %v", err, ErrTrust)
	}
	if _, err := (Client{Addr: addr, Fingerprint: "sha256:12", Token: testToken}).List(ctx); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
		t.Errorf("a malformed fingerprint: %v", err)
	}

	// Plain HTTP to the TLS port is not served.
	resp, err := http.Get("http://" + addr + "/v1/instances")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP served: %s %s", resp.Status, b)
		}
	}

	if strings.Contains(log.String(), testToken) {
		t.Errorf("the token is in the agent's log")
	}
	if !strings.Contains(log.String(), "path=/v1/instances") || !strings.Contains(log.String(), "status=401") {
		t.Errorf("the refused requests are not logged:\n%s", log.String())
	}

	// Without a token: host metrics only.
	open := serve(t, &Server{})
	if _, err := Open(ctx, Client{Addr: open}, time.Second, nil); err != nil {
		t.Errorf("metrics of an agent without a token: %v", err)
	}
	var re *RemoteError
	if _, err := (Client{Addr: open, Token: testToken}).List(ctx); !errors.As(err, &re) || re.Status != http.StatusForbidden {
		t.Errorf("instances of an agent without a token: %v, want forbidden", err)
	}
}

// TestAgentListensOffLoopbackOnlyWithToken: off loopback, an agent
// without a token refuses to serve.
func TestAgentListensOffLoopbackOnlyWithToken(t *testing.T) {
	for _, c := range []struct {
		addr  string
		token bool
		ok    bool
	}{
		{"127.0.0.1:7300", false, true},
		{"[::1]:7300", false, true},
		{"localhost:7300", false, true},
		{":7300", false, false},
		{"0.0.0.0:7300", false, false},
		{"10.0.0.5:7300", false, false},
		{"10.0.0.5:7300", true, true},
		{":7300", true, true},
	} {
		err := CheckListen(c.addr, c.token)
		if (err == nil) != c.ok {
			t.Errorf("CheckListen(%q, token %v) = %v, want ok %v", c.addr, c.token, err, c.ok)
		}
	}
	ln, err := net.Listen("tcp", ":0") // every interface
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := (&Server{}).Serve(context.Background(), ln); !errors.Is(err, ErrListen) {
		t.Errorf("serve on every interface without a token: %v, want %v", err, ErrListen)
	}
}

// TestIdentityKept: the certificate is made once in the state directory,
// its key readable by its owner only, and read back the same.
func TestIdentityKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	a, err := LoadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint != b.Fingerprint || !strings.HasPrefix(a.Fingerprint, "sha256:") {
		t.Errorf("fingerprints %s then %s", a.Fingerprint, b.Fingerprint)
	}
	st, err := os.Stat(filepath.Join(dir, keyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v, want mode 0600", st.Mode(), err)
	}
	if err := os.Chmod(filepath.Join(dir, keyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadIdentity(dir); err == nil {
		t.Errorf("a key others may read was used")
	}
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(tok); err == nil || strings.Contains(err.Error(), "short") {
		t.Errorf("a short token: %v (must be refused without echoing it)", err)
	}
}

// TestAllowDirs: an agent creates no instance outside its --allow-dir
// roots (nor with none), nor through a symbolic link below them, and the
// refusal creates nothing.
func TestAllowDirs(t *testing.T) {
	id, err := EphemeralIdentity()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "db")
	addr := serve(t, &Server{Identity: &id, Token: testToken, AllowDirs: []string{filepath.Join(root, "allowed")}})
	c := Client{Addr: addr, Fingerprint: id.Fingerprint, Token: testToken}
	for _, dir := range []string{outside, filepath.Join(root, "allowed"), filepath.Join(root, "allowed", "..", "x"), "relative/db"} {
		_, err := c.Start(context.Background(), StartRequest{Spec: instance.Spec{Engine: instance.Postgres, DataDir: dir}})
		var re *RemoteError
		if !errors.As(err, &re) || re.Status != http.StatusForbidden {
			t.Errorf("data_dir %s: %v, want refused", dir, err)
		}
	}
	// A link below the root leads elsewhere: refused, even root's own.
	if err := os.MkdirAll(filepath.Join(root, "allowed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(root, "allowed", "link")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(root, "allowed", "link", "db"), filepath.Join(root, "allowed", "link")} {
		_, err := c.Start(context.Background(), StartRequest{Spec: instance.Spec{Engine: instance.Postgres, DataDir: dir}})
		var re *RemoteError
		if !errors.As(err, &re) || re.Status != http.StatusForbidden || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("data_dir %s through a link: %v, want refused", dir, err)
		}
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused data_dir was created: %v", err)
	}
	if _, err := c.Start(context.Background(), StartRequest{Spec: instance.Spec{Engine: instance.Postgres, DataDir: filepath.Join(root, "allowed", "db"), WALDir: outside}}); err == nil {
		t.Errorf("a wal_dir outside the roots was accepted")
	}
}
