package mysql

import (
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
