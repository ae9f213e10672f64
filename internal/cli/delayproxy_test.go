package cli

import (
	"net"
	"sync"
	"testing"
	"time"
)

// delayProxy forwards TCP connections to another address, holding every
// chunk of bytes for delay in each direction: a network farther away
// than a veth pair, in user space (tc netem is not available here).
type delayProxy struct {
	ln    net.Listener
	to    string
	delay time.Duration
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// startDelayProxy listens on listen (HOST:0) and forwards to to; it
// stops when the test ends.
func startDelayProxy(t testing.TB, listen, to string, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	p := &delayProxy{ln: ln, to: to, delay: delay}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return ln.Addr().String()
}

func (p *delayProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", p.to, 10*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk delivered delay after it arrived.
func (p *delayProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now().Add(p.delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	for range q { // the reader ends when src closes
	}
}

func (p *delayProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
