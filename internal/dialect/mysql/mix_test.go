package mysql

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// mixer runs transactions drawn from one terminal's deck on one session.
type mixer struct {
	term *tpcc.Terminal
	no   tpcc.NewOrder
	p    tpcc.Payment
	os   tpcc.OrderStatus
	d    tpcc.Delivery
	sl   tpcc.StockLevel
}

func newMixer(warehouses, terminal int) *mixer {
	r := tpcc.NewRand(7, tpcc.TerminalStream(terminal))
	run := tpcc.NewRunConstants(r, testLoad)
	return &mixer{term: tpcc.NewTerminal(r, run, warehouses, 1+terminal%warehouses, 1+terminal%10),
		no: tpcc.NewOrder{Lines: make([]tpcc.OrderLineInput, 0, 15)}}
}

// next runs one transaction of kind k (or of the deck's next kind when k < 0).
// The expected New-Order rollback is not an error.
func (m *mixer) next(ctx context.Context, s dialect.Session, k tpcc.TxKind) error {
	if k < 0 {
		k = m.term.NextKind()
	}
	now := time.Now().UTC().Truncate(time.Second)
	switch k {
	case tpcc.NewOrderTx:
		m.term.NewOrder(&m.no, now)
		if err := s.NewOrder(ctx, &m.no); err != nil && !(m.no.Rollback && errors.Is(err, tpcc.ErrRollback)) {
			return err
		}
		return nil
	case tpcc.PaymentTx:
		m.term.Payment(&m.p, now)
		return s.Payment(ctx, &m.p)
	case tpcc.OrderStatusTx:
		m.term.OrderStatus(&m.os)
		return s.OrderStatus(ctx, &m.os)
	case tpcc.DeliveryTx:
		m.term.Delivery(&m.d, now)
		return s.Delivery(ctx, &m.d)
	default:
		m.term.StockLevel(&m.sl)
		return s.StockLevel(ctx, &m.sl)
	}
}

// TestConsistencyAfterRun runs a batch of the standard mix in both styles
// and checks the consistency conditions of TPC-C 3.3.2 afterwards.
func TestConsistencyAfterRun(t *testing.T) {
	d := buildTest(t, 1)
	ctx := context.Background()
	newOrders := queryInt(t, d, "SELECT SUM(d_next_o_id - 1) FROM district")
	for i, style := range styles {
		t.Run(style.String(), func(t *testing.T) {
			s := newSession(t, d, style)
			m := newMixer(1, i)
			for n := 0; n < 300; n++ {
				if err := m.next(ctx, s, -1); err != nil {
					t.Fatalf("transaction %d: %v", n, err)
				}
			}
		})
	}
	if got := queryInt(t, d, "SELECT SUM(d_next_o_id - 1) FROM district"); got <= newOrders+200 {
		t.Errorf("committed New-Orders: got %d, want more than %d (45%% of 600 transactions)", got-newOrders, 200)
	}
	err := d.Snapshot(ctx, func(q tpcc.Querier) error {
		results, err := tpcc.CheckAll(ctx, q, d.Caps().MoneyTolerance, false)
		if err != nil {
			return err
		}
		for _, r := range results {
			if !r.Passed && !r.Skipped {
				t.Errorf("consistency %s (%s) after the run: %d violations, %s", r.Clause, r.Name, r.Violations, r.Detail)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("CheckAll: %v", err)
	}
}
