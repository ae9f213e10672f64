package rawconn

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawConn is a socket whose reads and writes are raw system calls on the
// non-blocking descriptor, waited for by the runtime's network poller
// through syscall.RawConn, as net.Conn's own are.
//
// Why: a virtual user sends one call and waits for its answer, so the Go
// runtime goes idle and busy again on every transaction. Every read and
// write that net.Conn makes through the syscall package tells the
// scheduler it enters a system call, and the first one after the process
// went idle wakes the runtime's monitor thread (sysmon), which then polls
// on a short sleep before parking again: on a 2-core VM that thread alone
// took about a quarter of the driver's CPU per transaction (perf). A read
// or write on a non-blocking socket never blocks, so it does not need the
// scheduler told. Deadlines, Close and concurrent Read and Write behave
// as net.Conn's: the poller and the descriptor are the dialed conn's.
type rawConn struct {
	net.Conn // Close, addresses and deadlines
	rc       syscall.RawConn

	// The state of the Read and of the Write in progress, and the
	// functions the poller calls, made once (a closure made on every call
	// would be allocated on every call). There is at most one Read and one
	// Write at a time, as with every user of a session's connection.
	rd, wr          op
	readFn, writeFn func(fd uintptr) bool
}

// op is one direction's call in progress: its buffer, what was done and
// the error.
type op struct {
	p     []byte
	n     int
	errno syscall.Errno
}

// Wrap returns c with raw reads and writes when its descriptor can be
// reached (TCP, Unix socket), else c itself.
func Wrap(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	r := &rawConn{Conn: c, rc: rc}
	r.readFn, r.writeFn = r.read, r.write
	return r
}

func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rd = op{p: p}
	err := c.rc.Read(c.readFn)
	n, errno := c.rd.n, c.rd.errno
	c.rd.p = nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is called by the poller until it returns true.
func (c *rawConn) read(fd uintptr) bool {
	p := c.rd.p
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch e {
		case 0:
			c.rd.n = int(r)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait in the poller, then try again
		default:
			c.rd.errno = e
			return true
		}
	}
}

func (c *rawConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.wr = op{p: p}
	err := c.rc.Write(c.writeFn)
	n, errno := c.wr.n, c.wr.errno
	c.wr.p = nil
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// write is called by the poller until it returns true.
func (c *rawConn) write(fd uintptr) bool {
	p := c.wr.p
	for c.wr.n < len(p) {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[c.wr.n])), uintptr(len(p)-c.wr.n))
		switch e {
		case 0:
			c.wr.n += int(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false // the socket buffer is full: wait in the poller
		default:
			c.wr.errno = e
			return true
		}
	}
	return true
}

// opError wraps err as net.Conn's methods do, so that callers' checks
// (net.Error, Timeout, net.ErrClosed, os.ErrDeadlineExceeded) and messages
// see the same: "read tcp A->B: i/o timeout". syscall.RawConn's own
// errors are already a *net.OpError ("raw-read tcp ..."): its cause is
// taken out, so that the address is not said twice.
func (c *rawConn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
