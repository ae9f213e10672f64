package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

// GroupCounters are the database's counters over every warehouse, read
// by shard 0 of a sharded run at its window's edges: the one database-side
// figure of the shards' shared window, from which the merged result takes
// its NOPM (and TPM, when the dialect has a server counter) rather than
// adding up the shards' own.
type GroupCounters struct {
	// DBNewOrders is the delta of SUM(d_next_o_id) over all districts.
	DBNewOrders int64 `json:"db_new_orders"`
	// DBTransactions is the delta of the server's transaction counter
	// (TxCountSource); 0 and TxCountSource empty without one.
	DBTransactions int64  `json:"db_transactions"`
	TxCountSource  string `json:"tx_count_source,omitempty"`
}

// groupReader reads GroupCounters for shard 0: the sum over every
// warehouse comes with the shard's own (runner.readNOPM, one statement),
// the server's transaction counter right after it.
type groupReader struct {
	txc              dialect.TxCounter // nil when the dialect has no server counter
	lastNO           int64             // set by each readNOPM
	startNO, startTx int64
	started          bool
}

// readTx reads the server's transaction counter, 0 without one.
func (g *groupReader) readTx(ctx context.Context) (int64, error) {
	if g.txc == nil {
		return 0, nil
	}
	return g.txc.TxCount(ctx)
}

// start takes the window's start: called right after the start counters
// were read.
func (g *groupReader) start(ctx context.Context, r *runner) {
	tx, err := g.readTx(ctx)
	if err != nil {
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("shard 0 could not read the database-wide counters at the window's start: %v", err))
		return
	}
	g.startNO, g.startTx, g.started = g.lastNO, tx, true
}

// end takes the window's end: called right after the end counters were
// read.
func (g *groupReader) end(ctx context.Context, r *runner) {
	if !g.started {
		return
	}
	tx, err := g.readTx(ctx)
	if err != nil {
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("shard 0 could not read the database-wide counters at the window's end: %v", err))
		return
	}
	c := &GroupCounters{DBNewOrders: g.lastNO - g.startNO}
	if g.txc != nil {
		c.DBTransactions, c.TxCountSource = tx-g.startTx, g.txc.TxCountSource()
	}
	r.res.Group = c
}

// waitUntil waits on clk until the instant at (at once when it has
// passed), or until ctx ends.
func waitUntil(ctx context.Context, clk clock, at time.Time) error {
	d := at.Sub(clk.Now())
	if d <= 0 {
		return nil
	}
	c, stop := clk.NewTimer(d)
	defer stop()
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
