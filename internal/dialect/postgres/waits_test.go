package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

func TestClassifyWait(t *testing.T) {
	cases := []struct {
		state, typ, event string
		want              dialect.WaitClass
	}{
		{"active", "", "", dialect.WaitCPU},
		{"idle", "Client", "ClientRead", dialect.WaitIdle},
		{"idle in transaction", "Client", "ClientRead", dialect.WaitClient},
		{"active", "IO", "WALSync", dialect.WaitLogIO},
		{"active", "IO", "WALWrite", dialect.WaitLogIO},
		{"active", "IO", "DataFileRead", dialect.WaitDataIO},
		{"active", "Lock", "transactionid", dialect.WaitLock},
		{"active", "LWLock", "BufferContent", dialect.WaitLatch},
		{"active", "LWLock", "WALWrite", dialect.WaitLogIO},
		{"active", "Client", "ClientWrite", dialect.WaitClient},
		{"active", "IPC", "SyncRep", dialect.WaitLogIO},
		{"active", "IPC", "ProcArrayGroupUpdate", dialect.WaitOther},
		{"active", "Timeout", "PgSleep", dialect.WaitOther},
		{"active", "BufferPin", "BufferPin", dialect.WaitOther},
		{"disabled", "", "", dialect.WaitOther},
	}
	for _, c := range cases {
		t.Run(c.state+"/"+c.typ+":"+c.event, func(t *testing.T) {
			if got := classifyWait(c.state, c.typ, c.event); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// TestWaitProbeSeesLockWait holds a row lock on one connection, blocks a
// second one on it, and expects the probe to report the second as waiting
// on a lock and the first as idle in its transaction (client).
func TestWaitProbeSeesLockWait(t *testing.T) {
	d, _ := openTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	setup, err := d.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close(ctx)
	if _, err := setup.Exec(ctx, "CREATE TABLE waits_t (id int PRIMARY KEY, v int); INSERT INTO waits_t VALUES (1, 0)"); err != nil {
		t.Fatalf("create table: %v", err)
	}

	probe, err := d.OpenWaitProbe(ctx)
	if err != nil {
		t.Fatalf("open probe: %v", err)
	}
	defer probe.Close()
	before, err := probe.DBCounters(ctx)
	if err != nil {
		t.Fatalf("counters: %v", err)
	}
	for _, k := range []string{"xact_commit", "blks_hit", "wal_records", "wal_bytes", "checkpoints_timed", "deadlocks"} {
		if _, ok := before[k]; !ok {
			t.Errorf("counter %s missing from %v", k, before)
		}
	}

	holder, err := d.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	waiter, err := d.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close(ctx)
	if _, err := holder.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, "UPDATE waits_t SET v = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "UPDATE waits_t SET v = 2 WHERE id = 1")
		done <- err
	}()

	// Poll until the waiter is seen blocked (it needs a moment to reach
	// the lock); bounded by the context, not asserted on time.
	waiterPID, holderPID := int64(waiter.PgConn().PID()), int64(holder.PgConn().PID())
	var got map[int64]dialect.WaitSample
	for {
		ws, err := probe.SampleWaits(ctx)
		if err != nil {
			t.Fatalf("sample waits: %v", err)
		}
		got = map[int64]dialect.WaitSample{}
		for _, w := range ws {
			got[w.Session] = w
		}
		if got[waiterPID].Class == dialect.WaitLock || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if w := got[waiterPID]; w.Class != dialect.WaitLock || w.Event != "Lock:transactionid" {
		t.Errorf("waiter: got %v %q, want lock Lock:transactionid", w.Class, w.Event)
	}
	if w, ok := got[holderPID]; !ok || w.Class != dialect.WaitClient {
		t.Errorf("holder: got %v (present %v), want client (idle in transaction)", w.Class, ok)
	}
	if _, ok := got[int64(setup.PgConn().PID())]; !ok {
		t.Errorf("idle setup connection missing from samples %v", got)
	} else if c := got[int64(setup.PgConn().PID())].Class; c != dialect.WaitIdle {
		t.Errorf("setup connection: got %v, want idle", c)
	}
	if _, err := holder.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiter: %v", err)
	}

	// Backends publish their statistics when they exit: close the writers
	// and poll until the counters moved.
	holder.Close(ctx)
	waiter.Close(ctx)
	for {
		after, err := probe.DBCounters(ctx)
		if err != nil {
			t.Fatalf("counters: %v", err)
		}
		if after["xact_commit"] > before["xact_commit"] && after["wal_records"] > before["wal_records"] &&
			after["wal_bytes"] > before["wal_bytes"] {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("counters did not increase after writes: before %v, after %v", before, after)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
