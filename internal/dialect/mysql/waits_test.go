package mysql

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dialect"
)

// TestClassifyWait: engine states (command, trx_state, event) and their wait class.
func TestClassifyWait(t *testing.T) {
	conformance.CheckWaitClasses(t, classifyWait, []conformance.WaitCase{
		{State: [3]string{"Sleep", "", ""}, Want: dialect.WaitIdle},
		{State: [3]string{"Sleep", "RUNNING", ""}, Want: dialect.WaitClient},
		{State: [3]string{"Query", "LOCK WAIT", ""}, Want: dialect.WaitLock},
		{State: [3]string{"Execute", "LOCK WAIT", "wait/synch/cond/innodb/lock_wait"}, Want: dialect.WaitLock},
		{State: [3]string{"Query", "RUNNING", ""}, Want: dialect.WaitCPU},
		{State: [3]string{"Query", "", "wait/io/file/innodb/innodb_log_file"}, Want: dialect.WaitLogIO},
		{State: [3]string{"Query", "", "wait/io/file/sql/binlog"}, Want: dialect.WaitLogIO},
		{State: [3]string{"Query", "", "wait/io/file/innodb/innodb_data_file"}, Want: dialect.WaitDataIO},
		{State: [3]string{"Query", "", "wait/io/socket/sql/client_connection"}, Want: dialect.WaitClient},
		{State: [3]string{"Query", "", "wait/lock/metadata/sql/mdl"}, Want: dialect.WaitLock},
		{State: [3]string{"Query", "", "wait/synch/mutex/innodb/buf_pool_mutex"}, Want: dialect.WaitLatch},
		{State: [3]string{"Query", "", "wait/io/table/sql/handler"}, Want: dialect.WaitCPU},
		{State: [3]string{"Binlog Dump", "", ""}, Want: dialect.WaitOther},
	})
}

// TestWaitSource: performance_schema ON with the events_waits_current
// consumer off was reported as "performance_schema off".
func TestWaitSource(t *testing.T) {
	for _, c := range []struct {
		name     string
		psOn     bool
		enabled  string
		err      error
		wantPS   bool
		want     string
		wantNone string
	}{
		{"performance_schema off", false, "", nil, false, "performance_schema off", "consumer"},
		{"consumer off", true, "NO", nil, false, "performance_schema on, but its events_waits_current consumer is off", "performance_schema off"},
		{"consumer unreadable", true, "", errors.New("SELECT command denied"), false, "could not be read: SELECT command denied", "performance_schema off"},
		{"consumer on", true, "YES", nil, true, "with performance_schema.events_waits_current", "off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, src := waitSource(c.psOn, c.enabled, c.err)
			if ps != c.wantPS {
				t.Errorf("performance_schema waits read: got %v, want %v", ps, c.wantPS)
			}
			if !strings.Contains(src, c.want) || strings.Contains(src, c.wantNone) {
				t.Errorf("source %q: want %q, not %q", src, c.want, c.wantNone)
			}
		})
	}
}

// TestFileIOCounters: performance_schema's file summary rows become
// counters by file kind, times from picoseconds to milliseconds; other
// instruments are left out.
func TestFileIOCounters(t *testing.T) {
	out := map[string]float64{}
	fileIOCounters(out, "wait/io/file/innodb/innodb_data_file", [3]float64{160, 30, 26}, [3]float64{221853292080, 1909671750, 38006889600})
	fileIOCounters(out, "wait/io/file/sql/binlog", [3]float64{1, 1, 1}, [3]float64{1e9, 1e9, 1e9})
	want := map[string]float64{
		"innodb_data_file_reads": 160, "innodb_data_file_read_time_ms": 221.85329208,
		"innodb_data_file_writes": 30, "innodb_data_file_write_time_ms": 1.90967175,
		"innodb_data_file_misc_ops": 26, "innodb_data_file_misc_time_ms": 38.0068896,
	}
	if len(out) != len(want) {
		t.Errorf("got %v, want %v", out, want)
	}
	for k, v := range want {
		if got := out[k]; got < v*0.999999 || got > v*1.000001 {
			t.Errorf("%s: got %v, want %v", k, got, v)
		}
	}
}

// TestWaitProbeSessions: the probe samples the sessions of its own
// database, not its own session nor those of another database (SHOW
// PROCESSLIST lists every session of the server; the probe filters it).
func TestWaitProbeSessions(t *testing.T) {
	d, _ := openTest(t)
	other, _ := openTest(t) // another database on the same server
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	probe, err := d.OpenWaitProbe(ctx)
	if err != nil {
		t.Fatalf("open probe: %v", err)
	}
	defer probe.Close()
	session := func(db *DB) int64 {
		c, err := db.Connect(ctx)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		var id int64
		if err := c.QueryRow(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatalf("session id: %v", err)
		}
		return id
	}
	mine, foreign := session(d), session(other)
	own := probe.(*waitProbe).ownID
	// The server may still list the session's last query for a moment
	// after the client has its answer (MariaDB's thread ends the command
	// after sending the result): sample until it shows idle, for at most
	// ten seconds.
	var samples []dialect.WaitSample
	got := map[int64]dialect.WaitSample{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if samples, err = probe.SampleWaits(ctx); err != nil {
			t.Fatalf("sample waits: %v", err)
		}
		clear(got)
		for _, s := range samples {
			got[s.Session] = s
		}
		if s, ok := got[mine]; (ok && s.Class == dialect.WaitIdle) || time.Now().After(deadline) {
			break
		}
	}
	if s, ok := got[mine]; !ok || s.Class != dialect.WaitIdle {
		t.Errorf("session %d of the probe's database: got %v (present %v), want idle", mine, s.Class, ok)
	}
	if _, ok := got[foreign]; ok {
		t.Errorf("session %d of another database sampled: %v", foreign, samples)
	}
	if _, ok := got[own]; ok {
		t.Errorf("the probe's own session %d sampled: %v", own, samples)
	}
}
