package mysql

import (
	"errors"
	"strings"
	"testing"

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
