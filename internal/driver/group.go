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

// groupReader reads GroupCounters for shard 0.
type groupReader struct {
	txc              dialect.TxCounter // nil when the dialect has no server counter
	startNO, startTx int64
	started          bool
}

// read reads SUM(d_next_o_id) over every district and, when there is
// one, the server's transaction counter, on the runner's counter
// connection.
func (g *groupReader) read(ctx context.Context, r *runner) (nopm, tx int64, err error) {
	if r.conn == nil {
		return 0, 0, fmt.Errorf("no counter connection")
	}
	if err := r.conn.QueryRow(ctx, "SELECT SUM(d_next_o_id) FROM district").Scan(&nopm); err != nil {
		return 0, 0, fmt.Errorf("read SUM(d_next_o_id) over all warehouses: %w", err)
	}
	if g.txc != nil {
		if tx, err = g.txc.TxCount(ctx); err != nil {
			return 0, 0, err
		}
	}
	return nopm, tx, nil
}

func (g *groupReader) start(ctx context.Context, r *runner) {
	no, tx, err := g.read(ctx, r)
	if err != nil {
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("shard 0 could not read the database-wide counters at the window's start: %v", err))
		return
	}
	g.startNO, g.startTx, g.started = no, tx, true
}

func (g *groupReader) end(ctx context.Context, r *runner) {
	if !g.started {
		return
	}
	no, tx, err := g.read(ctx, r)
	if err != nil {
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("shard 0 could not read the database-wide counters at the window's end: %v", err))
		return
	}
	c := &GroupCounters{DBNewOrders: no - g.startNO}
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
