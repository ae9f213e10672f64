package mysql

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

func TestClassifyWait(t *testing.T) {
	cases := []struct {
		command, trx, event string
		want                dialect.WaitClass
	}{
		{"Sleep", "", "", dialect.WaitIdle},
		{"Sleep", "RUNNING", "", dialect.WaitClient},
		{"Query", "LOCK WAIT", "", dialect.WaitLock},
		{"Execute", "LOCK WAIT", "wait/synch/cond/innodb/lock_wait", dialect.WaitLock},
		{"Query", "RUNNING", "", dialect.WaitCPU},
		{"Query", "", "wait/io/file/innodb/innodb_log_file", dialect.WaitLogIO},
		{"Query", "", "wait/io/file/sql/binlog", dialect.WaitLogIO},
		{"Query", "", "wait/io/file/innodb/innodb_data_file", dialect.WaitDataIO},
		{"Query", "", "wait/io/socket/sql/client_connection", dialect.WaitClient},
		{"Query", "", "wait/lock/metadata/sql/mdl", dialect.WaitLock},
		{"Query", "", "wait/synch/mutex/innodb/buf_pool_mutex", dialect.WaitLatch},
		{"Query", "", "wait/io/table/sql/handler", dialect.WaitCPU},
		{"Binlog Dump", "", "", dialect.WaitOther},
	}
	for _, c := range cases {
		t.Run(c.command+"/"+c.trx+"/"+c.event, func(t *testing.T) {
			if got := classifyWait(c.command, c.trx, c.event); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func connID(ctx context.Context, t *testing.T, c *sql.Conn) int64 {
	t.Helper()
	var id int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestWaitProbeSeesRowLockWait blocks one connection on a row another
// holds: the probe reports it as a lock wait and Innodb_row_lock_waits
// goes up.
func TestWaitProbeSeesRowLockWait(t *testing.T) {
	d, _ := openTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := d.db.ExecContext(ctx, "CREATE TABLE waits_t (id int PRIMARY KEY, v int) ENGINE=InnoDB"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	if _, err := d.db.ExecContext(ctx, "INSERT INTO waits_t VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}

	probe, err := d.OpenWaitProbe(ctx)
	if err != nil {
		t.Fatalf("open probe: %v", err)
	}
	defer probe.Close()
	t.Logf("wait source: %s", probe.WaitSource())
	before, err := probe.DBCounters(ctx)
	if err != nil {
		t.Fatalf("counters: %v", err)
	}
	for _, k := range []string{"innodb_row_lock_waits", "innodb_row_lock_time_ms", "innodb_log_waits",
		"innodb_data_fsyncs", "innodb_buffer_pool_reads",
		"innodb_buffer_pool_read_requests", "innodb_data_read_bytes", "innodb_data_written_bytes"} {
		if _, ok := before[k]; !ok {
			t.Errorf("counter %s missing from %v", k, before)
		}
	}

	holder, err := d.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	waiter, err := d.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	holderID, waiterID := connID(ctx, t, holder), connID(ctx, t, waiter)
	// The pool may hand out a connection a test left with a short timeout.
	if _, err := waiter.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 50"); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, "UPDATE waits_t SET v = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(ctx, "UPDATE waits_t SET v = 2 WHERE id = 1")
		done <- err
	}()

	var got map[int64]dialect.WaitSample
	for {
		ws, err := probe.SampleWaits(ctx)
		if err != nil {
			t.Fatalf("sample waits: %v (last samples %v, holder %d, waiter %d)", err, got, holderID, waiterID)
		}
		got = map[int64]dialect.WaitSample{}
		for _, w := range ws {
			got[w.Session] = w
		}
		// The holder shows as running its UPDATE until the server has
		// finished the statement, a moment after the client has the reply.
		if got[waiterID].Class == dialect.WaitLock && got[holderID].Class == dialect.WaitClient || ctx.Err() != nil {
			break
		}
		// INNODB_TRX is a cache InnoDB refreshes only when it was not read
		// in the last 100 ms: poll slower than that.
		time.Sleep(150 * time.Millisecond)
	}
	t.Logf("samples: %v (holder %d, waiter %d)", got, holderID, waiterID)
	if w := got[waiterID]; w.Class != dialect.WaitLock {
		t.Errorf("waiter: got %v %q, want lock", w.Class, w.Event)
	}
	if w, ok := got[holderID]; !ok || w.Class != dialect.WaitClient {
		t.Errorf("holder: got %v (present %v), want client (idle in a transaction)", w.Class, ok)
	}
	if _, err := holder.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	after, err := probe.DBCounters(ctx)
	if err != nil {
		t.Fatalf("counters: %v", err)
	}
	if g, b := after["innodb_row_lock_waits"], before["innodb_row_lock_waits"]; g <= b {
		t.Errorf("innodb_row_lock_waits: got %v after the wait, want more than %v", g, b)
	}
}

// TestWaitSource: performance_schema ON with the events_waits_current
// consumer off was reported as "performance_schema off".
func TestWaitSource(t *testing.T) {
	for _, c := range []struct {
		name     string
		psOn     bool
		enabled  string
		err      error
		wantSQL  string
		want     string
		wantNone string
	}{
		{"performance_schema off", false, "", nil, waitsSQL, "performance_schema off", "consumer"},
		{"consumer off", true, "NO", nil, waitsSQL, "performance_schema on, but its events_waits_current consumer is off", "performance_schema off"},
		{"consumer unreadable", true, "", errors.New("SELECT command denied"), waitsSQL, "could not be read: SELECT command denied", "performance_schema off"},
		{"consumer on", true, "YES", nil, waitsPSSQL, "with performance_schema.events_waits_current", "off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, src := waitSource(c.psOn, c.enabled, c.err)
			if q != c.wantSQL {
				t.Errorf("query: got the other one")
			}
			if !strings.Contains(src, c.want) || strings.Contains(src, c.wantNone) {
				t.Errorf("source %q: want %q, not %q", src, c.want, c.wantNone)
			}
		})
	}
}
