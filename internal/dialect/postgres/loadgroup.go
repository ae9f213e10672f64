package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// NewLoaders opens n loaders that share one COPY per table (the
// dialect.LoaderGroup the build uses): each table is loaded by one
// connection, in one transaction that truncates the table first (it was
// created empty by CreateTables) and then copies with FREEZE. The rows
// arrive frozen and all-visible, so neither the index builds nor the first
// transactions of a run set hint bits on every page (writing the whole
// table once more), and the first vacuum has nothing to freeze. The
// loaders encode rows as before and hand full buffers to their table's
// COPY; the n generators keep the nine COPY streams busy. The load is
// committed, durably, by the last loader's Close; a Close whose context is
// done, or any failure, rolls every table back instead.
func (d *Database) NewLoaders(ctx context.Context, n int) (_ []dialect.Loader, err error) {
	scx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	g := &copyGroup{left: n, cancel: cancel, failed: make(chan struct{})}
	defer func() {
		if err != nil {
			g.abort(err)
			g.wait()
		}
	}()
	for _, t := range tpcc.Tables {
		c, err := d.connect(ctx)
		if err != nil {
			return nil, fmt.Errorf("open load connection for %s: %w", t, err)
		}
		s := &tableStream{t: t, conn: c, bufs: make(chan []byte, streamDepth), done: make(chan error, 1)}
		g.streams[t] = s
		// FREEZE needs the table truncated (or created) by the transaction
		// that copies: TRUNCATE of the empty table is free, and keeps
		// others out of it until the load commits.
		if _, err := c.Exec(ctx, "BEGIN; TRUNCATE "+t.String()); err != nil {
			s.done <- err
			return nil, fmt.Errorf("start the load of %s: %w", t, err)
		}
		go g.copy(scx, s)
	}
	ls := make([]dialect.Loader, n)
	for i := range ls {
		l := &groupLoader{g: g}
		for t := range l.buf {
			l.buf[t] = make([]byte, 0, flushBytes+64<<10)
		}
		ls[i] = l
	}
	return ls, nil
}

// streamDepth is how many full buffers a table's COPY may have waiting.
// Every warehouse starts with its 100,000 STOCK rows (about 30 MB of
// text), so the generators reach the STOCK stream together; 16 buffers
// (32 MB) let them run on into the other tables while it catches up,
// instead of moving in step from one stream to the next.
const streamDepth = 16

// copyGroup is the nine COPY streams that a group of loaders feeds.
type copyGroup struct {
	streams [numTables]*tableStream
	cancel  context.CancelFunc

	mu      sync.Mutex
	left    int           // loaders not closed yet
	failed  chan struct{} // closed by abort
	err     error         // why, once failed is closed
	aborted bool
	spare   [][]byte // buffers the COPY streams have sent
}

// tableStream is one table's COPY: bufs carries the encoded rows, closed
// when the last loader closes; done gets the COPY and commit's result.
type tableStream struct {
	t    tpcc.Table
	conn *pgx.Conn
	bufs chan []byte
	done chan error
}

// copy runs the COPY of s until its buffers are closed, then commits.
func (g *copyGroup) copy(ctx context.Context, s *tableStream) {
	sql := copySQL[s.t] + " WITH (FREEZE)"
	_, err := s.conn.PgConn().CopyFrom(ctx, &streamReader{g: g, s: s}, sql)
	if err == nil {
		// The transaction's one commit, synchronous: the load is durable
		// when the last Close returns.
		_, err = s.conn.Exec(ctx, "COMMIT")
	}
	if err != nil {
		err = fmt.Errorf("copy into %s: %w", s.t, err)
		g.abort(err)
	}
	s.done <- err
}

// streamReader reads a table's buffers as one stream for CopyFrom.
type streamReader struct {
	g   *copyGroup
	s   *tableStream
	cur []byte // the buffer being read
	off int
}

func (r *streamReader) Read(p []byte) (int, error) {
	for r.off == len(r.cur) {
		if r.cur != nil {
			r.g.putSpare(r.cur)
			r.cur, r.off = nil, 0
		}
		select {
		case b, ok := <-r.s.bufs:
			if !ok {
				return 0, io.EOF
			}
			r.cur = b
		case <-r.g.failed:
			return 0, r.g.failure()
		}
	}
	n := copy(p, r.cur[r.off:])
	r.off += n
	return n, nil
}

func (g *copyGroup) putSpare(b []byte) {
	g.mu.Lock()
	if len(g.spare) < 4*numTables {
		g.spare = append(g.spare, b[:0])
	}
	g.mu.Unlock()
}

func (g *copyGroup) getSpare() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.spare); n > 0 {
		b := g.spare[n-1]
		g.spare = g.spare[:n-1]
		return b
	}
	return make([]byte, 0, flushBytes+64<<10)
}

// abort stops every stream: their transactions roll back when their
// connections close. The first reason is kept.
func (g *copyGroup) abort(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.aborted {
		return
	}
	g.aborted, g.err = true, err
	close(g.failed)
	g.cancel()
}

// failure is why the group failed.
func (g *copyGroup) failure() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// send hands b to table t's stream.
func (g *copyGroup) send(ctx context.Context, t tpcc.Table, b []byte) error {
	select {
	case g.streams[t].bufs <- b:
		return nil
	case <-g.failed:
		return g.failure()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait waits for every started stream and closes its connection; it
// returns the first failure.
func (g *copyGroup) wait() error {
	var errs []error
	for _, s := range g.streams {
		if s == nil {
			continue
		}
		if err := <-s.done; err != nil {
			errs = append(errs, err)
		}
		_ = s.conn.Close(context.Background())
	}
	g.cancel()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	return errors.Join(errs...)
}

// groupLoader is one generator's side of a copyGroup: it encodes rows into
// a buffer per table and hands full buffers to the table's stream.
type groupLoader struct {
	g      *copyGroup
	buf    [numTables][]byte
	err    error
	closed bool
}

func (l *groupLoader) Add(ctx context.Context, r tpcc.Row) error {
	if l.err != nil {
		return l.err
	}
	t := r.Table()
	l.buf[t] = r.AppendTSV(l.buf[t])
	if len(l.buf[t]) >= flushBytes {
		if l.err = l.g.send(ctx, t, l.buf[t]); l.err != nil {
			return l.err
		}
		l.buf[t] = l.g.getSpare()
	}
	return nil
}

// Close hands over what is buffered. The last loader of the group to
// close ends the COPY streams and commits them (or, when any loader's
// context is done or anything failed, rolls them back) and returns the
// group's outcome; the others return their own.
func (l *groupLoader) Close(ctx context.Context) error {
	if l.closed {
		return l.err
	}
	l.closed = true
	err := l.err
	if err == nil {
		for t, b := range l.buf {
			if len(b) > 0 {
				if err = l.g.send(ctx, tpcc.Table(t), b); err != nil {
					break
				}
			}
			l.buf[t] = nil
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		l.g.abort(err)
	}
	l.g.mu.Lock()
	l.g.left--
	last := l.g.left == 0
	l.g.mu.Unlock()
	if last {
		for _, s := range l.g.streams {
			close(s.bufs)
		}
		if werr := l.g.wait(); werr != nil {
			err = werr
		}
	}
	if err != nil {
		return &dialect.Error{Class: classify(err), Op: "load", Err: err}
	}
	return nil
}
