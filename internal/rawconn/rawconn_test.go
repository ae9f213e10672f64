package rawconn_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/rawconn"
)

// pair returns the two ends of a loopback TCP connection, the client's
// wrapped, and closes both when the test ends.
func pair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	client = rawconn.Wrap(c)
	t.Cleanup(func() {
		client.Close()
		server.Close()
	})
	return client, server
}

// TestWrap: a TCP connection is wrapped on Linux (else returned as is);
// a conn without a descriptor is returned as is.
func TestWrap(t *testing.T) {
	client, _ := pair(t)
	_, isTCP := client.(*net.TCPConn)
	if wrapped := !isTCP; wrapped != (runtime.GOOS == "linux") {
		t.Errorf("Wrap of a TCP conn on %s: got %T", runtime.GOOS, client)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := rawconn.Wrap(a); got != a {
		t.Errorf("Wrap of a net.Pipe end: got %T, want it unchanged", got)
	}
}

// TestLargeWrites: writes larger than the socket buffers block in the
// poller and go on, in both directions, and every byte arrives in order.
func TestLargeWrites(t *testing.T) {
	client, server := pair(t)
	const size = 16 << 20 // far beyond the socket buffers
	out := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	for i := range out {
		out[i] ^= byte(i / 4096)
	}
	cases := []struct {
		name   string
		writer net.Conn
		reader net.Conn
	}{{"raw writes", client, server}, {"raw reads", server, client}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			werr := make(chan error, 1)
			go func() {
				n, err := c.writer.Write(out)
				if err == nil && n != len(out) {
					err = io.ErrShortWrite
				}
				werr <- err
			}()
			in := make([]byte, len(out))
			if _, err := io.ReadFull(c.reader, in); err != nil {
				t.Fatalf("read: %v", err)
			}
			if err := <-werr; err != nil {
				t.Fatalf("write: %v", err)
			}
			if !bytes.Equal(in, out) {
				t.Errorf("the %d bytes read differ from those written", size)
			}
		})
	}
}

// TestDeadline: an expired deadline ends a read that waits, and a read or
// write that starts after it, with the error net.Conn gives: a timeout,
// os.ErrDeadlineExceeded, and one "read tcp" in its text.
func TestDeadline(t *testing.T) {
	client, server := pair(t)
	done := make(chan error, 1)
	go func() {
		_, err := client.Read(make([]byte, 10))
		done <- err
	}()
	// Expire it from another goroutine, as Interrupt does.
	time.Sleep(10 * time.Millisecond)
	if err := client.SetDeadline(time.Now()); err != nil {
		t.Fatalf("SetDeadline: %v", err)
	}
	checkTimeout(t, "waiting read", "read", <-done)
	_, err := client.Read(make([]byte, 10))
	checkTimeout(t, "read after the deadline", "read", err)
	_, err = client.Write([]byte("x"))
	checkTimeout(t, "write after the deadline", "write", err)

	// A later deadline makes the conn usable again.
	if err := client.SetDeadline(time.Time{}); err != nil {
		t.Fatalf("SetDeadline: %v", err)
	}
	if _, err := server.Write([]byte("ok")); err != nil {
		t.Fatalf("server write: %v", err)
	}
	b := make([]byte, 2)
	if _, err := io.ReadFull(client, b); err != nil || string(b) != "ok" {
		t.Errorf("read after clearing the deadline: %q, %v", b, err)
	}
}

func checkTimeout(t *testing.T, what, op string, err error) {
	t.Helper()
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("%s: got %v (%T), want a net.Error timeout wrapping os.ErrDeadlineExceeded", what, err, err)
		return
	}
	if text := err.Error(); strings.Count(text, "tcp") != 1 || !strings.HasPrefix(text, op+" tcp ") || strings.Contains(text, "raw-") {
		t.Errorf("%s: error text %q, want one %q and the address once", what, text, op+" tcp")
	}
}

// TestEOF: when the peer closes, a read returns io.EOF (not wrapped), as
// net.Conn's does.
func TestEOF(t *testing.T) {
	client, server := pair(t)
	if _, err := server.Write([]byte("last")); err != nil {
		t.Fatalf("write: %v", err)
	}
	server.Close()
	b, err := io.ReadAll(client)
	if err != nil || string(b) != "last" {
		t.Errorf("ReadAll after the peer closed: %q, %v; want \"last\", nil", b, err)
	}
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("Read at EOF: %d, %v; want 0, io.EOF", n, err)
	}
	if n, err := client.Read(nil); n != 0 || err != nil {
		t.Errorf("Read of 0 bytes: %d, %v; want 0, nil", n, err)
	}
}

// TestClose: Close ends a read that waits, and later reads and writes
// fail with net.ErrClosed.
func TestClose(t *testing.T) {
	client, _ := pair(t)
	done := make(chan error, 1)
	go func() {
		_, err := client.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if err := client.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, c := range []struct {
		what string
		err  error
	}{
		{"waiting read", <-done},
		{"read after Close", func() error { _, err := client.Read(make([]byte, 1)); return err }()},
		{"write after Close", func() error { _, err := client.Write([]byte("x")); return err }()},
	} {
		if !errors.Is(c.err, net.ErrClosed) {
			t.Errorf("%s: got %v, want net.ErrClosed", c.what, c.err)
		}
	}
}
