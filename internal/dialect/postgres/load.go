package postgres

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// flushBytes is the size at which a table's buffer is sent with COPY.
const flushBytes = 2 << 20

// loadSettings apply to load sessions only. synchronous_commit = off lets
// each COPY commit without waiting for its WAL flush; Close makes the whole
// load durable with one synchronous commit at the end (the Loader contract:
// durable no later than Close).
const loadSettings = "SET synchronous_commit = off"

// numTables is len(tpcc.Tables), as a constant for array sizes.
const numTables = 9

// copySQL is the COPY statement of each table, columns in tpcc order.
var copySQL = func() (s [numTables]string) {
	for _, t := range tpcc.Tables {
		s[t] = "COPY " + t.String() + " (" + strings.Join(t.Columns(), ", ") + ") FROM STDIN"
	}
	return s
}()

// loader buffers rows per table as COPY text (tpcc.Row.AppendTSV) and
// sends a buffer with COPY FROM STDIN when it passes flushBytes. One COPY
// runs in the background while the caller generates the next rows, so
// generation and the server's parsing overlap.
type loader struct {
	conn *pgx.Conn
	buf  [numTables][]byte

	// inflight is the buffer being copied, done receives its result.
	inflight []byte
	done     chan error
	spare    []byte
	err      error // first failure; later calls return it
}

// NewLoader opens one load connection.
func (d *Database) NewLoader(ctx context.Context) (dialect.Loader, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("open load connection: %w", err)
	}
	if _, err := c.Exec(ctx, loadSettings); err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("set load session settings: %w", err)
	}
	l := &loader{conn: c, done: make(chan error, 1)}
	for i := range l.buf {
		l.buf[i] = make([]byte, 0, flushBytes+64<<10)
	}
	return l, nil
}

// Add encodes r into its table's buffer, sending the buffer when full.
func (l *loader) Add(ctx context.Context, r tpcc.Row) error {
	if l.err != nil {
		return l.err
	}
	t := r.Table()
	l.buf[t] = r.AppendTSV(l.buf[t])
	if len(l.buf[t]) >= flushBytes {
		return l.flush(ctx, t)
	}
	return nil
}

// flush hands table t's buffer to a background COPY, after waiting for the
// previous one (the connection runs one statement at a time).
func (l *loader) flush(ctx context.Context, t tpcc.Table) error {
	if err := l.wait(); err != nil {
		return err
	}
	data := l.buf[t]
	if l.spare == nil {
		l.spare = make([]byte, 0, cap(data))
	}
	l.buf[t], l.spare = l.spare, nil
	l.inflight = data
	go func() {
		_, err := l.conn.PgConn().CopyFrom(ctx, bytes.NewReader(data), copySQL[t])
		if err != nil {
			err = fmt.Errorf("copy %d bytes into %s: %w", len(data), t, err)
		}
		l.done <- err
	}()
	return nil
}

// wait waits for the COPY in flight, if any, and keeps its buffer as the spare.
func (l *loader) wait() error {
	if l.inflight == nil {
		return l.err
	}
	err := <-l.done
	l.spare, l.inflight = l.inflight[:0], nil
	if err != nil && l.err == nil {
		l.err = err
	}
	return l.err
}

// Close sends what is buffered, makes the load durable and closes the
// connection.
func (l *loader) Close(ctx context.Context) error {
	err := l.err
	if err == nil {
		for _, t := range tpcc.Tables {
			if len(l.buf[t]) > 0 {
				if err = l.flush(ctx, t); err != nil {
					break
				}
			}
		}
	}
	if werr := l.wait(); err == nil {
		err = werr
	}
	if err == nil {
		// One synchronous commit flushes the WAL of every COPY before it.
		if err = syncCommits(ctx, l.conn); err != nil {
			err = fmt.Errorf("make the load durable: %w", err)
		}
	}
	if cerr := l.conn.Close(context.WithoutCancel(ctx)); err == nil && cerr != nil {
		err = fmt.Errorf("close load connection: %w", cerr)
	}
	if err != nil {
		return &dialect.Error{Class: classify(err), Op: "load", Err: err}
	}
	return nil
}
