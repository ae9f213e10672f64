// Package tpchdriver runs the tests of TPC-H clause 5 on a database that
// holds oltplab's TPC-H schema (internal/tpchload): the power test (RF1,
// query stream 0, RF2; clause 5.3.3) and the throughput test (S query
// streams and a refresh stream of S pairs of RF1 and RF2, at once; clause
// 5.3.4), each query and refresh function timed as clause 5.3.7 says, and
// the numerical quantities of clause 5.4 computed from them (tpch.Power,
// Throughput, QphH). The figures are TPROC-H style: measured as the
// specification measures them, never audited, and never a TPC-H result.
//
// It sees the database only through dialect.TPCH: queries and refresh
// functions run on dialect.TPCHSessions, whose statements stop on the
// server when their context ends (a query timeout, Ctrl-C).
//
// It must not import internal/store, internal/scenario, internal/cli or
// a dialect package.
package tpchdriver

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchload"
)

// Test is which tests of clause 5 run.
type Test string

const (
	// Power is the power test alone (Power@Size).
	Power Test = "power"
	// Throughput is the throughput test alone (Throughput@Size).
	Throughput Test = "throughput"
	// Both is the performance test of clause 5.3.2: the power test, then
	// the throughput test (and QphH@Size).
	Both Test = "both"
)

// ParseTest reads a Test.
func ParseTest(s string) (Test, error) {
	switch t := Test(s); t {
	case Power, Throughput, Both:
		return t, nil
	}
	return "", fmt.Errorf("test %q: want power, throughput or both", s)
}

func (t Test) String() string { return string(t) }

// UnmarshalText reads a Test (flags, plan files).
func (t *Test) UnmarshalText(b []byte) error {
	v, err := ParseTest(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// MarshalText writes a Test.
func (t Test) MarshalText() ([]byte, error) { return []byte(t), nil }

// HasPower reports whether the test includes the power test.
func (t Test) HasPower() bool { return t == Power || t == Both }

// HasThroughput reports whether the test includes the throughput test.
func (t Test) HasThroughput() bool { return t == Throughput || t == Both }

// Options are the parameters of one run of the tests.
type Options struct {
	Test Test
	// Streams is S, the throughput test's query streams.
	Streams int
	// Seed is the qgen seed of stream 0 (stream s uses tpch.StreamSeed);
	// 0 takes the one the build recorded (clause 2.1.3.3).
	Seed int64
	// Validation runs every stream with the validation parameters of
	// clause 2.4.N.4 (qgen -d) instead of drawn ones.
	Validation bool
	// QueryTimeout cuts off a query that runs longer (0: none); it is
	// recorded as timed out, never as a time.
	QueryTimeout time.Duration
	// Origin is the instant times are counted from (the samplers' start);
	// zero: the start of Run.
	Origin time.Time
	// Observe, when set, is told of every query and refresh function as
	// it ends, from the goroutine of its stream (several at once in the
	// throughput test).
	Observe func(Event)
	// Answer, when set, receives the rows of every query that completed,
	// from the goroutine of its stream.
	Answer func(stream, query int, rows [][]string)
}

// Event is a query or a refresh function that ended.
type Event struct {
	Test    Test
	Query   *tpch.QueryTime   // nil for a refresh function
	Refresh *tpch.RefreshTime // nil for a query
}

// Validate checks the options.
func (o Options) Validate() error {
	if _, err := ParseTest(string(o.Test)); err != nil {
		return err
	}
	if o.Test.HasThroughput() && o.Streams < 1 {
		return fmt.Errorf("streams: the throughput test needs at least 1 query stream, got %d", o.Streams)
	}
	if o.Streams > maxStreams {
		return fmt.Errorf("streams: at most %d, got %d", maxStreams, o.Streams)
	}
	if o.Seed < 0 || o.Seed >= 1<<31-1 {
		return fmt.Errorf("seed %d: want 1..%d (qgen's range), or 0 for the build's", o.Seed, 1<<31-2)
	}
	if o.QueryTimeout < 0 {
		return fmt.Errorf("query timeout %s: want 0 (none) or more", o.QueryTimeout)
	}
	return nil
}

// maxStreams bounds S: each stream is a connection and a query at a time.
const maxStreams = 256

// Result is what a run of the tests measured.
type Result struct {
	Dialect string `json:"dialect"`
	Scale   string `json:"scale"`
	Test    Test   `json:"test"`
	// Streams is S (0 without a throughput test).
	Streams    int   `json:"streams"`
	Seed       int64 `json:"seed"`
	Validation bool  `json:"validation_params,omitempty"`
	// QueryTimeoutSeconds is the query timeout (0: none).
	QueryTimeoutSeconds float64                `json:"query_timeout_seconds,omitempty"`
	Power               *tpch.PowerResult      `json:"power,omitempty"`
	Throughput          *tpch.ThroughputResult `json:"throughput,omitempty"`
	// QphH is QphH@Size (clause 5.4.3) of a performance test whose power
	// and throughput figures both exist; QphHAbsent says why not otherwise.
	QphH       *float64 `json:"qphh_at_size,omitempty"`
	QphHAbsent string   `json:"qphh_absent,omitempty"`
	// Notes say how the run departs from a TPC-H result.
	Notes []string `json:"notes,omitempty"`
	// Interrupted: the run was canceled before it ended.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Complete reports whether every query and refresh function of the run
// was timed.
func (r Result) Complete() bool {
	if r.Power != nil && r.Power.Power == nil {
		return false
	}
	if r.Throughput != nil && r.Throughput.Throughput == nil {
		return false
	}
	return r.Power != nil || r.Throughput != nil
}

// Label is what every figure of a run is: measured as the specification
// measures it, not audited.
const Label = "TPROC-H style figures (measured as TPC-H clause 5.4 defines them), not an audited TPC-H result"

// Run runs the tests o asks for on db and returns what they measured. An
// error is returned when the tests could not start (no schema, too few
// update sets left, no connection); what ends in them (a query that
// failed or timed out, Ctrl-C) is in the result, and ctx's error is
// returned with it when canceled.
func Run(ctx context.Context, db dialect.Database, o Options) (Result, error) {
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	h, ok := db.(dialect.TPCH)
	if !ok {
		return Result{}, fmt.Errorf("%s: %w", db.Name(), tpchload.ErrNoTPCH)
	}
	m, err := tpchload.ReadMeta(ctx, db)
	if err != nil {
		return Result{}, err
	}
	res := Result{Dialect: db.Name(), Scale: m.Scale.String(), Test: o.Test, Seed: o.Seed, Validation: o.Validation,
		QueryTimeoutSeconds: o.QueryTimeout.Seconds()}
	if res.Seed == 0 {
		res.Seed = m.QGenSeed
	}
	if o.Test.HasThroughput() {
		res.Streams = o.Streams
	}
	res.Notes = notes(m.Scale, o, res.Streams)

	p, err := prepare(m, h.TPCHFlavor(), o, res.Seed, res.Streams)
	if err != nil {
		return res, err
	}
	origin := o.Origin
	if origin.IsZero() {
		origin = time.Now()
	}
	r := &runner{h: h, o: o, origin: origin, meta: m}
	if o.Test.HasPower() {
		pw, err := r.power(ctx, p)
		res.Power = &pw
		res.Power.Finish(m.Scale)
		if err != nil {
			res.Interrupted = ctx.Err() != nil
			return res, err
		}
	}
	if o.Test.HasThroughput() {
		tr, err := r.throughput(ctx, p)
		res.Throughput = &tr
		res.Throughput.Finish(m.Scale)
		if err != nil {
			res.Interrupted = ctx.Err() != nil
			return res, err
		}
	}
	res.finish()
	return res, nil
}

// finish computes QphH@Size.
func (r *Result) finish() {
	switch {
	case r.Test != Both:
		r.QphHAbsent = "not computed: QphH@Size needs a power and a throughput test in one run (--test both)"
	case r.Power == nil || r.Power.Power == nil:
		r.QphHAbsent = "not computed: the power test has no Power@Size"
	case r.Throughput == nil || r.Throughput.Throughput == nil:
		r.QphHAbsent = "not computed: the throughput test has no Throughput@Size"
	default:
		q := tpch.QphH(*r.Power.Power, *r.Throughput.Throughput)
		r.QphH = &q
	}
}

// notes say how a run departs from what a TPC-H result requires.
func notes(s tpch.Scale, o Options, streams int) []string {
	out := []string{Label + "."}
	if min, listed := s.MinStreams(); !listed {
		out = append(out, fmt.Sprintf("SF %s is not a scale factor TPC-H allows (clause 4.1.3.1: 1, 10, 30, 100, ...): figures compare only with runs at SF %s.", s, s))
	} else if o.Test.HasThroughput() && streams < min {
		out = append(out, fmt.Sprintf("%d query stream(s): clause 5.3.4 asks for at least %d at SF %s; oltplab runs any number (TPROC-H).", streams, min, s))
	}
	if o.Validation {
		out = append(out, "Every stream used the validation parameters of clause 2.4.N.4 (qgen -d), not drawn ones.")
	}
	if o.QueryTimeout > 0 {
		out = append(out, fmt.Sprintf("Queries were cut off after %s; a query cut off has no time and leaves the figures it enters absent.", o.QueryTimeout))
	}
	return out
}

// prepared is everything a run needs before its clock starts: each
// stream's rendered queries and the refresh functions' statements, with
// the metadata updates that go into their transactions.
type prepared struct {
	streams map[int][]query // by stream number
	rf1     map[int]tpch.RF1
	rf2     map[int]tpch.RF2
	// rf2Lines is the LINEITEM rows each set's RF2 deletes.
	rf2Lines map[int]int64
	// powerSet and throughputSets are the update sets of each test,
	// counted from the last ones applied before the run (base1 for RF1,
	// base2 for RF2).
	powerSet       int
	throughputSets []int
	base1, base2   int
}

// query is one query of a stream, rendered.
type query struct {
	params tpch.Params
	text   tpch.Query
}

// prepare draws each stream's parameters and renders its queries, and
// generates the update sets the refresh functions apply: the next unused
// ones (the metadata counts those applied), one for the power test and S
// for the throughput test. dbgen's text pool, which the update sets'
// comments come from, is let go before the tests start.
func prepare(m tpchload.Meta, f tpch.Flavor, o Options, seed int64, streams int) (*prepared, error) {
	p := &prepared{streams: map[int][]query{}, rf1: map[int]tpch.RF1{}, rf2: map[int]tpch.RF2{}, rf2Lines: map[int]int64{},
		base1: m.RF1Sets, base2: m.RF2Sets}
	var list []int
	if o.Test.HasPower() {
		list = append(list, 0)
	}
	if o.Test.HasThroughput() {
		for s := 1; s <= streams; s++ {
			list = append(list, s)
		}
	}
	for _, s := range list {
		g, err := tpch.NewQGen(tpch.StreamSeed(seed, s), m.Scale)
		if err != nil {
			return nil, err
		}
		for _, q := range tpch.StreamQueries(s) {
			var ps tpch.Params
			if o.Validation {
				ps, err = tpch.ValidationParams(q, m.Scale)
			} else {
				ps, err = g.Params(q)
			}
			if err != nil {
				return nil, err
			}
			text, err := ps.Render(f, s)
			if err != nil {
				return nil, err
			}
			p.streams[s] = append(p.streams[s], query{params: ps, text: text})
		}
	}
	sets := 0
	if o.Test.HasPower() {
		sets++
	}
	if o.Test.HasThroughput() {
		sets += streams
	}
	// RF1 and RF2 each take the set after the last they applied: after a
	// run cut between them, they are one set apart.
	g := tpch.NewGenerator(m.Scale)
	for i := 1; i <= sets; i++ {
		u1, u2 := m.RF1Sets+i, m.RF2Sets+i
		rf1, err := g.RF1Statements(u1, f)
		if err != nil {
			return nil, fmt.Errorf("%w (the database has had %d refresh function pairs since its build; rebuild it with --drop for more)", err, m.RF2Sets)
		}
		rf2, err := m.Scale.RF2Statements(u2)
		if err != nil {
			return nil, fmt.Errorf("%w (the database has had %d refresh function pairs since its build; rebuild it with --drop for more)", err, m.RF2Sets)
		}
		lines, err := g.RefreshLinesDeleted(u2)
		if err != nil {
			return nil, err
		}
		p.rf1[u1], p.rf2[u2], p.rf2Lines[u2] = rf1, rf2, lines
		if i == 1 && o.Test.HasPower() {
			p.powerSet = i
		} else {
			p.throughputSets = append(p.throughputSets, i)
		}
	}
	// The text pool (300 MiB) goes with the last generator: the tests
	// measure the database, not oltplab's memory.
	g = nil
	runtime.GC()
	debug.FreeOSMemory()
	return p, nil
}

// runner runs the tests on one database.
type runner struct {
	h      dialect.TPCH
	o      Options
	origin time.Time
	// meta is the metadata as the refresh functions left it so far
	// (only the refresh stream changes it, one function at a time).
	meta tpchload.Meta
}

func (r *runner) millis(t time.Time) int64 { return t.Sub(r.origin).Milliseconds() }

// power runs the power test: RF1, stream 0, RF2, one after the other.
func (r *runner) power(ctx context.Context, p *prepared) (tpch.PowerResult, error) {
	out := tpch.PowerResult{StartMillis: r.millis(time.Now()),
		RF1:    tpch.RefreshTime{Function: 1, Set: p.base1 + p.powerSet, Outcome: tpch.NotRun},
		RF2:    tpch.RefreshTime{Function: 2, Set: p.base2 + p.powerSet, Outcome: tpch.NotRun},
		Stream: r.notRun(0, p)}
	refresh, err := r.h.NewTPCHSession(ctx)
	if err != nil {
		return out, fmt.Errorf("open the refresh stream's connection: %w", err)
	}
	defer refresh.Close()
	qs, err := r.h.NewTPCHSession(ctx)
	if err != nil {
		return out, fmt.Errorf("open query stream 0's connection: %w", err)
	}
	defer qs.Close()

	out.RF1 = r.rf1(ctx, refresh, p, out.RF1.Set, Power)
	if err := ctx.Err(); err != nil {
		out.EndMillis = r.millis(time.Now())
		return out, err
	}
	out.Stream = r.stream(ctx, qs, 0, p, Power)
	if err := ctx.Err(); err != nil {
		out.EndMillis = r.millis(time.Now())
		return out, err
	}
	out.RF2 = r.rf2(ctx, refresh, p, out.RF2.Set, Power)
	out.EndMillis = r.millis(time.Now())
	return out, ctx.Err()
}

// throughput runs the throughput test: S query streams and the refresh
// stream, started together; the refresh stream runs its S pairs one
// after the other from the start (clause 5.3.4 leaves their schedule to
// the sponsor). Ts runs from the first submission to the last end.
func (r *runner) throughput(ctx context.Context, p *prepared) (tpch.ThroughputResult, error) {
	var out tpch.ThroughputResult
	sessions := make([]dialect.TPCHSession, len(p.throughputSets)+1)
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
	}()
	for i := range sessions {
		s, err := r.h.NewTPCHSession(ctx)
		if err != nil {
			return out, fmt.Errorf("open the throughput test's connection %d of %d: %w", i+1, len(sessions), err)
		}
		sessions[i] = s
	}
	S := len(p.throughputSets)
	out.Streams = make([]tpch.StreamResult, S)
	for i := range out.Streams {
		out.Streams[i] = r.notRun(i+1, p)
	}
	var wg sync.WaitGroup
	start := time.Now()
	out.StartMillis = r.millis(start)
	for i := range S {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out.Streams[i] = r.stream(ctx, sessions[i+1], i+1, p, Throughput)
		}()
	}
	for _, i := range p.throughputSets {
		if ctx.Err() != nil {
			break
		}
		out.Refresh = append(out.Refresh, r.rf1(ctx, sessions[0], p, p.base1+i, Throughput))
		if ctx.Err() != nil {
			break
		}
		out.Refresh = append(out.Refresh, r.rf2(ctx, sessions[0], p, p.base2+i, Throughput))
	}
	wg.Wait()
	end := time.Now()
	out.EndMillis = r.millis(end)
	// Ts: the first submission (the streams and the refresh stream start
	// together) to the last end, whichever stream it was in.
	last := start
	for _, st := range out.Streams {
		if e := r.origin.Add(time.Duration(st.EndMillis) * time.Millisecond); e.After(last) {
			last = e
		}
	}
	for _, rf := range out.Refresh {
		if e := r.origin.Add(time.Duration(rf.StartMillis)*time.Millisecond + time.Duration(rf.Seconds*float64(time.Second))); e.After(last) {
			last = e
		}
	}
	out.Seconds = end.Sub(start).Seconds()
	if l := last.Sub(start).Seconds(); l < out.Seconds {
		out.Seconds = l
	}
	return out, ctx.Err()
}

// notRun is stream s with none of its queries run yet.
func (r *runner) notRun(s int, p *prepared) tpch.StreamResult {
	st := tpch.StreamResult{Stream: s, Seed: tpch.StreamSeed(r.seed(), s)}
	for i, q := range p.streams[s] {
		st.Queries = append(st.Queries, tpch.QueryTime{Stream: s, Query: q.params.Query, Position: i + 1,
			Params: q.params.Values, Outcome: tpch.NotRun})
	}
	return st
}

func (r *runner) seed() int64 {
	if r.o.Seed != 0 {
		return r.o.Seed
	}
	return r.meta.QGenSeed
}

// stream runs stream s's 22 queries on sess, in its order. A query that
// fails or times out leaves the stream going on with the next; an
// interruption leaves the rest not run.
func (r *runner) stream(ctx context.Context, sess dialect.TPCHSession, s int, p *prepared, t Test) tpch.StreamResult {
	out := r.notRun(s, p)
	begin := time.Now()
	out.StartMillis = r.millis(begin)
	for i, q := range p.streams[s] {
		if ctx.Err() != nil {
			break
		}
		qt := &out.Queries[i]
		r.runQuery(ctx, sess, q, qt)
		if r.o.Observe != nil {
			r.o.Observe(Event{Test: t, Query: qt})
		}
	}
	out.EndMillis = r.millis(time.Now())
	return out
}

// teardownTimeout bounds the statements that undo a query's setup (Q15's
// view) after the query itself was cut off.
const teardownTimeout = 30 * time.Second

// runQuery runs one query, its setup and teardown statements included in
// its timing interval (Q15 creates and drops its view), with the query
// timeout.
func (r *runner) runQuery(ctx context.Context, sess dialect.TPCHSession, q query, qt *tpch.QueryTime) {
	qctx, cancel := ctx, context.CancelFunc(func() {})
	if r.o.QueryTimeout > 0 {
		qctx, cancel = context.WithTimeout(ctx, r.o.QueryTimeout)
	}
	defer cancel()
	start := time.Now()
	qt.StartMillis = r.millis(start)
	var rows [][]string
	err := func() error {
		for _, st := range q.text.Setup {
			if err := sess.Exec(qctx, st); err != nil {
				return err
			}
		}
		var err error
		rows, err = sess.Query(qctx, q.text.Text)
		return err
	}()
	// The teardown runs even after a failure, on its own clock when the
	// query's ended: a view left behind would fail the next Q15.
	for _, st := range q.text.Teardown {
		tctx := qctx
		if qctx.Err() != nil {
			var tcancel context.CancelFunc
			tctx, tcancel = context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
			defer tcancel()
		}
		if terr := sess.Exec(tctx, st); terr != nil && err == nil {
			err = terr
		}
	}
	took := time.Since(start)
	switch {
	case err == nil:
		qt.Outcome, qt.Seconds, qt.Interval, qt.Rows = tpch.Done, took.Seconds(), tpch.Interval(took.Seconds()), len(rows)
		if r.o.Answer != nil {
			r.o.Answer(qt.Stream, qt.Query, rows)
		}
	case ctx.Err() != nil:
		qt.Outcome = tpch.Canceled
	case errors.Is(qctx.Err(), context.DeadlineExceeded):
		qt.Outcome = tpch.TimedOut
		qt.Error = fmt.Sprintf("cut off after %s", r.o.QueryTimeout)
	default:
		qt.Outcome, qt.Error = tpch.Failed, err.Error()
	}
}

// rf1 runs RF1 of set u on sess, in one transaction with its metadata.
func (r *runner) rf1(ctx context.Context, sess dialect.TPCHSession, p *prepared, u int, t Test) tpch.RefreshTime {
	rf := p.rf1[u]
	out := tpch.RefreshTime{Function: 1, Set: u, Orders: rf.Orders, LineItems: rf.LineItem}
	record, next := r.meta.RF1Recorded(u, rf.Orders, rf.LineItem)
	r.refresh(ctx, sess, append(rf.Statements[:len(rf.Statements):len(rf.Statements)], record...), &out, func(rows []int64) error {
		r.meta = next
		return nil
	})
	if r.o.Observe != nil {
		r.o.Observe(Event{Test: t, Refresh: &out})
	}
	return out
}

// rf2 runs RF2 of set u on sess, in one transaction with its metadata.
func (r *runner) rf2(ctx context.Context, sess dialect.TPCHSession, p *prepared, u int, t Test) tpch.RefreshTime {
	rf := p.rf2[u]
	lines := p.rf2Lines[u]
	out := tpch.RefreshTime{Function: 2, Set: u, Orders: rf.Orders, LineItems: lines}
	record, next := r.meta.RF2Recorded(u, rf.Orders, lines)
	r.refresh(ctx, sess, append(rf.Statements[:len(rf.Statements):len(rf.Statements)], record...), &out, func(rows []int64) error {
		r.meta = next
		// The deletes' counts: line items on even statements, orders on odd.
		var gotOrders, gotLines int64
		for i := range rf.Statements {
			if i%2 == 0 {
				gotLines += rows[i]
			} else {
				gotOrders += rows[i]
			}
		}
		if gotOrders != rf.Orders || gotLines != lines {
			return fmt.Errorf("deleted %d orders and %d line items, the set has %d and %d: the database is not as its metadata says (check it with oltplab tpch check)",
				gotOrders, gotLines, rf.Orders, lines)
		}
		return nil
	})
	if r.o.Observe != nil {
		r.o.Observe(Event{Test: t, Refresh: &out})
	}
	return out
}

// refresh runs one refresh function's transaction and times it.
func (r *runner) refresh(ctx context.Context, sess dialect.TPCHSession, stmts []string, out *tpch.RefreshTime, committed func([]int64) error) {
	start := time.Now()
	out.StartMillis = r.millis(start)
	rows, err := sess.ExecTx(ctx, stmts)
	took := time.Since(start)
	if err == nil {
		err = committed(rows)
	}
	switch {
	case err == nil:
		out.Outcome, out.Seconds, out.Interval = tpch.Done, took.Seconds(), tpch.Interval(took.Seconds())
	case ctx.Err() != nil:
		out.Outcome = tpch.Canceled
	default:
		out.Outcome, out.Error = tpch.Failed, err.Error()
	}
}

// Qualify runs the 22 queries once, in stream 0's order, with the
// validation parameters of clause 2.4.N.4 and no refresh function, as the
// query validation of clause 2.3 does on the qualification database: each
// query's answer goes to o.Answer, to be compared with the reference's. Of
// o it takes QueryTimeout, Observe and Answer.
func Qualify(ctx context.Context, db dialect.Database, o Options) (tpch.StreamResult, error) {
	h, ok := db.(dialect.TPCH)
	if !ok {
		return tpch.StreamResult{}, fmt.Errorf("%s: %w", db.Name(), tpchload.ErrNoTPCH)
	}
	m, err := tpchload.ReadMeta(ctx, db)
	if err != nil {
		return tpch.StreamResult{}, err
	}
	q := Options{Test: Power, Validation: true, QueryTimeout: o.QueryTimeout, Observe: o.Observe, Answer: o.Answer}
	p := &prepared{streams: map[int][]query{}}
	f := h.TPCHFlavor()
	for _, n := range tpch.StreamQueries(0) {
		ps, err := tpch.ValidationParams(n, m.Scale)
		if err != nil {
			return tpch.StreamResult{}, err
		}
		text, err := ps.Render(f, 0)
		if err != nil {
			return tpch.StreamResult{}, err
		}
		p.streams[0] = append(p.streams[0], query{params: ps, text: text})
	}
	s, err := h.NewTPCHSession(ctx)
	if err != nil {
		return tpch.StreamResult{}, err
	}
	defer s.Close()
	r := &runner{h: h, o: q, origin: time.Now(), meta: m}
	out := r.stream(ctx, s, 0, p, Power)
	out.Seed = 0
	return out, ctx.Err()
}
