package driver

import (
	"context"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// nullSession completes every transaction at once. It stands in for the
// database only in this benchmark, which measures the driver's own cost.
type nullSession struct{}

func (nullSession) NewOrder(context.Context, *tpcc.NewOrder) error       { return nil }
func (nullSession) Payment(context.Context, *tpcc.Payment) error         { return nil }
func (nullSession) OrderStatus(context.Context, *tpcc.OrderStatus) error { return nil }
func (nullSession) Delivery(context.Context, *tpcc.Delivery) error       { return nil }
func (nullSession) StockLevel(context.Context, *tpcc.StockLevel) error   { return nil }
func (nullSession) Close() error                                         { return nil }

// BenchmarkTxBookkeeping measures the driver's own work per transaction,
// without the database: the virtual user's real transaction path (draw
// the kind from the deck, pick the warehouse, fill the input, two
// timestamps, execute through the Session interface, record the outcome
// in the counters, the kind's HDR histogram, the per-second histogram
// under its lock and the audit), with a session that does nothing.
func BenchmarkTxBookkeeping(b *testing.B) {
	for _, c := range []struct {
		name string
		all  bool
	}{{"home", false}, {"all-warehouses", true}} {
		b.Run(c.name, func(b *testing.B) {
			o := Defaults()
			o.VUs, o.AllWarehouses = 1, c.all
			load := tpcc.NewLoadConstants(tpcc.NewRand(1, tpcc.ConstantsStream))
			run := tpcc.NewRunConstants(tpcc.NewRand(2, tpcc.ConstantsStream), load)
			g := newGate()
			g.measuring.Store(true)
			v := newVU(0, nil, o, 10, realClock{}, g, &outageLog{})
			v.own = newTerminal(0, o.VUs, o.Seed, run, 10, o.AllWarehouses)
			v.sess = nullSession{}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.transaction(ctx, ctx, v.own, v.own.term.NextKind(), time.Time{}); err != nil {
					b.Fatal(err)
				}
			}
			var n int64
			for _, k := range v.stats.kinds {
				n += k.completed
			}
			if n == 0 {
				b.Fatal("nothing recorded")
			}
		})
	}
}
