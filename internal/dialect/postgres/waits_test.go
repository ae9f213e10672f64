package postgres

import (
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dialect"
)

// TestClassifyWait: engine states (state, wait_event_type, wait_event) and their wait class.
func TestClassifyWait(t *testing.T) {
	conformance.CheckWaitClasses(t, classifyWait, []conformance.WaitCase{
		{State: [3]string{"active", "", ""}, Want: dialect.WaitCPU},
		{State: [3]string{"idle", "Client", "ClientRead"}, Want: dialect.WaitIdle},
		{State: [3]string{"idle in transaction", "Client", "ClientRead"}, Want: dialect.WaitClient},
		{State: [3]string{"active", "IO", "WALSync"}, Want: dialect.WaitLogIO},
		{State: [3]string{"active", "IO", "WALWrite"}, Want: dialect.WaitLogIO},
		{State: [3]string{"active", "IO", "DataFileRead"}, Want: dialect.WaitDataIO},
		{State: [3]string{"active", "Lock", "transactionid"}, Want: dialect.WaitLock},
		{State: [3]string{"active", "LWLock", "BufferContent"}, Want: dialect.WaitLatch},
		{State: [3]string{"active", "LWLock", "WALWrite"}, Want: dialect.WaitLogIO},
		{State: [3]string{"active", "Client", "ClientWrite"}, Want: dialect.WaitClient},
		{State: [3]string{"active", "IPC", "SyncRep"}, Want: dialect.WaitLogIO},
		{State: [3]string{"active", "IPC", "ProcArrayGroupUpdate"}, Want: dialect.WaitOther},
		{State: [3]string{"active", "Timeout", "PgSleep"}, Want: dialect.WaitOther},
		{State: [3]string{"active", "BufferPin", "BufferPin"}, Want: dialect.WaitOther},
		{State: [3]string{"disabled", "", ""}, Want: dialect.WaitOther},
	})
}
