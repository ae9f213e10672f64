package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

// The wait and interrupt tests lock the row of warehouse 1, which a
// Payment of that warehouse updates (TPC-C 2.5.2.2): lockRow by updating
// it (without changing it), lockFirst by reading it for update.
const (
	lockRow   = "UPDATE warehouse SET w_ytd = w_ytd WHERE w_id = 1"
	lockFirst = "SELECT w_id FROM warehouse WHERE w_id = 1 FOR UPDATE"
)

// pollEvery is how often a test polls for a session to reach a lock.
// MariaDB's INNODB_TRX is a cache refreshed only when it was not read in
// the last 100 ms: poll slower than that.
const pollEvery = 150 * time.Millisecond

// testWaits holds a row lock on one connection and blocks a second one on
// it: the probe must report the second as waiting on a lock, the first as
// idle in its transaction (client) and an idle connection as idle, and
// the counters must move (dialect.WaitSampler).
func testWaits(t *testing.T, db dialect.Database, d Dialect) {
	ws, ok := db.(dialect.WaitSampler)
	if !ok {
		t.Skipf("%s is not a dialect.WaitSampler", db.Name())
	}
	if d.SessionIDQuery == "" {
		t.Fatalf("%s is a dialect.WaitSampler: its conformance.Dialect needs a SessionIDQuery", db.Name())
	}
	ctx := subtestContext(t)
	probe, err := ws.OpenWaitProbe(ctx)
	if err != nil {
		t.Fatalf("open probe: %v", err)
	}
	defer probe.Close()
	t.Logf("wait source: %s", probe.WaitSource())
	before, err := probe.DBCounters(ctx)
	if err != nil {
		t.Fatalf("counters: %v", err)
	}
	for _, k := range append(d.Counters, d.GrowingCounters...) {
		if _, ok := before[k]; !ok {
			t.Errorf("counter %s missing from %v", k, before)
		}
	}

	connect := func() (dialect.Conn, int64) {
		c, err := db.Connect(ctx)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		return c, queryInt(ctx, t, c, d.SessionIDQuery)
	}
	idle, idleID := connect()
	defer idle.Close()
	holder, holderID := connect()
	defer holder.Close()
	waiter, waiterID := connect()
	defer waiter.Close()
	exec(ctx, t, holder, "BEGIN")
	exec(ctx, t, holder, lockRow)
	exec(ctx, t, waiter, "BEGIN")
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, lockRow)
		done <- err
	}()

	// Poll until the waiter is seen blocked and the holder idle in its
	// transaction (the holder shows as running its statement until the
	// server has finished it, a moment after the client has the reply);
	// bounded by the context, not asserted on time.
	var got map[int64]dialect.WaitSample
	for {
		samples, err := probe.SampleWaits(ctx)
		if err != nil {
			t.Fatalf("sample waits: %v (last samples %v)", err, got)
		}
		got = map[int64]dialect.WaitSample{}
		for _, w := range samples {
			got[w.Session] = w
		}
		if got[waiterID].Class == dialect.WaitLock && got[holderID].Class == dialect.WaitClient || ctx.Err() != nil {
			break
		}
		time.Sleep(pollEvery)
	}
	t.Logf("samples: %v (idle %d, holder %d, waiter %d)", got, idleID, holderID, waiterID)
	if w := got[waiterID]; w.Class != dialect.WaitLock || d.LockWaitEvent != "" && w.Event != d.LockWaitEvent {
		t.Errorf("waiter: got %v %q, want lock %q", w.Class, w.Event, d.LockWaitEvent)
	}
	if w, ok := got[holderID]; !ok || w.Class != dialect.WaitClient {
		t.Errorf("holder: got %v (present %v), want client (idle in a transaction)", w.Class, ok)
	}
	if w, ok := got[idleID]; !ok || w.Class != dialect.WaitIdle {
		t.Errorf("idle connection: got %v (present %v), want idle", w.Class, ok)
	}
	exec(ctx, t, holder, "COMMIT")
	if err := <-done; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	exec(ctx, t, waiter, "COMMIT")

	// Some engines publish a session's statistics when it ends: close the
	// writers and poll until the counters moved.
	holder.Close()
	waiter.Close()
	for {
		after, err := probe.DBCounters(ctx)
		if err != nil {
			t.Fatalf("counters: %v", err)
		}
		grown := true
		for _, k := range d.GrowingCounters {
			grown = grown && after[k] > before[k]
		}
		if grown {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("counters %v did not grow: before %v, after %v", d.GrowingCounters, before, after)
		}
		time.Sleep(pollEvery)
	}
}

// waitForLockWait polls the probe until some session waits on a lock.
func waitForLockWait(ctx context.Context, t *testing.T, probe dialect.WaitProbe) {
	t.Helper()
	for {
		samples, err := probe.SampleWaits(ctx)
		if err != nil {
			t.Fatalf("sample waits: %v", err)
		}
		for _, w := range samples {
			if w.Class == dialect.WaitLock {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("no session waited on a lock: %v", ctx.Err())
		}
		time.Sleep(pollEvery)
	}
}

// WaitCase is one engine state, as a dialect's wait mapping reads it (for
// PostgreSQL: state, wait_event_type, wait_event), and the class the
// mapping must give it.
type WaitCase struct {
	State [3]string
	Want  dialect.WaitClass
}

// CheckWaitClasses checks a dialect's mapping of engine states onto the
// common wait classes (its waits.go data) against cases.
func CheckWaitClasses(t *testing.T, classify func(a, b, c string) dialect.WaitClass, cases []WaitCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.State[0]+"/"+c.State[1]+"/"+c.State[2], func(t *testing.T) {
			if got := classify(c.State[0], c.State[1], c.State[2]); got != c.Want {
				t.Errorf("classify(%q, %q, %q) = %v, want %v", c.State[0], c.State[1], c.State[2], got, c.Want)
			}
		})
	}
}
