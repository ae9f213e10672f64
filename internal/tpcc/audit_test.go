package tpcc

import "testing"

func figureByName(t *testing.T, figs []Figure, name string) Figure {
	t.Helper()
	for _, f := range figs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no figure %q", name)
	return Figure{}
}

// nominalAudit is 10,000 transactions with exactly the nominal distributions.
func nominalAudit() Audit {
	return Audit{
		Warehouses:         10,
		Count:              [NumTxKinds]int64{4500, 4300, 400, 400, 400},
		NewOrderRollbacks:  45,    // 1%
		OrderLines:         45000, // 10 per order
		RemoteOrderLines:   450,   // 1%
		PaymentRemote:      645,   // 15%
		PaymentByName:      2580,  // 60%
		OrderStatusByName:  240,   // 60%
		DeliverySkipped:    0,     // of 4,000 districts
		DeliveriesExecuted: 400,   // all executed
	}
}

func TestAuditFigures(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(a *Audit)
		figure    string
		wantValue float64
		wantOK    bool
		wantNA    bool
	}{
		{"rollback 1%", nil, "new_order_rollback_pct", 1, true, false},
		{"rollback 0.89%", func(a *Audit) { a.Count[NewOrderTx] = 10000; a.NewOrderRollbacks = 89 }, "new_order_rollback_pct", 0.89, false, false},
		{"rollback 0.9%", func(a *Audit) { a.Count[NewOrderTx] = 10000; a.NewOrderRollbacks = 90 }, "new_order_rollback_pct", 0.9, true, false},
		{"rollback 1.1%", func(a *Audit) { a.Count[NewOrderTx] = 10000; a.NewOrderRollbacks = 110 }, "new_order_rollback_pct", 1.1, true, false},
		{"rollback 1.11%", func(a *Audit) { a.Count[NewOrderTx] = 10000; a.NewOrderRollbacks = 111 }, "new_order_rollback_pct", 1.11, false, false},
		{"no new-orders", func(a *Audit) { a.Count[NewOrderTx] = 0 }, "new_order_rollback_pct", 0, false, false},
		{"average lines 10", nil, "average_order_lines", 10, true, false},
		{"average lines 9.5", func(a *Audit) { a.OrderLines = 42750 }, "average_order_lines", 9.5, true, false},
		{"average lines 9.4", func(a *Audit) { a.OrderLines = 42300 }, "average_order_lines", 9.4, false, false},
		{"average lines 10.6", func(a *Audit) { a.OrderLines = 47700 }, "average_order_lines", 10.6, false, false},
		{"remote lines 1%", nil, "remote_order_lines_pct", 1, true, false},
		{"remote lines 1.1%", func(a *Audit) { a.RemoteOrderLines = 495 }, "remote_order_lines_pct", 1.1, false, false},
		{"remote lines 0.9%", func(a *Audit) { a.RemoteOrderLines = 405 }, "remote_order_lines_pct", 0.9, false, false},
		{"remote lines one warehouse", func(a *Audit) { a.Warehouses = 1; a.RemoteOrderLines = 0 }, "remote_order_lines_pct", 0, true, true},
		{"remote payments 15%", nil, "remote_payment_pct", 15, true, false},
		{"remote payments 14%", func(a *Audit) { a.PaymentRemote = 602 }, "remote_payment_pct", 14, false, false},
		{"remote payments 16%", func(a *Audit) { a.PaymentRemote = 688 }, "remote_payment_pct", 16, false, false},
		{"remote payments one warehouse", func(a *Audit) { a.Warehouses = 1; a.PaymentRemote = 0 }, "remote_payment_pct", 0, true, true},
		{"payment by name 60%", nil, "payment_by_name_pct", 60, true, false},
		{"payment by name 56%", func(a *Audit) { a.PaymentByName = 2408 }, "payment_by_name_pct", 56, false, false},
		{"order-status by name 60%", nil, "order_status_by_name_pct", 60, true, false},
		{"order-status by name 64%", func(a *Audit) { a.OrderStatusByName = 256 }, "order_status_by_name_pct", 64, false, false},
		{"delivery none skipped", nil, "delivery_skipped_pct", 0, true, false},
		{"delivery 1% skipped", func(a *Audit) { a.DeliverySkipped = 40 }, "delivery_skipped_pct", 1, true, false},
		{"delivery 1.25% skipped", func(a *Audit) { a.DeliverySkipped = 50 }, "delivery_skipped_pct", 1.25, false, false},
		{"no deliveries", func(a *Audit) { a.Count[DeliveryTx], a.DeliveriesExecuted = 0, 0 }, "delivery_skipped_pct", 0, false, false},
		{"mix new-order 45%", nil, "mix_new_order_pct", 45, true, false},
		{"mix payment 43%", nil, "mix_payment_pct", 43, true, false},
		{"mix payment 42.99%", func(a *Audit) { a.Count[PaymentTx]--; a.Count[NewOrderTx]++ }, "mix_payment_pct", 42.99, false, false},
		{"mix order-status 3.99%", func(a *Audit) { a.Count[OrderStatusTx]--; a.Count[NewOrderTx]++ }, "mix_order_status_pct", 3.99, false, false},
		{"mix delivery 4%", nil, "mix_delivery_pct", 4, true, false},
		{"mix stock-level 3.9%", func(a *Audit) { a.Count[StockLevelTx] -= 10; a.Count[NewOrderTx] += 10 }, "mix_stock_level_pct", 3.9, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := nominalAudit()
			if tt.mutate != nil {
				tt.mutate(&a)
			}
			f := figureByName(t, a.Figures(), tt.figure)
			if diff := f.Value - tt.wantValue; diff > 1e-9 || diff < -1e-9 {
				t.Errorf("%s value = %v, want %v", tt.figure, f.Value, tt.wantValue)
			}
			if f.OK != tt.wantOK || f.NotApplicable != tt.wantNA {
				t.Errorf("%s = %v in [%v, %v]: OK %v, not applicable %v; want OK %v, not applicable %v",
					tt.figure, f.Value, f.Lo, f.Hi, f.OK, f.NotApplicable, tt.wantOK, tt.wantNA)
			}
		})
	}
}

func TestAuditRecordAndMerge(t *testing.T) {
	var a, b Audit
	a.Warehouses, b.Warehouses = 4, 4
	a.RecordNewOrder(&NewOrder{WID: 1, Lines: []OrderLineInput{{SupplyWID: 1}, {SupplyWID: 2}, {SupplyWID: 1}}}, true)
	a.RecordPayment(&Payment{WID: 1, CWID: 3, ByName: true})
	b.RecordPayment(&Payment{WID: 2, CWID: 2})
	b.RecordOrderStatus(&OrderStatus{ByName: true})
	b.RecordDelivery(&Delivery{Skipped: 2})
	b.RecordStockLevel(&StockLevel{})
	a.Merge(b)
	want := Audit{
		Warehouses:         4,
		Count:              [NumTxKinds]int64{1, 2, 1, 1, 1},
		NewOrderRollbacks:  1,
		OrderLines:         3,
		RemoteOrderLines:   1,
		PaymentRemote:      1,
		PaymentByName:      1,
		OrderStatusByName:  1,
		DeliverySkipped:    2,
		DeliveriesExecuted: 1,
	}
	if a != want {
		t.Errorf("merged audit = %+v, want %+v", a, want)
	}
}

// TestAuditDeferredDelivery: a deferred Delivery counts in the mix when a
// terminal queues it and in the skipped figure when it is executed, so the
// skipped share is over the executions, whatever is still queued.
func TestAuditDeferredDelivery(t *testing.T) {
	a := NewAudit(2)
	for range 100 {
		a.RecordDeliveryQueued()
	}
	for i := range 80 {
		in := Delivery{}
		if i == 0 {
			in.Skipped = 4
		}
		a.RecordDeliveryExecuted(&in)
	}
	if got, want := a.Count[DeliveryTx], int64(100); got != want {
		t.Errorf("deliveries in the mix: got %d, want %d", got, want)
	}
	f := figureByName(t, a.Figures(), "delivery_skipped_pct")
	if got, want := f.Value, 100*4.0/800; got != want || f.Samples != 800 {
		t.Errorf("delivery_skipped_pct: got %v over %d districts, want %v over 800", got, f.Samples, want)
	}
}
