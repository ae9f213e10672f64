package postgres

import (
	"context"
	"strconv"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/placeholder"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// clientSQLOptions are PostgreSQL's variants of the client-side statements.
// A derived table's parameters need a type: PostgreSQL would take them
// for text. Stock-Level counts through an array of the distinct items,
// whose plan, unlike the join's, does not depend on D_NEXT_O_ID.
var clientSQLOptions = tpcc.SQLOptions{ForUpdate: "FOR UPDATE", IntParam: "CAST(? AS INTEGER)", LowStockArray: true}

// clientSQLStatements are shared by every client-SQL session (read only),
// their placeholders rewritten to $n once.
var clientSQLStatements = tpcc.NewStatements(clientSQLOptions).Map(placeholder.Dollar)

// newClientSQLSession runs the transactions from the client over w
// (dialect.StyleClientSQL), each in a READ COMMITTED transaction, the
// PostgreSQL default that HammerDB also uses.
func newClientSQLSession(w *wireConn) *clientSQLSession {
	return &clientSQLSession{
		ClientSession: tpcc.NewClientSession(newClientTx(w), clientSQLStatements, w.close),
		w:             w,
	}
}

// clientSQLSession is a client-side session that, like procSession, is a
// dialect.Interrupter: the run driver then passes its calls a context that
// is never canceled, which spares watching one on every batch.
type clientSQLSession struct {
	*tpcc.ClientSession
	w *wireConn
}

var (
	_ dialect.Session     = (*clientSQLSession)(nil)
	_ dialect.Interrupter = (*clientSQLSession)(nil)
)

// Interrupt expires the connection's deadline, as procSession.Interrupt
// does: the batch in flight fails at once, and so does any later one.
func (s *clientSQLSession) Interrupt() { s.w.interrupt() }

// newClientTx returns the pipelined transactions of a client-side
// session over w (tpcc.Pipeline): BEGIN waits in the batch being built
// with the deferred statements and the prefetched reads, and goes to the
// server with the transaction's first statement whose result is needed.
func newClientTx(w *wireConn) *tpcc.Pipeline {
	return tpcc.NewPipeline(&clientWire{w: w, stmts: make(map[string]*wireStmt)}, beginSQL)
}

// beginSQL opens a client-side transaction in READ COMMITTED, the
// PostgreSQL default that HammerDB also uses.
const beginSQL = "BEGIN ISOLATION LEVEL READ COMMITTED"

// clientWire is the tpcc.PipelineConn of a client-side session: a batch
// is the Parse (the first time a statement is used: statements are
// prepared on the connection under a name), Bind and Execute of each of
// its statements, and one Sync (wireConn).
type clientWire struct {
	w *wireConn
	// stmts are the statements prepared or being prepared, by text.
	stmts map[string]*wireStmt
}

var _ tpcc.PipelineConn = (*clientWire)(nil)

// Queue binds sql with args. What the transaction reads of the result
// makes no difference here: the server answers every statement, and
// Result reads the answers in turn.
func (c *clientWire) Queue(sql string, args []any, _ tpcc.ResultUse) error {
	s, ok := c.stmts[sql]
	if !ok {
		s = &wireStmt{name: "oltplab_" + strconv.Itoa(len(c.stmts)+1), sql: sql}
		c.stmts[sql] = s
	}
	c.w.bind(s)
	for _, a := range args {
		c.w.paramAny(a)
	}
	c.w.execute()
	return c.w.badParam
}

func (c *clientWire) Discard() { c.w.discard() }

func (c *clientWire) Send(ctx context.Context) error { return c.w.send(ctx) }

// Result reads up to the next statement's rows: the server skips the
// rest of the batch after an error, which every later statement returns.
func (c *clientWire) Result(bool) error { return c.w.result() }

func (c *clientWire) Finish() error {
	if !c.w.inFlight {
		return nil
	}
	return c.w.finish()
}

func (c *clientWire) Affected() (int64, error) {
	if err := c.w.skipRows(); err != nil {
		return 0, err
	}
	return c.w.affected, nil
}

func (c *clientWire) NextRow() (bool, error) { return c.w.next() }

func (c *clientWire) Scan(dest ...any) error { return c.w.scan(dest...) }
