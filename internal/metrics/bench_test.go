package metrics

import (
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// BenchmarkTransaction measures what live metrics add to each
// transaction on the virtual users' hot path, from parallel goroutines
// as the virtual users call it.
func BenchmarkTransaction(b *testing.B) {
	m := New()
	b.RunParallel(func(pb *testing.PB) {
		t := driver.Transaction{Kind: tpcc.PaymentTx, Outcome: driver.OutcomeCommitted, Latency: 3 * time.Millisecond}
		for pb.Next() {
			m.Transaction(t)
		}
	})
}
