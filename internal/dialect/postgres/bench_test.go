package postgres

import (
	"context"
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
)

// BenchmarkRoundTrip is the floor under the session figures of
// conformance.BenchSessions: one round trip of the cheapest statement on a
// pgx connection, the way sessions send theirs (prepared, binary), in
// client CPU per round trip.
func BenchmarkRoundTrip(b *testing.B) {
	d, _ := openTest(b)
	ctx := context.Background()
	c, err := d.connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	var v int32
	b.ReportAllocs()
	b.ResetTimer()
	user0, sys0 := conformance.CPUTimes(b)
	for range b.N {
		if err := c.QueryRow(ctx, "SELECT $1::int", int32(1)).Scan(&v); err != nil {
			b.Fatal(err)
		}
	}
	conformance.ReportCPU(b, user0, sys0)
}
