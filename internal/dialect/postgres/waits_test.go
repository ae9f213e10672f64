package postgres

import (
	"testing"

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
