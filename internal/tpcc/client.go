package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Tx is one open transaction. Dialects adapt their driver's transaction to it.
type Tx interface {
	Querier
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Beginner starts transactions on one connection.
type Beginner interface {
	Begin(ctx context.Context) (Tx, error)
}

// rollbackTimeout bounds the rollback that follows a failed transaction. The
// rollback runs even when ctx is already done (so the connection is left
// clean), but never waits on a hung server for longer than this.
const rollbackTimeout = 5 * time.Second

// ClientSession runs the five transactions from the client, inside an
// explicit transaction (dialect.StyleClientSQL): one statement per round
// trip, or, when the dialect's Tx is a Deferrer, the statements whose
// results are not read travelling with the next one.
// It has exactly the method set of dialect.Session. It does not retry: the
// driver retries whole transactions after classifying the error, which is
// returned wrapped (errors.Is/As see the driver's own error).
//
// A ClientSession is owned by one goroutine.
type ClientSession struct {
	b       Beginner
	st      *Statements
	closeFn func() error

	// Scratch reused across transactions, so the hot path allocates little.
	ids  []int64 // customer ids of one last name (2.5.2.2, 2.6.2.2)
	buf  []byte  // C_DATA and H_DATA under construction (2.5.2.2)
	cust paymentCustomer
	// New-Order's distinct items and stock rows, and statement arguments.
	items  []orderItem
	stocks []orderStock
	args   []any
	args2  []any
	// The keys of New-Order's item and stock reads, apart from args: a
	// Prefetcher holds them until both reads are sent.
	itemArgs  []any
	stockArgs []any
	// out holds the terminal output of the last New-Order (2.4.3.3); it is
	// computed as the specification asks but not returned.
	out newOrderOutput
}

// NewClientSession returns a session that begins its transactions on b and
// runs the statements of st; closeFn, if not nil, is called by Close (it
// usually closes the connection behind b).
func NewClientSession(b Beginner, st *Statements, closeFn func() error) *ClientSession {
	return &ClientSession{b: b, st: st, closeFn: closeFn, ids: make([]int64, 0, 16), buf: make([]byte, 0, 600),
		items: make([]orderItem, 0, MaxOrderLines), stocks: make([]orderStock, 0, MaxOrderLines),
		args: make([]any, 0, 9*MaxOrderLines), args2: make([]any, 0, 6*MaxOrderLines),
		itemArgs: make([]any, 0, MaxOrderLines), stockArgs: make([]any, 0, 2*MaxOrderLines)}
}

// Close releases the session's connection.
func (s *ClientSession) Close() error {
	if s.closeFn == nil {
		return nil
	}
	return s.closeFn()
}

// NewOrder runs one New-Order (clause 2.4). The expected rollback on an
// unused item number (2.4.2.3) is returned as the bare ErrRollback.
func (s *ClientSession) NewOrder(ctx context.Context, in *NewOrder) error {
	tx, err := s.b.Begin(ctx)
	if err == nil {
		err = endTx(ctx, tx, s.newOrder(ctx, tx, in))
	} else {
		err = fmt.Errorf("begin: %w", err)
	}
	if err == nil || err == ErrRollback {
		return err
	}
	return fmt.Errorf("new-order w=%d d=%d: %w", in.WID, in.DID, err)
}

// Payment runs one Payment (clause 2.5).
func (s *ClientSession) Payment(ctx context.Context, in *Payment) error {
	tx, err := s.b.Begin(ctx)
	if err == nil {
		err = endTx(ctx, tx, s.payment(ctx, tx, in))
	} else {
		err = fmt.Errorf("begin: %w", err)
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("payment w=%d d=%d: %w", in.WID, in.DID, err)
}

// OrderStatus runs one Order-Status (clause 2.6).
func (s *ClientSession) OrderStatus(ctx context.Context, in *OrderStatus) error {
	tx, err := s.b.Begin(ctx)
	if err == nil {
		err = endTx(ctx, tx, s.orderStatus(ctx, tx, in))
	} else {
		err = fmt.Errorf("begin: %w", err)
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("order-status w=%d d=%d: %w", in.WID, in.DID, err)
}

// Delivery runs one Delivery (clause 2.7) over the ten districts of
// in.WID, in one database transaction; in.Skipped receives the number of
// districts with no undelivered order.
func (s *ClientSession) Delivery(ctx context.Context, in *Delivery) error {
	tx, err := s.b.Begin(ctx)
	if err == nil {
		err = endTx(ctx, tx, s.delivery(ctx, tx, in))
	} else {
		err = fmt.Errorf("begin: %w", err)
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("delivery w=%d carrier=%d: %w", in.WID, in.CarrierID, err)
}

// StockLevel runs one Stock-Level (clause 2.8); in.LowStock receives the count.
func (s *ClientSession) StockLevel(ctx context.Context, in *StockLevel) error {
	tx, err := s.b.Begin(ctx)
	if err == nil {
		err = endTx(ctx, tx, s.stockLevel(ctx, tx, in))
	} else {
		err = fmt.Errorf("begin: %w", err)
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("stock-level w=%d d=%d: %w", in.WID, in.DID, err)
}

// endTx ends tx: it commits when err is nil and rolls back otherwise
// (also after a failed commit, which some drivers leave open). The returned
// error keeps err (or the commit error) first in its chain, so that
// errors.Is/As find the cause of the failure before any rollback trouble.
func endTx(ctx context.Context, tx Tx, err error) error {
	if err == nil {
		cerr := tx.Commit(ctx)
		if cerr == nil {
			return nil
		}
		err = fmt.Errorf("commit: %w", cerr)
		rollbackTx(ctx, tx) // usually "already closed"; the commit error is what matters
		return err
	}
	if rerr := rollbackTx(ctx, tx); rerr != nil {
		if err == ErrRollback {
			// The expected outcome could not be completed: report the
			// rollback's failure, not an expected rollback.
			return fmt.Errorf("roll back on an unused item number: %w", rerr)
		}
		return fmt.Errorf("%w (rollback also failed: %w)", err, rerr)
	}
	return err
}

func rollbackTx(ctx context.Context, tx Tx) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	return tx.Rollback(rctx)
}

// execDeferred runs sql in tx, or defers it when tx is a Deferrer: its
// error may then come from the transaction's next statement or commit,
// which fail the transaction all the same.
func execDeferred(ctx context.Context, tx Tx, sql string, args ...any) error {
	if d, ok := tx.(Deferrer); ok {
		d.Defer(sql, args...)
		return nil
	}
	_, err := tx.Exec(ctx, sql, args...)
	return err
}

// prefetch queues a read in tx when tx is a Prefetcher (its result is then
// read with QueryRow or Query as usual), and does nothing otherwise.
func prefetch(tx Tx, sql string, args ...any) {
	if p, ok := tx.(Prefetcher); ok {
		p.Prefetch(sql, args...)
	}
}

// isNoRows reports whether err says the query returned no row.
func isNoRows(err error) bool { return errors.Is(err, ErrNoRows) }

// moneyFromDB converts an amount read from the database to cents.
func moneyFromDB(x float64) Money { return Money(math.Round(x * 100)) }

// customerID returns the customer a Payment or an Order-Status names: id
// itself, or, by last name (TPC-C 2.5.2.2 and 2.6.2.2), the customer at
// position ceil(n/2) among the n customers of the district with that
// C_LAST sorted by C_FIRST ascending.
func (s *ClientSession) customerID(ctx context.Context, tx Tx, w, d int64, byName bool, last string, id int) (int64, error) {
	if !byName {
		return int64(id), nil
	}
	rows, err := tx.Query(ctx, s.st.CustomerIDsByLast, w, d, last)
	if err != nil {
		return 0, fmt.Errorf("find customers named %s: %w", last, err)
	}
	ids := s.ids[:0]
	var c int64
	for rows.Next() {
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return 0, fmt.Errorf("find customers named %s: %w", last, err)
		}
		ids = append(ids, c)
	}
	rows.Close()
	s.ids = ids
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("find customers named %s: %w", last, err)
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in district %d of warehouse %d: %w", last, d, w, ErrNoRows)
	}
	return ids[middleOf(len(ids))], nil
}

// middleOf is the 0-based index of the row at position ceil(n/2) (1-based)
// of n rows (TPC-C 2.5.2.2).
func middleOf(n int) int { return (n+1)/2 - 1 }
