package driver

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Live is a report on a running run. Its rates are the driver's own
// counts, whatever the phase.
//
// Live is called every second (every LiveEvery when shorter), so that a
// gauge follows the run from its first second; its rates are over the
// last LiveEvery, or over the run so far while it is younger (they used
// to read 0 for the first LiveEvery of every run). Line marks one call
// per LiveEvery: what prints a line of progress prints those.
type Live struct {
	Elapsed time.Duration // since the run started (ramp-up included)
	Phase   Phase
	TPM     float64 // completed transactions per minute over the interval
	NOPM    float64 // committed New-Orders per minute over the interval
	Errors  int64   // failed transactions in the interval
	// Interval is what the rates cover: LiveEvery, or less at the start.
	Interval time.Duration
	// Line: LiveEvery has passed since the previous line.
	Line bool
	// Target names the run's target when several run at once (a
	// parallel window, set by its caller); empty otherwise.
	Target string
}

// liveMark is the driver's counts at one live call.
type liveMark struct {
	at             time.Time
	done, no, errs int64
}

// counterReadTimeout bounds the reads of the window's end counters when
// the run's context is already canceled (Ctrl-C).
const counterReadTimeout = 10 * time.Second

// openSessionsAtOnce bounds the sessions opened in parallel at start.
const openSessionsAtOnce = 8

// Run drives the workload on db, a database built as meta describes, and
// returns what the measured window measured. live, when not nil, is called
// every o.LiveEvery from one goroutine.
//
// When ctx is canceled (Ctrl-C) Run stops the virtual users, reads the end
// counters with a fresh short context and returns the partial Result
// (Partial set) with a nil error. A lost connection is an outage the run
// rides through: virtual users reconnect for up to Options.ReconnectFor and
// the outage is recorded (Result.Outages). When a virtual user cannot go
// on (a connection that does not come back: ErrServerGone; a missing
// schema object) or the start counters cannot be read, Run returns the
// Result measured so far, marked Partial, together with the error. When
// the end counters cannot be read, or the server restarted inside the
// window, TPM and NOPM are the driver's own counts, labelled
// (Result.CountsFallback).
func Run(ctx context.Context, db dialect.Database, meta tpcc.Meta, o Options, live func(Live)) (*Result, error) {
	return run(ctx, db, meta, o, live, realClock{})
}

func run(ctx context.Context, db dialect.Database, meta tpcc.Meta, o Options, live func(Live), clk clock) (*Result, error) {
	if o.Start != nil {
		// A run that ends before reaching the start releases the others.
		defer o.Start.Abort()
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if meta.Warehouses < 1 {
		return nil, fmt.Errorf("database metadata holds %d warehouses: build the schema first", meta.Warehouses)
	}
	// TPC-C 2.1.6.1: the run-time C constants are drawn once per run and
	// must be valid against the load-time ones recorded by build.
	rc := tpcc.NewRunConstants(tpcc.NewRand(o.Seed, tpcc.ConstantsStream), meta.Load)
	if err := tpcc.ValidRunConstants(meta.Load, rc); err != nil {
		return nil, fmt.Errorf("draw run-time NURand constants: %w", err)
	}

	o = o.ForWarehouses(meta.Warehouses)
	r := &runner{
		db: db, o: o, clk: clk, liveFn: live, gate: newGate(),
		res: &Result{
			Options: o, Dialect: db.Name(), EmbeddedDatabase: db.Caps().Embedded, Warehouses: meta.Warehouses, RunConstants: rc,
			NOPMSource: NOPMSource, TPMSource: DriverTPMSource,
		},
		lag:          lagMeter{clk: clk},
		secondMerged: newSecondHistogram(),
	}
	if sh := o.Shard; sh.Active() {
		if sh.LastWarehouse > meta.Warehouses {
			return nil, fmt.Errorf("shard %s: warehouses %d-%d, but the database holds %d", sh, sh.FirstWarehouse, sh.LastWarehouse, meta.Warehouses)
		}
		r.nopmWhere = fmt.Sprintf(" WHERE d_w_id BETWEEN %d AND %d", sh.FirstWarehouse, sh.LastWarehouse)
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("shard %s: %d of %d virtual users on warehouses %d-%d; NOPM counts these "+
			"warehouses' New-Orders, TPM this driver's own transactions; this is one shard's result: the merged profile (shard 0's with --shard-group or --start-at, or oltplab results merge) adds up the shards'",
			sh, o.VUs, sh.TotalVUs, sh.FirstWarehouse, sh.LastWarehouse))
		if sh.Index == 0 {
			// Shard 0 reads the database's counters over every warehouse
			// once for the shared window: the merged result's NOPM and TPM.
			r.group = &groupReader{}
			if tc, ok := db.(dialect.TxCounter); ok {
				r.group.txc = tc
			}
		}
	}
	if sr, ok := db.(dialect.ServerStartReader); ok {
		r.ssr = sr
	}
	if tc, ok := db.(dialect.TxCounter); ok && !o.Shard.Active() {
		// A shard's TPM is its own count: the database's counter covers
		// every shard.
		r.txc = tc
		r.res.TPMSource = tc.TxCountSource()
		r.res.txCountSource = r.res.TPMSource
		r.res.TxCountLagSeconds = db.Caps().TxCountLag.Seconds()
		r.res.txCountsOwn = db.Caps().TxCountsStatements
	}
	conn, err := db.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to read the NOPM and TPM counters: %w", err)
	}
	r.conn = conn
	defer func() {
		if r.conn != nil {
			_ = r.conn.Close()
		}
	}()

	if o.Mode == ModeTPCC {
		r.setupTerminals(rc, meta.Warehouses)
	} else {
		r.vus = make([]*vu, o.VUs)
		for i := range r.vus {
			v := newVU(i, db, o, meta.Warehouses, clk, r.gate, &r.outages)
			v.own = newUserTerminal(i, o, rc, meta.Warehouses)
			if o.Rate > 0 {
				v.interval = time.Duration(float64(time.Second) / o.Rate)
			}
			r.vus[i] = v
		}
	}
	// The driver's processors follow its load from here (procs.go).
	defer acquireProcs()()
	if err := r.openSessions(ctx); err != nil {
		return nil, err
	}
	var windowAt time.Time
	if o.Start != nil {
		released, err := o.Start.arrive(ctx, clk.Now())
		if err != nil {
			for _, v := range r.vus {
				v.close()
			}
			return nil, fmt.Errorf("wait for the runs measured together: %w", err)
		}
		windowAt = released.Add(o.Rampup)
	}
	if !o.StartAt.IsZero() {
		if err := waitUntil(ctx, clk, o.StartAt); err != nil {
			for _, v := range r.vus {
				v.close()
			}
			return nil, fmt.Errorf("wait for the shared start at %s: %w", o.StartAt.Format(time.RFC3339), err)
		}
		windowAt = o.StartAt.Add(o.Rampup)
	}
	if o.Mode == ModeTPCC {
		// The terminals' first cycles start now, after any shared start.
		r.pacer = newPacer(clk, r.gate, r.terminals, clk.Now())
	}

	// vuCtx ends in-flight transactions: canceled by Ctrl-C (ctx), at the
	// end of the grace period (abandon) or when a virtual user fails.
	vuCtx, abandon := context.WithCancel(ctx)
	defer abandon()
	r.abandonFn = abandon
	g, gctx := errgroup.WithContext(vuCtx)
	for _, v := range r.vus {
		g.Go(func() error {
			defer v.close()
			var err error
			switch {
			case v.stats.deferred != nil:
				err = v.deliver(gctx, r.queue)
			case r.pacer != nil:
				err = v.serve(gctx, r.pacer)
			default:
				err = v.loop(gctx)
			}
			if err != nil {
				// The others' calls may not watch gctx (dialect.Interrupter).
				r.stopVUs()
			}
			return err
		})
	}
	if r.pacer != nil {
		g.Go(func() error {
			r.pacer.run(gctx)
			return nil
		})
	}
	vusDone := make(chan struct{})
	var vuErr error
	go func() {
		vuErr = g.Wait()
		close(vusDone)
	}()
	if o.AnswerTimeout > 0 {
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			r.watchAnswers(vusDone)
		}()
		defer func() { <-watched }()
	}

	// schedCtx lets the runner cut the schedule short when it cannot read
	// the counters.
	schedCtx, cancelSched := context.WithCancel(ctx)
	defer cancelSched()
	r.cancelSched = cancelSched
	r.readCtx = ctx
	r.t0 = clk.Now()
	r.lastLine = r.t0
	r.liveMarks = []liveMark{{at: r.t0}}
	sched := schedule{clk: clk, rampup: o.Rampup, duration: o.Duration, grace: o.Grace, liveEvery: min(o.LiveEvery, time.Second), at: windowAt}
	notifyPhase(o.Recorder, PhaseRampup, o.VUs)
	sched.run(schedCtx, vusDone, r)
	<-vusDone
	notifyPhase(o.Recorder, PhaseDone, o.VUs)

	r.drainSeconds()
	res := r.res
	res.merge(r.stats(), meta.Warehouses)
	res.Outages = r.outages.list(clk.Now())
	res.findStalls(r.stats())
	if r.txc == nil && res.CountsFallback == "" {
		// No server counter: TPM counts what the driver completed.
		res.DBTransactions = res.completed()
		res.TPM = perMinute(res.DBTransactions, res.Window.Seconds)
	}
	res.neverNegative()
	if res.CountsFallback != "" {
		res.useDriverCounts()
	}
	if o.Paced() {
		res.mergePacing(r.stats(), r.pacer, r.terminalBytes)
	}
	if o.Mode == ModeTPCC {
		res.mergeDeferred(r.stats(), r.backlog, r.lateBacklog)
	}
	if n := res.DBTransactions; n > 0 {
		res.DriverCPUMicrosPerTx = res.DriverCPUSeconds * 1e6 / float64(n)
	} else if n := res.completed(); n > 0 && res.CountsFallback != "" {
		res.DriverCPUMicrosPerTx = res.DriverCPUSeconds * 1e6 / float64(n)
	}
	res.judgeFailures()
	res.judgeServer()
	res.Partial = !r.windowComplete
	if w := lagWarning(res); w != "" {
		res.Warnings = append(res.Warnings, w)
	}

	var errs []error
	if r.readErr != nil {
		errs = append(errs, r.readErr)
	}
	if vuErr != nil && !errors.Is(vuErr, context.Canceled) {
		errs = append(errs, fmt.Errorf("run stopped: %w", vuErr))
	}
	if len(errs) > 0 {
		res.Partial = true
	}
	if o.Mode == ModeTPCC {
		res.judgeSpec()
	}
	if len(errs) > 0 {
		return res, errors.Join(errs...)
	}
	return res, nil
}

// runner is the run's state outside the virtual users; its events
// methods are called from the schedule's goroutine only.
type runner struct {
	db     dialect.Database
	o      Options
	clk    clock
	liveFn func(Live)
	res    *Result

	vus  []*vu
	gate *gate

	// The tpc-c mode: the terminals, the pacer that schedules them, the
	// queue of deferred Deliveries, the memory set aside per terminal, and
	// the queue's backlog when the window ended.
	terminals            []*terminal
	pacer                *pacer
	queue                *deliveryQueue
	terminalBytes        float64
	backlog, lateBacklog int64

	conn        dialect.Conn // nil after a lost connection that could not be reopened
	txc         dialect.TxCounter
	ssr         dialect.ServerStartReader // nil when the dialect cannot tell a restart
	outages     outageLog
	readCtx     context.Context // the run's context; replaced by a fresh one once canceled
	readErr     error
	cancelSched context.CancelFunc
	abandonFn   context.CancelFunc

	t0             time.Time
	windowStarted  bool
	windowComplete bool
	startNOPM      int64
	startTx        int64
	startCPU       float64
	// serverStart is when the server had started, read at the window's
	// start (serverStartRead); a different one at its end is a restart.
	serverStart     time.Time
	serverStartRead bool

	lag lagMeter

	lastSample   time.Time
	secondMerged *hdrhistogram.Histogram

	// liveMarks are the counts at the live calls of the last LiveEvery
	// (the oldest at or before its start); lastLine the last Line.
	liveMarks []liveMark
	lastLine  time.Time

	// nopmWhere restricts the NOPM source to a shard's warehouses.
	nopmWhere string
	// group, for shard 0 of a sharded run, reads the counters of the
	// whole database at the window's edges (Result.Group).
	group *groupReader
}

func (r *runner) stats() []*vuStats {
	s := make([]*vuStats, len(r.vus))
	for i, v := range r.vus {
		s[i] = v.stats
	}
	return s
}

// setupTerminals creates the terminals of the tpc-c mode (ten per
// warehouse unless told otherwise, each with its home warehouse and
// district, TPC-C 4.2.2), measuring the memory they take, the sessions of
// the pool they share and the deferred-Delivery sessions.
func (r *runner) setupTerminals(rc tpcc.Constants, warehouses int) {
	o := r.o
	before := allocatedBytes()
	r.terminals = make([]*terminal, o.Terminals)
	for i := range r.terminals {
		r.terminals[i] = newTerminal(i, o.Terminals, o.Seed, rc, warehouses, false)
	}
	r.terminalBytes = float64(allocatedBytes()-before) / float64(o.Terminals)
	r.queue = newDeliveryQueue()
	for i := range o.Sessions {
		v := newVU(i, r.db, o, warehouses, r.clk, r.gate, &r.outages)
		v.role, v.queue = "session", r.queue
		r.vus = append(r.vus, v)
	}
	for i := range o.DeliverySessions {
		v := newVU(i, r.db, o, warehouses, r.clk, r.gate, &r.outages)
		v.role, v.stats.deferred = "delivery session", newDeferredStats()
		r.vus = append(r.vus, v)
	}
}

// allocatedBytes is the heap allocated by the process so far.
func allocatedBytes() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// openSessions opens every virtual user's session before the clock
// starts; on failure it closes those opened.
func (r *runner) openSessions(ctx context.Context) error {
	var g errgroup.Group
	g.SetLimit(openSessionsAtOnce)
	for _, v := range r.vus {
		g.Go(func() error {
			s, err := r.db.NewSession(ctx, r.o.Style)
			if err != nil {
				return fmt.Errorf("open the session of %s %d (%s): %w", v.role, v.id+1, r.o.Style, err)
			}
			v.setSession(s)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		for _, v := range r.vus {
			v.close()
		}
		return err
	}
	return nil
}

// counterCtx returns the context for reading counters: the run's own
// bounded by the answer timeout, or once that is canceled, a fresh one
// bounded by counterReadTimeout.
func (r *runner) counterCtx() (context.Context, context.CancelFunc) {
	if r.readCtx.Err() == nil {
		if r.o.AnswerTimeout > 0 {
			// A counter connection gone silent ends the read too.
			return context.WithTimeout(r.readCtx, r.o.AnswerTimeout)
		}
		return r.readCtx, func() {}
	}
	limit := counterReadTimeout
	if a := r.o.AnswerTimeout; a > 0 {
		limit = min(limit, a)
	}
	return context.WithTimeout(context.WithoutCancel(r.readCtx), limit)
}

// readCounters reads the NOPM source and, when the dialect has one, the
// server's transaction counter. Both are idempotent reads: after a lost
// connection each is tried once more (the counter connection reopened).
func (r *runner) readCounters(ctx context.Context) (nopm, tx int64, err error) {
	if r.conn == nil {
		conn, err := r.db.Connect(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("reconnect to read the counters: %w", err)
		}
		r.conn = conn
	}
	if nopm, err = r.readNOPM(ctx); err != nil && r.lostConnection(ctx, err) {
		_ = r.conn.Close()
		r.conn = nil
		conn, cerr := r.db.Connect(ctx)
		if cerr != nil {
			return 0, 0, fmt.Errorf("%w (reconnect: %w)", err, cerr)
		}
		r.conn = conn
		nopm, err = r.readNOPM(ctx)
	}
	if err != nil {
		return 0, 0, err
	}
	if r.txc == nil {
		return nopm, 0, nil
	}
	if tx, err = r.txc.TxCount(ctx); err != nil && r.lostConnection(ctx, err) {
		tx, err = r.txc.TxCount(ctx)
	}
	if err != nil {
		return 0, 0, err // the dialect says what it read
	}
	return nopm, tx, nil
}

func (r *runner) lostConnection(ctx context.Context, err error) bool {
	return ctx.Err() == nil && r.db.Classify(err) == dialect.ClassConnection
}

// readNOPM reads HammerDB's NOPM source: the sum of D_NEXT_O_ID grows by
// one per committed New-Order.
func (r *runner) readNOPM(ctx context.Context) (int64, error) {
	var n int64
	if r.group != nil {
		// Shard 0: its warehouses' and every warehouse's sums in one
		// statement, so both describe the same instant.
		sh := r.o.Shard
		q := fmt.Sprintf("SELECT SUM(CASE WHEN d_w_id BETWEEN %d AND %d THEN d_next_o_id ELSE 0 END), SUM(d_next_o_id) FROM district",
			sh.FirstWarehouse, sh.LastWarehouse)
		if err := r.conn.QueryRow(ctx, q).Scan(&n, &r.group.lastNO); err != nil {
			return 0, fmt.Errorf("read SUM(d_next_o_id) of warehouses %d-%d and of all: %w", sh.FirstWarehouse, sh.LastWarehouse, err)
		}
		return n, nil
	}
	if err := r.conn.QueryRow(ctx, "SELECT SUM(d_next_o_id) FROM district"+r.nopmWhere).Scan(&n); err != nil {
		return 0, fmt.Errorf("read SUM(d_next_o_id)%s: %w", r.nopmWhere, err)
	}
	return n, nil
}

// readStartCounters reads the counters at the window's start. A server
// that is away (an outage in the ramp-up) is waited for as long as the
// virtual users wait for it (ReconnectFor): the window starts once it is
// back.
func (r *runner) readStartCounters() (nopm, tx int64, err error) {
	deadline := r.clk.Now().Add(r.o.ReconnectFor)
	wait := reconnectBackoff
	for {
		ctx, cancel := r.counterCtx()
		nopm, tx, err = r.readCounters(ctx)
		cancel()
		if err == nil || r.readCtx.Err() != nil || r.db.Classify(err) != dialect.ClassConnection {
			return nopm, tx, err
		}
		left := deadline.Sub(r.clk.Now())
		if left <= 0 {
			return nopm, tx, err
		}
		wait = min(wait, left)
		c, stop := r.clk.NewTimer(wait)
		select {
		case <-c:
		case <-r.readCtx.Done():
		}
		stop()
		wait = min(2*wait, reconnectBackoffMax)
	}
}

// readServerStart reads when the server started, when the dialect can
// tell; ok is false when it cannot.
func (r *runner) readServerStart(ctx context.Context) (t time.Time, ok bool) {
	if r.ssr == nil {
		return time.Time{}, false
	}
	t, err := r.ssr.ServerStartTime(ctx)
	if err != nil && r.lostConnection(ctx, err) {
		t, err = r.ssr.ServerStartTime(ctx)
	}
	return t, err == nil
}

// serverStartSlack is how far two reads of an unchanged server's start
// time may differ: MariaDB gives it to the second (its clock less its
// Uptime, both truncated).
const serverStartSlack = time.Second

func (r *runner) startWindow(time.Time) {
	cpu := processCPUSeconds()
	readStart := r.clk.Now()
	nopm, tx, err := r.readStartCounters()
	if err != nil {
		r.readErr = fmt.Errorf("read counters at the start of the measured window: %w", err)
		r.cancelSched()
		return
	}
	ctx, cancel := r.counterCtx()
	defer cancel()
	r.serverStart, r.serverStartRead = r.readServerStart(ctx)
	if r.ssr != nil && !r.serverStartRead {
		r.res.Warnings = append(r.res.Warnings,
			"the server's start time could not be read at the start of the window: a restart inside it would go unnoticed")
	}
	if r.group != nil {
		r.group.start(ctx, r)
	}
	r.startNOPM, r.startTx, r.startCPU = nopm, tx, cpu
	procs.resetMax()
	now := r.clk.Now()
	r.res.Window.Start = now
	r.lastSample = now
	r.windowStarted = true
	r.gate.measuring.Store(true)
	notifyPhase(r.o.Recorder, PhaseMeasure, r.o.VUs)
	// From before the read to after the gate opened: whatever the virtual
	// users committed meanwhile may be counted on one side only.
	r.res.CounterReadSeconds += r.clk.Now().Sub(readStart).Seconds()
	r.lag.start()
}

func (r *runner) endWindow(_ time.Time, complete bool) {
	if !r.windowStarted {
		return
	}
	closing := r.clk.Now()
	r.gate.measuring.Store(false)
	now := r.clk.Now()
	r.lag.end()
	cpu := processCPUSeconds()
	r.sample(now, true)
	w := &r.res.Window
	w.End = now
	w.Seconds = now.Sub(w.Start).Seconds()
	r.windowComplete = complete
	r.res.DriverCPUSeconds = cpu - r.startCPU
	r.res.DriverProcs = procs.maxProcs()
	if w.Seconds > 0 {
		r.res.DriverCPUCores = r.res.DriverCPUSeconds / w.Seconds
	}
	if r.queue != nil {
		r.backlog, r.lateBacklog = r.queue.backlog(now, tpcc.DeferredDeliveryLimit)
	}
	r.res.SchedLagMaxMillis = r.lag.maxMillis()
	r.res.SchedLagMeanMillis = r.lag.meanMillis()

	ctx, cancel := r.counterCtx()
	defer cancel()
	nopm, tx, err := r.readCounters(ctx)
	if err == nil && r.group != nil {
		r.group.end(ctx, r)
	}
	restarted := false
	if err == nil && r.serverStartRead {
		if t, ok := r.readServerStart(ctx); ok {
			d := t.Sub(r.serverStart)
			restarted = d > serverStartSlack || d < -serverStartSlack
		}
	}
	r.res.CounterReadSeconds += r.clk.Now().Sub(closing).Seconds()
	res := r.res
	switch {
	case err != nil:
		res.CountsFallback = "the database's counters could not be read at the end of the window"
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v", res.CountsFallback, err))
		return
	case restarted:
		res.Group = nil
		res.ServerRestarted = true
		res.CountsFallback = "the server restarted inside the window (or reset every session after a crashed backend): its counters started again from zero"
		return
	}
	res.countersRead = true
	res.DBNewOrders = nopm - r.startNOPM
	if w.Seconds > 0 {
		res.NOPM = perMinute(res.DBNewOrders, w.Seconds)
		if r.txc != nil {
			res.DBTransactions = tx - r.startTx
			res.TPM = perMinute(res.DBTransactions, w.Seconds)
		}
	}
}

func (r *runner) second(now time.Time) { r.sample(now, false) }

// minSample is the shortest interval kept as its own sample; a shorter
// last one (the window's end a moment after a tick) joins the previous.
const minSample = 100 * time.Millisecond

// sample takes every virtual user's share of the current second.
func (r *runner) sample(now time.Time, last bool) {
	var c secondCounts
	r.secondMerged.Reset()
	for _, v := range r.vus {
		sc, h := v.stats.second.take()
		c.done += sc.done
		c.newOrders += sc.newOrders
		c.errors += sc.errors
		r.secondMerged.Merge(h)
	}
	interval := now.Sub(r.lastSample)
	r.lastSample = now
	series := r.res.Series
	if last && interval < minSample && len(series) > 0 {
		r.fold(c, interval)
		return
	}
	s := SecondSample{
		T:               now.Sub(r.res.Window.Start),
		IntervalSeconds: interval.Seconds(),
		Transactions:    c.done,
		NewOrders:       c.newOrders,
		Errors:          c.errors,
	}
	if r.secondMerged.TotalCount() > 0 {
		s.P50Micros = r.secondMerged.ValueAtQuantile(50)
		s.P99Micros = r.secondMerged.ValueAtQuantile(99)
	}
	s.rates()
	r.res.Series = append(series, s)
}

// fold adds counts to the last sample, keeping its percentiles.
func (r *runner) fold(c secondCounts, interval time.Duration) {
	series := r.res.Series
	if len(series) == 0 {
		return
	}
	s := &series[len(series)-1]
	s.T += interval
	s.IntervalSeconds += interval.Seconds()
	s.Transactions += c.done
	s.NewOrders += c.newOrders
	s.Errors += c.errors
	s.rates()
}

func (s *SecondSample) rates() {
	if s.IntervalSeconds > 0 {
		s.TPM = float64(s.Transactions) * 60 / s.IntervalSeconds
		s.NOPM = float64(s.NewOrders) * 60 / s.IntervalSeconds
	}
}

// drainSeconds folds into the last sample what virtual users recorded
// after the window's last sample was taken (a transaction that ended just
// before the window closed), so the series adds up to the totals.
func (r *runner) drainSeconds() {
	var c secondCounts
	for _, v := range r.vus {
		sc, _ := v.stats.second.take()
		c.done += sc.done
		c.newOrders += sc.newOrders
		c.errors += sc.errors
	}
	if c != (secondCounts{}) {
		r.fold(c, 0)
	}
}

func (r *runner) live(now time.Time, p Phase) {
	var done, no, errs int64
	for _, v := range r.vus {
		done += v.stats.live.done.Load()
		no += v.stats.live.newOrders.Load()
		errs += v.stats.live.errors.Load()
	}
	r.liveMarks = append(r.liveMarks, liveMark{at: now, done: done, no: no, errs: errs})
	// The base is the newest mark at least LiveEvery old, or the run's
	// start while it is younger.
	cut := now.Add(-r.o.LiveEvery)
	k := 0
	for k+1 < len(r.liveMarks)-1 && !r.liveMarks[k+1].at.After(cut) {
		k++
	}
	r.liveMarks = slices.Delete(r.liveMarks, 0, k)
	base := r.liveMarks[0]
	interval := now.Sub(base.at)
	l := Live{Elapsed: now.Sub(r.t0), Phase: p, Errors: errs - base.errs, Interval: interval}
	if m := interval.Minutes(); m > 0 {
		l.TPM = float64(done-base.done) / m
		l.NOPM = float64(no-base.no) / m
	}
	// A line per LiveEvery, allowing for a tick that comes a little early.
	if now.Sub(r.lastLine) >= r.o.LiveEvery-r.o.LiveEvery/20 {
		l.Line, r.lastLine = true, now
	}
	if r.liveFn != nil {
		r.liveFn(l)
	}
}

func (r *runner) stopStarting() {
	r.gate.stop()
	notifyPhase(r.o.Recorder, PhaseGrace, r.o.VUs)
}

func (r *runner) abandon() { r.stopVUs() }

// stopVUs cancels the virtual users' context, then interrupts the sessions
// whose calls do not watch it (dialect.Interrupter). It may be called from
// any goroutine, more than once.
func (r *runner) stopVUs() {
	r.abandonFn()
	for _, v := range r.vus {
		v.interrupt()
	}
}

// lagWarningPct is the uncertainty, in percent of TPM, above which a
// server counter's publication lag is worth a warning.
const lagWarningPct = 2.0

// lagWarning warns when the measured window is short next to the server
// counter's publication lag: the counter read at each edge may miss up to
// a lag's worth of transactions, so TPM from it is off by up to
// lag/window either way.
func lagWarning(res *Result) string {
	lag, w := res.TxCountLagSeconds, res.Window.Seconds
	if lag <= 0 || w <= 0 || res.TPMSource == DriverTPMSource || res.CountsFallback != "" {
		return ""
	}
	pct := 100 * lag / w
	if pct <= lagWarningPct {
		return ""
	}
	return fmt.Sprintf("TPM from %s may be off by up to ±%.0f%% in a %.0f s window: the server publishes its counts "+
		"up to %.0f s late; measure at least %.0f s (--duration) or read the driver's own TPM (%.0f)",
		res.TPMSource, pct, w, lag, 100*lag/lagWarningPct, res.DriverTPM)
}
