package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestAgentCommand: oltplab agent serves this host's metrics on loopback
// until interrupted (exit 0), and monitor --agent records the database
// host's figures from it.
func TestAgentCommand(t *testing.T) {
	testenv.Require(t, testenv.Long)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- testMain(ctx, []string{"agent", "--listen", "127.0.0.1:0"}, nil, Stdio{In: strings.NewReader(""), Out: io.Discard, Err: pw})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("agent printed nothing: %v", err)
	}
	go io.Copy(io.Discard, pr)
	addr := regexp.MustCompile(`on (127\.0\.0\.1:\d+)`).FindStringSubmatch(line)
	if addr == nil {
		t.Fatalf("agent line %q names no address", line)
	}
	s, err := agent.Open(context.Background(), agent.Client{Addr: addr[1]}, 200*time.Millisecond, nil)
	if err != nil {
		t.Fatalf("open the agent: %v", err)
	}
	if _, err := s.Next(); err != nil {
		t.Errorf("no batch from the agent: %v", err)
	}
	s.Close()

	r := oltplab(t, storeEnv(t), "monitor", "--duration", "2s", "--interval", "500ms", "--agent", addr[1])
	if r.code != 0 || !strings.Contains(r.out, "database host (oltplab agent at "+addr[1]+")") {
		t.Errorf("monitor --agent: exit %d, no database host figures", r.code)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("agent after Ctrl-C: exit %d, want 0", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not stop")
	}
	if r := oltplab(t, storeEnv(t), "agent", "--listen", "nonsense"); r.code != exitUsage {
		t.Errorf("agent --listen nonsense: exit %d, want %d", r.code, exitUsage)
	}
}

// TestAgentThatDoesNotAnswer: --agent naming a closed port, or a server
// that answers the request and then says nothing (no hello), is refused
// before anything is measured: exit 3, one line, nothing stored. Waiting
// for the hello is bounded (10 s).
func TestAgentThatDoesNotAnswer(t *testing.T) {
	testenv.Require(t, testenv.Long)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = bufio.NewReader(c).ReadString('\n') // the request line
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n\r\n")
				_, _ = io.Copy(io.Discard, c) // then nothing, until oltplab hangs up
			}()
		}
	}()
	for _, addr := range []string{fmt.Sprintf("127.0.0.1:%d", closedPort(t)), silent.Addr().String()} {
		env := storeEnv(t)
		r := oltplab(t, env, "monitor", "--duration", "1s", "--interval", "500ms", "--agent", addr)
		if r.code != exitConnect || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, "no oltplab agent answers at "+addr) {
			t.Errorf("--agent %s: exit %d, stderr %q; want exit %d and one line saying no agent answers", addr, r.code, r.err, exitConnect)
		}
		if out := oltplab(t, env, "results", "list").out; !strings.Contains(out, "no results") {
			t.Errorf("--agent %s: something was stored: %s", addr, out)
		}
	}
}

// TestAgentTrustFlags: monitor --agent pins the agent's fingerprint and
// presents its token: a wrong fingerprint or a missing or wrong token is
// an authentication failure (exit 4) with nothing stored; the right ones
// measure the database host.
func TestAgentTrustFlags(t *testing.T) {
	testenv.Require(t, testenv.Long)
	const tok = "cli-agent-test-token-0123456789"
	id, err := agent.EphemeralIdentity()
	if err != nil {
		t.Fatal(err)
	}
	other, err := agent.EphemeralIdentity()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- (&agent.Server{Identity: &id, Token: tok}).Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()
	addr := ln.Addr().String()
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	if err := os.WriteFile(good, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(tok+"x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"wrong fingerprint", []string{"--agent-fingerprint", other.Fingerprint, "--agent-token-file", good}, exitAuth},
		{"no token", []string{"--agent-fingerprint", id.Fingerprint}, exitAuth},
		{"wrong token", []string{"--agent-fingerprint", id.Fingerprint, "--agent-token-file", bad}, exitAuth},
		{"pinned, with the token", []string{"--agent-fingerprint", id.Fingerprint, "--agent-token-file", good}, exitOK},
	} {
		env := storeEnv(t)
		r := oltplab(t, env, append([]string{"monitor", "--duration", "1s", "--interval", "500ms", "--agent", addr}, c.args...)...)
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d (%s)", c.name, r.code, c.code, r.err)
		}
		if strings.Contains(r.out+r.err, tok) {
			t.Errorf("%s: the token was printed", c.name)
		}
		if c.code != exitOK && !strings.Contains(oltplab(t, env, "results", "list").out, "no results") {
			t.Errorf("%s: something was stored", c.name)
		}
	}
}
