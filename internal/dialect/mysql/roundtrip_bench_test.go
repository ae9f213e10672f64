package mysql

import (
	"context"
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
)

// BenchmarkRoundTrip is the floor under the session figures of
// conformance.BenchSessions: the client CPU of one round trip that the
// server answers at once, as text and as a prepared statement.
func BenchmarkRoundTrip(b *testing.B) {
	d, _ := openTest(b)
	ctx := context.Background()
	c, err := d.db.Conn(ctx)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	defer c.Close()
	st, err := c.PrepareContext(ctx, "SELECT ?")
	if err != nil {
		b.Fatalf("prepare: %v", err)
	}
	defer st.Close()
	b.Run("text", func(b *testing.B) {
		user0, sys0 := conformance.CPUTimes(b)
		for range b.N {
			if _, err := c.ExecContext(ctx, "DO 1"); err != nil {
				b.Fatal(err)
			}
		}
		conformance.ReportCPU(b, user0, sys0)
	})
	b.Run("prepared", func(b *testing.B) {
		user0, sys0 := conformance.CPUTimes(b)
		var x int64
		for i := range b.N {
			if err := st.QueryRowContext(ctx, int64(i)).Scan(&x); err != nil {
				b.Fatal(err)
			}
		}
		conformance.ReportCPU(b, user0, sys0)
	})
}
