package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Reconnection after a lost connection: tries with doubling waits from
// 0.1 s up to 2 s between them, for Options.ReconnectFor. A server that
// restarts after a crash is back within seconds to minutes (PostgreSQL
// replays its WAL, InnoDB its redo log); the cap keeps the first session
// after it within 2 s of its return.
const (
	reconnectBackoff    = 100 * time.Millisecond
	reconnectBackoffMax = 2 * time.Second
)

// gate is what every virtual user reads on each transaction: whether to
// start another and whether a transaction that just ended is measured.
type gate struct {
	stopping  atomic.Bool // set at the end of the window: start no new transaction
	measuring atomic.Bool // set between the window's start and end counter reads
}

// vu is one virtual user: a session, a terminal (deck and inputs, TPC-C
// 5.2.4.2) and what it measured. Everything in it belongs to the goroutine
// that runs it, except stats.live and stats.second (see stats.go) and the
// session, which the runner may interrupt (see interrupt).
type vu struct {
	id    int
	db    dialect.Database
	style dialect.Style
	clk   clock
	gate  *gate

	// sess is read without the lock by the virtual user's goroutine, its
	// only writer; it is written (setSession) under mu, which interrupt
	// holds to reach it from the runner's goroutine.
	mu          sync.Mutex
	sess        dialect.Session
	interrupted bool // under mu: a session set from now on is interrupted at once

	rand       *tpcc.Rand
	term       *tpcc.Terminal
	warehouses []int // AllWarehouses: the warehouses this user moves across; nil when bound to home
	maxRetries int
	// reconnectFor bounds the reconnection after a lost connection;
	// outages records it.
	reconnectFor time.Duration
	outages      *outageLog

	no tpcc.NewOrder
	pa tpcc.Payment
	os tpcc.OrderStatus
	de tpcc.Delivery
	sl tpcc.StockLevel

	stats *vuStats
}

// assignment returns the home warehouse, the fixed Stock-Level district
// (TPC-C 2.8.1.1) and, with all, the warehouses of virtual user i (from 0)
// of vus over a database of w warehouses. Users sharing a home warehouse
// get different districts, as HammerDB does.
func assignment(i, vus, w int, all bool) (home, district int, list []int) {
	home = i%w + 1
	district = (i/w)%tpcc.DistrictsPerWarehouse + 1
	if all && vus < w {
		// HammerDB "use all warehouses": user i drives w' with (w'-1) % vus == i.
		for wh := i + 1; wh <= w; wh += vus {
			list = append(list, wh)
		}
	}
	return home, district, list
}

func newVU(i int, db dialect.Database, o Options, run tpcc.Constants, warehouses int, clk clock, g *gate, outages *outageLog) *vu {
	r := tpcc.NewRand(o.Seed, tpcc.TerminalStream(i))
	home, district, list := assignment(i, o.VUs, warehouses, o.AllWarehouses)
	v := &vu{
		id:         i,
		db:         db,
		style:      o.Style,
		clk:        clk,
		gate:       g,
		rand:       r,
		term:       tpcc.NewTerminal(r, run, warehouses, home, district),
		warehouses: list,
		maxRetries: o.MaxRetries,
		stats:      newVUStats(warehouses),

		reconnectFor: o.ReconnectFor,
		outages:      outages,
	}
	v.no.Lines = make([]tpcc.OrderLineInput, 0, 15) // 2.4.1.3: at most 15 lines
	return v
}

// errVUFatal marks an error that ends the run: the virtual user could not
// go on (lost connection that would not come back, schema missing).
var errVUFatal = errors.New("virtual user stopped")

// loop runs transactions until the window's end (gate.stopping) or until
// ctx is canceled (Ctrl-C, or the end of the grace period). It returns nil
// in both cases, and an error only when the virtual user cannot go on.
func (v *vu) loop(ctx context.Context) error {
	calls := v.callContext(ctx)
	for !v.gate.stopping.Load() && ctx.Err() == nil {
		if err := v.transaction(ctx, calls); err != nil {
			return err
		}
	}
	return nil
}

// outcome of one transaction, after retries.
type txOutcome int

const (
	txCommitted txOutcome = iota
	txRolledBack
	txFailed
	txCanceled // ended by shutdown: not counted anywhere
)

// callContext returns the context the session's calls get. A session that
// is a dialect.Interrupter gets one that is never canceled, which spares
// its driver watching a context on every call (pgx, database/sql); the
// runner interrupts it instead when it abandons in-flight transactions.
// Any other session gets ctx itself.
func (v *vu) callContext(ctx context.Context) context.Context {
	if _, ok := v.sess.(dialect.Interrupter); ok {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// setSession replaces the session (nil after a close); a session set after
// the virtual user was interrupted is interrupted at once.
func (v *vu) setSession(s dialect.Session) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.sess = s
	if v.interrupted {
		interruptSession(s)
	}
}

// interrupt makes the session's call in flight, if any, and its later
// calls end at once. It is called from the runner's goroutine after the
// virtual users' context was canceled: a session that watches that context
// has already been told; an Interrupter is told here.
func (v *vu) interrupt() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.interrupted = true
	interruptSession(v.sess)
}

func interruptSession(s dialect.Session) {
	if i, ok := s.(dialect.Interrupter); ok {
		i.Interrupt()
	}
}

// transaction draws, fills, executes (with retries) and records one
// transaction. ctx ends the virtual user's waits; calls is the context of
// the session's calls (callContext).
func (v *vu) transaction(ctx, calls context.Context) error {
	kind := v.term.NextKind()
	if len(v.warehouses) > 1 {
		v.term.SetWarehouse(v.warehouses[v.rand.Uniform(0, len(v.warehouses)-1)])
	} else if len(v.warehouses) == 1 {
		v.term.SetWarehouse(v.warehouses[0])
	}
	start := v.clk.Now()
	v.fill(kind, start)

	out, class, retries, fatal := v.execute(ctx, calls, kind)
	end := v.clk.Now()
	if out == txCanceled {
		return fatal
	}
	v.record(kind, out, class, retries, end.Sub(start))
	return fatal
}

// fill draws the input of kind (TPC-C 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1).
func (v *vu) fill(kind tpcc.TxKind, now time.Time) {
	switch kind {
	case tpcc.NewOrderTx:
		v.term.NewOrder(&v.no, now)
	case tpcc.PaymentTx:
		v.term.Payment(&v.pa, now)
	case tpcc.OrderStatusTx:
		v.term.OrderStatus(&v.os)
	case tpcc.DeliveryTx:
		v.term.Delivery(&v.de, now)
	case tpcc.StockLevelTx:
		v.term.StockLevel(&v.sl)
	}
}

func (v *vu) exec(ctx context.Context, kind tpcc.TxKind) error {
	switch kind {
	case tpcc.NewOrderTx:
		return v.sess.NewOrder(ctx, &v.no)
	case tpcc.PaymentTx:
		return v.sess.Payment(ctx, &v.pa)
	case tpcc.OrderStatusTx:
		return v.sess.OrderStatus(ctx, &v.os)
	case tpcc.DeliveryTx:
		v.de.Skipped = 0
		return v.sess.Delivery(ctx, &v.de)
	default:
		v.sl.LowStock = 0
		return v.sess.StockLevel(ctx, &v.sl)
	}
}

// execute runs one transaction, retrying the whole of it after a
// retryable failure up to maxRetries times. A lost connection is counted
// as a failure and the session is reopened; if it cannot be, fatal is set.
func (v *vu) execute(ctx, calls context.Context, kind tpcc.TxKind) (out txOutcome, class dialect.ErrClass, retries int, fatal error) {
	for {
		err := v.exec(calls, kind)
		if err == nil {
			return txCommitted, dialect.ClassNone, retries, nil
		}
		if ctx.Err() != nil {
			return txCanceled, dialect.ClassCanceled, retries, nil
		}
		class = v.db.Classify(err)
		if class == dialect.ClassNone {
			class = dialect.ClassOther
		}
		if errors.Is(err, tpcc.ErrRollback) || class == dialect.ClassRollback {
			// TPC-C 2.4.2.3: the rollback on an unused item is an expected
			// outcome of a New-Order whose input asked for it; any other
			// rollback is a failure.
			if kind == tpcc.NewOrderTx && v.no.Rollback {
				return txRolledBack, dialect.ClassNone, retries, nil
			}
			return txFailed, dialect.ClassRollback, retries, nil
		}
		switch {
		case class.Retryable() && retries < v.maxRetries:
			retries++
			if !v.pause(ctx, time.Duration(retries)*time.Millisecond) {
				return txCanceled, dialect.ClassCanceled, retries, nil
			}
			continue
		case class == dialect.ClassConnection:
			v.outages.lost(v.clk.Now(), kind)
			if err := v.reconnect(ctx); err != nil {
				if ctx.Err() != nil {
					return txFailed, class, retries, nil
				}
				return txFailed, class, retries, err
			}
		case class == dialect.ClassUndefinedObject || class == dialect.ClassAuth:
			return txFailed, class, retries, fmt.Errorf("%w: virtual user %d: %s: %s error: %w", errVUFatal, v.id+1, kind, class, err)
		}
		return txFailed, class, retries, nil
	}
}

// pause waits d unless ctx ends first; it reports whether it waited.
func (v *vu) pause(ctx context.Context, d time.Duration) bool {
	c, stop := v.clk.NewTimer(d)
	defer stop()
	select {
	case <-c:
		return true
	case <-ctx.Done():
		return false
	}
}

// reconnect closes the session and opens a new one, trying with growing
// waits for reconnectFor. It gives up early, returning nil without a
// session, when the run stops starting transactions: the loop then ends.
func (v *vu) reconnect(ctx context.Context) error {
	v.close()
	deadline := v.clk.Now().Add(v.reconnectFor)
	wait := reconnectBackoff
	for tries := 1; ; tries++ {
		if !v.pause(ctx, wait) {
			return ctx.Err()
		}
		if v.gate.stopping.Load() {
			return nil
		}
		s, err := v.db.NewSession(ctx, v.style)
		if err == nil {
			v.setSession(s)
			v.outages.regained(v.clk.Now())
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		left := deadline.Sub(v.clk.Now())
		if left <= 0 {
			return fmt.Errorf("%w: %w: virtual user %d lost its connection and could not reconnect within %s (%d tries; --reconnect-for): %w",
				errVUFatal, ErrServerGone, v.id+1, v.reconnectFor, tries, err)
		}
		wait = min(2*wait, reconnectBackoffMax, left)
	}
}

// record counts one transaction that ended. Everything measured is counted
// only when it ended inside the measured window.
func (v *vu) record(kind tpcc.TxKind, out txOutcome, class dialect.ErrClass, retries int, lat time.Duration) {
	s := v.stats
	done := out == txCommitted || out == txRolledBack
	newOrder := out == txCommitted && kind == tpcc.NewOrderTx
	switch {
	case done:
		s.live.done.Add(1)
		if newOrder {
			s.live.newOrders.Add(1)
		}
	default:
		s.live.errors.Add(1)
		if class != dialect.ClassConnection { // counted when it was lost
			v.outages.failed()
		}
	}
	if !v.gate.measuring.Load() {
		return
	}
	k := &s.kinds[kind]
	k.retried += int64(retries)
	us := micros(lat)
	if done {
		k.completed++
		_ = k.latency.RecordValue(us)
		v.audit(kind, out == txRolledBack)
		if out == txRolledBack {
			k.rolledBack++
		}
	} else {
		k.failed[class]++
	}
	s.second.record(done, newOrder, !done, us)
}

// audit records a completed transaction's input for the clause 9.2 figures.
func (v *vu) audit(kind tpcc.TxKind, rolledBack bool) {
	a := &v.stats.audit
	switch kind {
	case tpcc.NewOrderTx:
		a.RecordNewOrder(&v.no, rolledBack)
	case tpcc.PaymentTx:
		a.RecordPayment(&v.pa)
	case tpcc.OrderStatusTx:
		a.RecordOrderStatus(&v.os)
	case tpcc.DeliveryTx:
		a.RecordDelivery(&v.de)
	case tpcc.StockLevelTx:
		a.RecordStockLevel(&v.sl)
	}
}

// close ends the session.
func (v *vu) close() {
	if s := v.sess; s != nil {
		v.setSession(nil)
		_ = s.Close()
	}
}
