package dialect

import (
	"context"
	"errors"
	"io"

	"github.com/oltplab/oltplab/internal/tpch"
)

// TPCH is the optional ability of a Database to hold the TPC-H schema
// and answer its queries. The build creates the tables, loads chunks of
// generated rows through several TPCHLoaders at once, then adds the keys
// and refreshes the statistics; query streams run on TPCHSessions.
type TPCH interface {
	// TPCHFlavor writes the constructs of the query texts that products
	// write differently (tpch.Flavor, clause 2.2.3.3).
	TPCHFlavor() tpch.Flavor
	// CreateTPCHTables creates tpch.MetaTable (k, v: text of up to 64 and
	// 256 characters, k its key), then the eight tables of clause 1.4.1,
	// with only the keys the engine needs while loading (none for most).
	// It fails when one of them exists.
	CreateTPCHTables(ctx context.Context) error
	// DropTPCHSchema drops the eight tables, then tpch.MetaTable, those
	// that exist. The caller drops only a schema whose MetaTable marks it
	// as oltplab's.
	DropTPCHSchema(ctx context.Context) error
	// NewTPCHLoader opens a loader; Caps().MaxLoadWorkers bounds how
	// many run at once.
	NewTPCHLoader(ctx context.Context) (TPCHLoader, error)
	// CreateTPCHIndexes adds the primary keys (clause 1.4.2.2) and an
	// index on the columns of each foreign key (1.4.2.3) that no primary
	// key starts with, as clause 1.5.4 allows.
	CreateTPCHIndexes(ctx context.Context) error
	// AnalyzeTPCH refreshes the planner statistics of the eight tables.
	AnalyzeTPCH(ctx context.Context) error
	// NewTPCHSession opens one query stream's connection.
	NewTPCHSession(ctx context.Context) (TPCHSession, error)
}

// TPCHLoader takes generated rows of any of the eight tables, in any
// order, and makes them durable no later than Close. Rows are reused by
// the generator: Add encodes what it needs before returning.
type TPCHLoader interface {
	Add(ctx context.Context, r tpch.Row) error
	// Close sends what was added, waits for the server and closes the
	// loader's connections.
	Close(ctx context.Context) error
}

// TPCHSession is one connection that runs TPC-H statements.
type TPCHSession interface {
	// Exec runs a statement that returns no rows (Q15's view).
	Exec(ctx context.Context, sql string) error
	// Query runs a statement and returns all its rows, each value as
	// text: numbers as the server writes them, dates as YYYY-MM-DD,
	// NULL as "NULL". When ctx ends, the statement stops on the server
	// too (a query timeout, Ctrl-C) and the session remains usable.
	Query(ctx context.Context, sql string) ([][]string, error)
	// ExecTx runs stmts in one transaction (the refresh functions,
	// clause 2.5) and returns the rows each changed; on an error the
	// transaction is rolled back and nothing of it stays.
	ExecTx(ctx context.Context, stmts []string) ([]int64, error)
	Close() error
}

// Pipe carries buffers of text from a loader to a statement that reads
// its input as one stream (COPY FROM STDIN, LOAD DATA LOCAL INFILE) on
// another goroutine. Buffers go back to the loader for reuse once read.
// The statement's goroutine reads the Pipe and calls End when the
// statement is over, which unblocks a Send that waits for room.
type Pipe struct {
	bufs  chan []byte
	free  chan []byte
	ended chan struct{}
	done  <-chan struct{}
	cur   []byte
	off   int
}

// ErrPipeEnded is returned by Pipe.Send when the statement reading the
// pipe ended before its input did; the statement's own error says why.
var ErrPipeEnded = errors.New("the statement ended before its input")

// NewPipe returns a pipe that holds up to depth buffers in flight; ctx
// ends the statement's reads.
func NewPipe(ctx context.Context, depth int) *Pipe {
	return &Pipe{
		bufs:  make(chan []byte, depth),
		free:  make(chan []byte, depth+2),
		ended: make(chan struct{}),
		done:  ctx.Done(),
	}
}

// Buffer returns an empty buffer, recycled when one is free.
func (p *Pipe) Buffer(size int) []byte {
	select {
	case b := <-p.free:
		return b[:0]
	default:
		return make([]byte, 0, size)
	}
}

// Send hands b to the statement, waiting for room.
func (p *Pipe) Send(b []byte) error {
	select {
	case p.bufs <- b:
		return nil
	case <-p.ended:
		return ErrPipeEnded
	}
}

// CloseInput ends the statement's input after the buffers already sent.
func (p *Pipe) CloseInput() { close(p.bufs) }

// End marks the statement over; the statement's goroutine calls it once.
func (p *Pipe) End() { close(p.ended) }

// Read is called by the statement's goroutine.
func (p *Pipe) Read(b []byte) (int, error) {
	for p.off >= len(p.cur) {
		if p.cur != nil {
			select {
			case p.free <- p.cur:
			default:
			}
			p.cur = nil
		}
		select {
		case next, ok := <-p.bufs:
			if !ok {
				return 0, io.EOF
			}
			p.cur, p.off = next, 0
		case <-p.done:
			return 0, context.Canceled
		}
	}
	n := copy(b, p.cur[p.off:])
	p.off += n
	return n, nil
}
