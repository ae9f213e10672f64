package driver_test

import (
	"net"
	"sync"
	"testing"
)

// silentProxy forwards loopback TCP connections to a server until it is
// told to hold: from then on it keeps every connection open and reads
// what either side sends, but forwards nothing and answers nothing (new
// connections are accepted and left waiting), as a firewall that dropped
// its state or a hung middlebox would; resume forwards again. It closes
// everything when the test ends.
type silentProxy struct {
	ln       net.Listener
	upstream string

	mu     sync.Mutex
	cond   *sync.Cond
	held   bool
	closed bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newSilentProxy(t *testing.T, upstream string) *silentProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &silentProxy{ln: ln, upstream: upstream}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port.
func (p *silentProxy) Addr() string { return p.ln.Addr().String() }

// hold stops forwarding, without closing anything.
func (p *silentProxy) hold() { p.set(true) }

// resume forwards again.
func (p *silentProxy) resume() { p.set(false) }

func (p *silentProxy) set(held bool) {
	p.mu.Lock()
	p.held = held
	p.mu.Unlock()
	p.cond.Broadcast()
}

// wait blocks while the proxy holds; it reports false once it is closed.
func (p *silentProxy) wait() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.held && !p.closed {
		p.cond.Wait()
	}
	return !p.closed
}

func (p *silentProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *silentProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Go(func() {
			if !p.wait() {
				return
			}
			u, err := net.Dial("tcp", p.upstream)
			if err != nil || !p.track(u) {
				_ = c.Close()
				return
			}
			p.wg.Go(func() { p.pipe(u, c) })
			p.pipe(c, u)
		})
	}
}

// pipe copies from src to dst, holding what it read while the proxy
// holds; it closes both ends when either is done.
func (p *silentProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF or a closed end
		}
	}
}

func (p *silentProxy) close() {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	p.cond.Broadcast()
	_ = p.ln.Close()
	for _, c := range conns {
		_ = c.Close()
	}
	p.wg.Wait()
}
