package mysql

import (
	"testing"

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
