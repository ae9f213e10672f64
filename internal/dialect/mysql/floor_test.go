package mysql

import (
	"context"
	"testing"
)

func BenchmarkRoundTripFloor(b *testing.B) {
	d, _ := openTest(b)
	ctx := context.Background()
	c, _ := d.db.Conn(ctx)
	defer c.Close()
	st, _ := c.PrepareContext(ctx, "SELECT ?")
	b.Run("text-DO1", func(b *testing.B) {
		cpu0 := cpuTime(b)
		for i := 0; i < b.N; i++ {
			if _, err := c.ExecContext(ctx, "DO 1"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
	})
	b.Run("prepared-select", func(b *testing.B) {
		cpu0 := cpuTime(b)
		var x int64
		for i := 0; i < b.N; i++ {
			if err := st.QueryRowContext(ctx, int64(i)).Scan(&x); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
	})
}
