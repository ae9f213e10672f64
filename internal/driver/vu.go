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
	// stopC is closed with stopping, to wake users waiting for their
	// schedule, a due terminal or a queued Delivery.
	stopC    chan struct{}
	stopOnce sync.Once
}

func newGate() *gate { return &gate{stopC: make(chan struct{})} }

// stop sets stopping and closes stopC; it may be called more than once.
func (g *gate) stop() {
	g.stopping.Store(true)
	g.stopOnce.Do(func() { close(g.stopC) })
}

// vu is one session and what it measured: a virtual user of the tproc-c
// mode, which drives its own terminal (deck and inputs, TPC-C 5.2.4.2),
// or one session of the tpc-c mode's pool, which runs the transaction of
// whichever terminal is due, or a session that executes deferred
// Deliveries. Everything in it belongs to the goroutine that runs it,
// except stats.live and stats.second (see stats.go) and the session,
// which the runner may interrupt (see interrupt).
type vu struct {
	id    int
	role  string // in messages: "virtual user", "session", "delivery session"
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
	// The answer watchdog (answer.go): when the call in flight began
	// (UnixNano, 0 when none is), whether the watchdog expired it, and the
	// cancel of its context (under mu) for a session that is not a
	// dialect.Interrupter.
	answerTimeout time.Duration
	callSince     atomic.Int64
	expired       atomic.Bool
	cancelCall    context.CancelFunc

	maxRetries int
	// paced: transactions have scheduled starts, whose lateness is measured.
	paced bool

	// own is the terminal of a tproc-c virtual user; interval the time
	// between its scheduled starts at a rate (0: back to back).
	own      *terminal
	interval time.Duration
	// queue, for a session of the tpc-c pool: Deliveries are queued there
	// for deferred execution (TPC-C 2.7.2) instead of run.
	queue *deliveryQueue
	rec   Recorder // Options.Recorder, or nil
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

func newVU(i int, db dialect.Database, o Options, warehouses int, clk clock, g *gate, outages *outageLog) *vu {
	v := &vu{
		id:         i,
		role:       "virtual user",
		db:         db,
		style:      o.Style,
		clk:        clk,
		gate:       g,
		maxRetries: o.MaxRetries,
		paced:      o.Paced(),
		rec:        o.Recorder,
		stats:      newVUStats(warehouses),

		reconnectFor:  o.ReconnectFor,
		answerTimeout: o.AnswerTimeout,
		outages:       outages,
	}
	v.no.Lines = make([]tpcc.OrderLineInput, 0, 15) // 2.4.1.3: at most 15 lines
	return v
}

// errVUFatal marks an error that ends the run: the virtual user could not
// go on (lost connection that would not come back, schema missing).
var errVUFatal = errors.New("virtual user stopped")

// loop runs the virtual user's own terminal until the window's end
// (gate.stopping) or until ctx is canceled (Ctrl-C, or the end of the
// grace period). It returns nil in both cases, and an error only when the
// virtual user cannot go on. At a rate, each transaction is scheduled one
// interval after the previous one's schedule, whenever that one ended: a
// user behind its schedule starts at once, and its latency still counts
// from the schedule (no coordinated omission).
func (v *vu) loop(ctx context.Context) error {
	calls := v.callContext(ctx)
	t := v.own
	var next time.Time
	if v.interval > 0 {
		// Each user starts at its own phase of the interval, so that the
		// users do not fire together.
		next = v.clk.Now().Add(time.Duration(t.rand.Uint64() % uint64(v.interval)))
	}
	for !v.gate.stopping.Load() && ctx.Err() == nil {
		var intended time.Time // zero: now
		if v.interval > 0 {
			if !v.waitUntil(ctx, next) {
				return nil
			}
			intended = next
			next = next.Add(v.interval)
		}
		if _, err := v.transaction(ctx, calls, t, t.term.NextKind(), intended); err != nil {
			return err
		}
	}
	return nil
}

// serve runs, for one session of the tpc-c pool, the transaction of each
// terminal the pacer hands over, and gives the terminal back to keying and
// thinking, until the window's end or ctx is canceled.
func (v *vu) serve(ctx context.Context, p *pacer) error {
	calls := v.callContext(ctx)
	for {
		var t *terminal
		select {
		case t = <-p.ready:
		case <-v.gate.stopC:
			return nil
		case <-ctx.Done():
			return nil
		}
		if v.gate.stopping.Load() {
			return nil
		}
		end, err := v.transaction(ctx, calls, t, t.kind, t.due)
		if err != nil || ctx.Err() != nil {
			return err
		}
		p.again(t, end)
	}
}

// waitUntil waits until at; it reports false when the window ended or
// ctx was canceled first.
func (v *vu) waitUntil(ctx context.Context, at time.Time) bool {
	if d := at.Sub(v.clk.Now()); d > 0 {
		c, stop := v.clk.NewTimer(d)
		defer stop()
		select {
		case <-c:
		case <-v.gate.stopC:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return !v.gate.stopping.Load() && ctx.Err() == nil
}

// outcome of one transaction, after retries.
type txOutcome int

const (
	txCommitted txOutcome = iota
	txRolledBack
	txQueued // a Delivery queued for deferred execution: complete for its terminal
	txFailed
	txCanceled // ended by shutdown: not counted anywhere
)

// txTimes are the moments of one transaction: intended (the schedule; the
// start when unpaced), dispatched (tpc-c: handed to the session pool;
// zero otherwise), start (the session is asked) and end.
type txTimes struct {
	intended, dispatched, start, end time.Time
}

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

// transaction fills, executes (with retries) and records one transaction
// of kind for terminal t, intended to start at intended (zero: at once).
// ctx ends the waits; calls is the context of the session's calls
// (callContext). It returns the moment the transaction ended.
func (v *vu) transaction(ctx, calls context.Context, t *terminal, kind tpcc.TxKind, intended time.Time) (time.Time, error) {
	t.pickWarehouse()
	tm := txTimes{intended: intended, dispatched: t.dispatched, start: v.clk.Now()}
	if tm.intended.IsZero() {
		tm.intended = tm.start
	}
	v.fill(t.term, kind, tm.start)

	if kind == tpcc.DeliveryTx && v.queue != nil {
		// TPC-C 2.7.2: the terminal's Delivery is queued for deferred
		// execution and the terminal is answered at once.
		v.queue.push(deliveryRequest{wID: v.de.WID, carrierID: v.de.CarrierID, queued: tm.start})
		tm.end = v.clk.Now()
		v.record(kind, txQueued, dialect.ClassNone, 0, tm)
		return tm.end, nil
	}
	out, class, retries, fatal := v.execute(ctx, calls, kind)
	tm.end = v.clk.Now()
	if out == txCanceled {
		return tm.end, fatal
	}
	v.record(kind, out, class, retries, tm)
	return tm.end, fatal
}

// fill draws the input of kind from term (TPC-C 2.4.1, 2.5.1, 2.6.1,
// 2.7.1, 2.8.1).
func (v *vu) fill(term *tpcc.Terminal, kind tpcc.TxKind, now time.Time) {
	switch kind {
	case tpcc.NewOrderTx:
		term.NewOrder(&v.no, now)
	case tpcc.PaymentTx:
		term.Payment(&v.pa, now)
	case tpcc.OrderStatusTx:
		term.OrderStatus(&v.os)
	case tpcc.DeliveryTx:
		term.Delivery(&v.de, now)
	case tpcc.StockLevelTx:
		term.StockLevel(&v.sl)
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
		err := v.call(calls, kind)
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
		silent := v.expired.Swap(false)
		if silent {
			// No answer within the answer timeout: a dead connection.
			class = dialect.ClassConnection
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
			v.outages.lost(v.clk.Now(), kind, silent)
			if err := v.reconnect(ctx); err != nil {
				if ctx.Err() != nil {
					return txFailed, class, retries, nil
				}
				return txFailed, class, retries, err
			}
		case class == dialect.ClassUndefinedObject || class == dialect.ClassAuth:
			return txFailed, class, retries, fmt.Errorf("%w: %s %d: %s: %s error: %w", errVUFatal, v.role, v.id+1, kind, class, err)
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
func (v *vu) record(kind tpcc.TxKind, out txOutcome, class dialect.ErrClass, retries int, tm txTimes) {
	s := v.stats
	done := out == txCommitted || out == txRolledBack || out == txQueued
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
	measured := v.gate.measuring.Load()
	if v.rec != nil {
		v.rec.Transaction(Transaction{Kind: kind, Outcome: outcomeOf(out), Class: class, Retries: retries, Latency: tm.end.Sub(tm.intended), Measured: measured})
	}
	if !measured {
		return
	}
	k := &s.kinds[kind]
	k.retried += int64(retries)
	// The response time counts from the intended start: a server that
	// stalls delays the schedule's later transactions, and their waiting
	// shows here (no coordinated omission).
	us := micros(tm.end.Sub(tm.intended))
	if done {
		s.gaps.done(tm.end)
		k.completed++
		_ = k.latency.RecordValue(us)
		_ = k.service.RecordValue(micros(tm.end.Sub(tm.start)))
		v.audit(kind, out)
		if out == txRolledBack {
			k.rolledBack++
		}
	} else {
		k.failed[class]++
	}
	if v.paced {
		_ = s.startLag.RecordValue(micros(tm.start.Sub(tm.intended)))
		if !tm.dispatched.IsZero() {
			_ = s.sessionWait.RecordValue(micros(tm.start.Sub(tm.dispatched)))
		}
	}
	s.second.record(done, newOrder, !done, us)
}

func outcomeOf(out txOutcome) Outcome {
	switch out {
	case txCommitted:
		return OutcomeCommitted
	case txRolledBack:
		return OutcomeRolledBack
	case txQueued:
		return OutcomeQueued
	}
	return OutcomeFailed
}

// audit records a completed transaction's input for the clause 9.2 figures.
func (v *vu) audit(kind tpcc.TxKind, out txOutcome) {
	a := &v.stats.audit
	switch kind {
	case tpcc.NewOrderTx:
		a.RecordNewOrder(&v.no, out == txRolledBack)
	case tpcc.PaymentTx:
		a.RecordPayment(&v.pa)
	case tpcc.OrderStatusTx:
		a.RecordOrderStatus(&v.os)
	case tpcc.DeliveryTx:
		if out == txQueued {
			a.RecordDeliveryQueued() // executed later: deferred.go
		} else {
			a.RecordDelivery(&v.de)
		}
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
