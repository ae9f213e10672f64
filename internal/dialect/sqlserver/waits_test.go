package sqlserver

import (
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
)

func TestWaitClassOf(t *testing.T) {
	tests := []struct {
		waitType string
		want     dialect.WaitClass
	}{
		{"WRITELOG", dialect.WaitLogIO},
		{"LOGBUFFER", dialect.WaitLogIO},
		{"PAGEIOLATCH_SH", dialect.WaitDataIO},
		{"PAGEIOLATCH_EX", dialect.WaitDataIO},
		{"IO_COMPLETION", dialect.WaitDataIO},
		{"ASYNC_IO_COMPLETION", dialect.WaitDataIO},
		{"LCK_M_X", dialect.WaitLock},
		{"LCK_M_U", dialect.WaitLock},
		{"LCK_M_RS_S", dialect.WaitLock},
		{"PAGELATCH_EX", dialect.WaitLatch},
		{"LATCH_EX", dialect.WaitLatch},
		{"ASYNC_NETWORK_IO", dialect.WaitClient},
		{"SOS_SCHEDULER_YIELD", dialect.WaitCPU},
		{"CXPACKET", dialect.WaitOther},
		{"RESOURCE_SEMAPHORE", dialect.WaitOther},
	}
	for _, tc := range tests {
		if got := waitClassOf(tc.waitType); got != tc.want {
			t.Errorf("waitClassOf(%s) = %v, want %v", tc.waitType, got, tc.want)
		}
	}
}

func TestClassifySession(t *testing.T) {
	tests := []struct {
		name, status, waitType string
		openTx                 int64
		want                   dialect.WaitClass
	}{
		{"no request", "", "", 0, dialect.WaitIdle},
		{"no request inside a transaction", "", "", 1, dialect.WaitClient},
		{"running", "running", "", 0, dialect.WaitCPU},
		{"queued for a scheduler", "runnable", "", 0, dialect.WaitCPU},
		{"blocked on a row lock", "suspended", "LCK_M_X", 1, dialect.WaitLock},
		{"waiting for the log", "suspended", "WRITELOG", 1, dialect.WaitLogIO},
		{"suspended without a wait type", "suspended", "", 0, dialect.WaitOther},
	}
	for _, tc := range tests {
		if got := classifySession(tc.status, tc.waitType, tc.openTx); got != tc.want {
			t.Errorf("%s: classifySession(%q, %q, %d) = %v, want %v", tc.name, tc.status, tc.waitType, tc.openTx, got, tc.want)
		}
	}
}
