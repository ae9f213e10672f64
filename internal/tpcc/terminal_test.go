package tpcc

import (
	"fmt"
	"testing"
	"time"
)

var terminalNow = time.Date(2024, 3, 2, 8, 0, 0, 0, time.UTC)

// runTerminals draws n inputs from terminals 10 per warehouse (one per
// district, TPC-C 4.2.2) and records them as if every transaction completed.
func runTerminals(t *testing.T, warehouses, n int) Audit {
	t.Helper()
	run := NewRunConstants(NewRand(1, ConstantsStream), Constants{CLast: 17})
	var terms []*Terminal
	for w := 1; w <= warehouses; w++ {
		for d := 1; d <= DistrictsPerWarehouse; d++ {
			terms = append(terms, NewTerminal(NewRand(1, TerminalStream(len(terms))), run, warehouses, w, d))
		}
	}
	audit := NewAudit(warehouses)
	var (
		no NewOrder
		p  Payment
		os OrderStatus
		dl Delivery
		sl StockLevel
	)
	for i := range n {
		term := terms[i%len(terms)]
		switch k := term.NextKind(); k {
		case NewOrderTx:
			term.NewOrder(&no, terminalNow)
			audit.RecordNewOrder(&no, no.Rollback)
		case PaymentTx:
			term.Payment(&p, terminalNow)
			audit.RecordPayment(&p)
		case OrderStatusTx:
			term.OrderStatus(&os)
			audit.RecordOrderStatus(&os)
		case DeliveryTx:
			term.Delivery(&dl, terminalNow)
			audit.RecordDelivery(&dl)
		case StockLevelTx:
			term.StockLevel(&sl)
			audit.RecordStockLevel(&sl)
		default:
			t.Fatalf("NextKind = %v", k)
		}
	}
	return audit
}

func TestTerminalFigures(t *testing.T) {
	tests := []struct {
		warehouses  int
		wantNotAppl map[string]bool
	}{
		{warehouses: 10},
		{warehouses: 2},
		{warehouses: 1, wantNotAppl: map[string]bool{"remote_order_lines_pct": true, "remote_payment_pct": true}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.warehouses, " warehouses"), func(t *testing.T) {
			a := runTerminals(t, tt.warehouses, 100000)
			if got := a.Total(); got != 100000 {
				t.Fatalf("recorded %d transactions, want 100000", got)
			}
			for _, f := range a.Figures() {
				if !f.OK {
					t.Errorf("%s = %.4f over %d samples, want within [%v, %v]", f.Name, f.Value, f.Samples, f.Lo, f.Hi)
				}
				if f.NotApplicable != tt.wantNotAppl[f.Name] {
					t.Errorf("%s: not applicable = %v, want %v", f.Name, f.NotApplicable, tt.wantNotAppl[f.Name])
				}
			}
			if tt.warehouses == 1 && (a.PaymentRemote != 0 || a.RemoteOrderLines != 0) {
				t.Errorf("one warehouse: %d remote payments, %d remote lines; want 0", a.PaymentRemote, a.RemoteOrderLines)
			}
		})
	}
}

func TestTerminalNewOrder(t *testing.T) {
	tests := []struct{ warehouses, home int }{{1, 1}, {2, 2}, {50, 17}}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("W=%d home=%d", tt.warehouses, tt.home), func(t *testing.T) {
			term := NewTerminal(NewRand(2, TerminalStream(0)), Constants{CLast: 100, CID: 200, OLIID: 300}, tt.warehouses, tt.home, 4)
			var in NewOrder
			rollbacks := 0
			for i := range 10000 {
				term.NewOrder(&in, terminalNow)
				if in.WID != tt.home || in.DID < 1 || in.DID > 10 || in.CID < 1 || in.CID > 3000 {
					t.Fatalf("input %+v: want home warehouse, district 1..10, customer 1..3000", in)
				}
				if n := len(in.Lines); n < 5 || n > 15 {
					t.Fatalf("%d lines, want 5..15", n)
				}
				allLocal := true
				for j, l := range in.Lines {
					if l.SupplyWID < 1 || l.SupplyWID > tt.warehouses {
						t.Fatalf("supply warehouse %d outside [1, %d]", l.SupplyWID, tt.warehouses)
					}
					allLocal = allLocal && l.SupplyWID == tt.home
					if l.Quantity < 1 || l.Quantity > 10 {
						t.Fatalf("quantity %d, want 1..10", l.Quantity)
					}
					unused := in.Rollback && j == len(in.Lines)-1
					if unused != (l.IID == ItemCount+1) || (!unused && (l.IID < 1 || l.IID > ItemCount)) {
						t.Fatalf("line %d of %d (rollback %v): item %d", j, len(in.Lines), in.Rollback, l.IID)
					}
				}
				if in.AllLocal != allLocal {
					t.Fatalf("AllLocal = %v, lines local = %v", in.AllLocal, allLocal)
				}
				if in.Rollback {
					rollbacks++
				}
				// TPC-C 2.4.1.4: exactly one rollback in every run of 100.
				if (i+1)%100 == 0 && rollbacks != (i+1)/100 {
					t.Fatalf("%d rollbacks after %d New-Orders, want %d", rollbacks, i+1, (i+1)/100)
				}
				if !in.EntryD.Equal(terminalNow) {
					t.Fatalf("EntryD = %v, want %v", in.EntryD, terminalNow)
				}
			}
		})
	}
}

func TestTerminalPaymentAndOrderStatus(t *testing.T) {
	term := NewTerminal(NewRand(3, TerminalStream(0)), Constants{CLast: 100, CID: 200, OLIID: 300}, 5, 3, 7)
	var p Payment
	var os OrderStatus
	for range 10000 {
		term.Payment(&p, terminalNow)
		if p.WID != 3 || p.DID < 1 || p.DID > 10 || p.CDID < 1 || p.CDID > 10 || p.CWID < 1 || p.CWID > 5 {
			t.Fatalf("payment %+v: ids out of range", p)
		}
		if p.Amount < 100 || p.Amount > 500000 {
			t.Fatalf("amount %d cents, want [1.00, 5000.00]", p.Amount)
		}
		if p.ByName != (p.CLast != "") || p.ByName == (p.CID != 0) {
			t.Fatalf("payment %+v: want either a last name or a customer id", p)
		}
		if !p.ByName && (p.CID < 1 || p.CID > 3000) {
			t.Fatalf("c_id %d outside [1, 3000]", p.CID)
		}
		term.OrderStatus(&os)
		if os.WID != 3 || os.DID < 1 || os.DID > 10 || os.ByName != (os.CLast != "") || os.ByName == (os.CID != 0) {
			t.Fatalf("order-status %+v", os)
		}
	}
}

func TestTerminalDeliveryStockLevelSetWarehouse(t *testing.T) {
	term := NewTerminal(NewRand(4, TerminalStream(0)), Constants{}, 10, 2, 6)
	var dl Delivery
	var sl StockLevel
	carriers := map[int]bool{}
	for i := range 1000 {
		w := i%10 + 1
		term.SetWarehouse(w)
		dl.Skipped, sl.LowStock = 3, 9
		term.Delivery(&dl, terminalNow)
		term.StockLevel(&sl)
		if dl.WID != w || dl.CarrierID < 1 || dl.CarrierID > 10 || dl.Skipped != 0 || !dl.DeliveryD.Equal(terminalNow) {
			t.Fatalf("delivery %+v, want warehouse %d, carrier 1..10, outputs reset", dl, w)
		}
		carriers[dl.CarrierID] = true
		if sl.WID != w || sl.DID != 6 || sl.Threshold < 10 || sl.Threshold > 20 || sl.LowStock != 0 {
			t.Fatalf("stock-level %+v, want warehouse %d, district 6, threshold 10..20", sl, w)
		}
	}
	if len(carriers) != 10 {
		t.Errorf("%d distinct carriers, want 10", len(carriers))
	}
}

func TestTerminalNewOrderNoAllocs(t *testing.T) {
	term := NewTerminal(NewRand(5, TerminalStream(0)), Constants{}, 10, 1, 1)
	in := NewOrder{Lines: make([]OrderLineInput, 0, 15)}
	allocs := testing.AllocsPerRun(1000, func() { term.NewOrder(&in, terminalNow) })
	if allocs != 0 {
		t.Errorf("allocations per New-Order input = %v, want 0", allocs)
	}
}

func BenchmarkTerminalNewOrder(b *testing.B) {
	term := NewTerminal(NewRand(5, TerminalStream(0)), Constants{}, 10, 1, 1)
	var in NewOrder
	for b.Loop() {
		term.NewOrder(&in, terminalNow)
	}
}
