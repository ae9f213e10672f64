package tpcc

// Audit accumulates, per completed transaction, the counts behind the
// figures a TPC-C result must disclose and an auditor checks (clause 9.2,
// the auditor's check list, and the numerical quantities of the Full
// Disclosure Report). It is a plain value: each worker keeps its own and a
// collector adds them with Merge.
//
// Record only transactions that completed: committed, or for New-Order
// also the expected rollback (ErrRollback).
type Audit struct {
	// Warehouses is the configured number of warehouses; with one warehouse
	// the remote figures are not applicable.
	Warehouses int

	Count [NumTxKinds]int64 // completed transactions per kind

	NewOrderRollbacks int64 // New-Orders rolled back on the unused item (2.4.2.3)
	OrderLines        int64 // order lines of all recorded New-Orders
	RemoteOrderLines  int64 // of which with OL_SUPPLY_W_ID != W_ID

	PaymentRemote int64 // Payments with C_W_ID != W_ID
	PaymentByName int64 // Payments selecting the customer by last name

	OrderStatusByName int64 // Order-Status selecting the customer by last name

	DeliverySkipped    int64 // districts skipped by Delivery: no undelivered order (2.7.4.2)
	DeliveriesExecuted int64 // Deliveries executed, at once or deferred (2.7.2)
}

// NewAudit returns an empty audit for a database of warehouses warehouses.
func NewAudit(warehouses int) Audit { return Audit{Warehouses: warehouses} }

// RecordNewOrder counts a completed New-Order; rolledBack is true when it
// ended with the expected rollback (ErrRollback).
func (a *Audit) RecordNewOrder(in *NewOrder, rolledBack bool) {
	a.Count[NewOrderTx]++
	if rolledBack {
		a.NewOrderRollbacks++
	}
	a.OrderLines += int64(len(in.Lines))
	for i := range in.Lines {
		if in.Lines[i].SupplyWID != in.WID {
			a.RemoteOrderLines++
		}
	}
}

// RecordPayment counts a completed Payment.
func (a *Audit) RecordPayment(in *Payment) {
	a.Count[PaymentTx]++
	if in.CWID != in.WID {
		a.PaymentRemote++
	}
	if in.ByName {
		a.PaymentByName++
	}
}

// RecordOrderStatus counts a completed Order-Status.
func (a *Audit) RecordOrderStatus(in *OrderStatus) {
	a.Count[OrderStatusTx]++
	if in.ByName {
		a.OrderStatusByName++
	}
}

// RecordDelivery counts a Delivery executed at once and the districts it
// skipped.
func (a *Audit) RecordDelivery(in *Delivery) {
	a.RecordDeliveryQueued()
	a.RecordDeliveryExecuted(in)
}

// RecordDeliveryQueued counts a Delivery a terminal queued for deferred
// execution (TPC-C 2.7.2): its business transaction completed for the
// terminal, and it counts in the mix.
func (a *Audit) RecordDeliveryQueued() { a.Count[DeliveryTx]++ }

// RecordDeliveryExecuted counts the execution of a Delivery (deferred or
// not) and the districts it skipped (2.7.4.2).
func (a *Audit) RecordDeliveryExecuted(in *Delivery) {
	a.DeliveriesExecuted++
	a.DeliverySkipped += int64(in.Skipped)
}

// RecordStockLevel counts a completed Stock-Level.
func (a *Audit) RecordStockLevel(in *StockLevel) {
	a.Count[StockLevelTx]++
}

// Merge adds the counts of b to a.
func (a *Audit) Merge(b Audit) {
	a.Warehouses = max(a.Warehouses, b.Warehouses)
	for k := range a.Count {
		a.Count[k] += b.Count[k]
	}
	a.NewOrderRollbacks += b.NewOrderRollbacks
	a.OrderLines += b.OrderLines
	a.RemoteOrderLines += b.RemoteOrderLines
	a.PaymentRemote += b.PaymentRemote
	a.PaymentByName += b.PaymentByName
	a.OrderStatusByName += b.OrderStatusByName
	a.DeliverySkipped += b.DeliverySkipped
	a.DeliveriesExecuted += b.DeliveriesExecuted
}

// Total returns the number of completed transactions of every kind.
func (a *Audit) Total() int64 {
	var n int64
	for _, c := range a.Count {
		n += c
	}
	return n
}

// Figure is one audited quantity with the bounds it must fall within.
type Figure struct {
	Name    string  // stable identifier, e.g. "new_order_rollback_pct"
	Clause  string  // where the requirement comes from
	Value   float64 // percentage, or average for average_order_lines
	Lo, Hi  float64 // inclusive bounds
	Samples int64   // the denominator: transactions (or districts) counted
	// NotApplicable: the figure cannot be measured in this configuration
	// (remote figures with a single warehouse). Such a figure is OK.
	NotApplicable bool
	// OK: not applicable, or measured (Samples > 0) and within [Lo, Hi].
	OK bool
}

// Figures returns the audit figures of the recorded transactions:
//
//   - The transaction mix of TPC-C 5.2.3: Payment >= 43%, Order-Status,
//     Delivery and Stock-Level >= 4% each of all transactions; New-Order is
//     reported (it is what the throughput counts) with bounds [0, 100].
//   - The input distributions that the auditor verifies (clause 9.2, the
//     auditor's check list; reported in the FDR's numerical quantities),
//     each the nominal value of clauses 2.4.1 to 2.6.1 with the tolerance
//     used by TPC-C audits: New-Order rollbacks 1% (2.4.1.4) within
//     [0.9, 1.1]; average order lines 10 (2.4.1.3) within [9.5, 10.5];
//     remote order lines 1% (2.4.1.5) within [0.95, 1.05]; remote Payments
//     15% (2.5.1.2) within [14.25, 15.75]; Payment and Order-Status by last
//     name 60% (2.5.1.2, 2.6.1.2) within [57, 63].
//   - Delivery: skipped districts (no undelivered order, 2.7.4.2) at most
//     1% of the districts processed (10 per Delivery).
func (a *Audit) Figures() []Figure {
	total := a.Total()
	singleWarehouse := a.Warehouses == 1
	var figs []Figure
	add := func(name, clause string, num, den int64, scale, lo, hi float64, notApplicable bool) {
		f := Figure{Name: name, Clause: clause, Lo: lo, Hi: hi, Samples: den, NotApplicable: notApplicable}
		if den > 0 {
			f.Value = scale * float64(num) / float64(den)
		}
		f.OK = notApplicable || (den > 0 && f.Value >= lo && f.Value <= hi)
		figs = append(figs, f)
	}

	// TPC-C 5.2.3: minimum mix percentages, over all transactions.
	add("mix_new_order_pct", "5.2.3", a.Count[NewOrderTx], total, 100, 0, 100, false)
	add("mix_payment_pct", "5.2.3", a.Count[PaymentTx], total, 100, 43, 100, false)
	add("mix_order_status_pct", "5.2.3", a.Count[OrderStatusTx], total, 100, 4, 100, false)
	add("mix_delivery_pct", "5.2.3", a.Count[DeliveryTx], total, 100, 4, 100, false)
	add("mix_stock_level_pct", "5.2.3", a.Count[StockLevelTx], total, 100, 4, 100, false)

	// Clause 9.2 auditor checks of the input distributions.
	add("new_order_rollback_pct", "2.4.1.4, 9.2", a.NewOrderRollbacks, a.Count[NewOrderTx], 100, 0.9, 1.1, false)
	add("average_order_lines", "2.4.1.3, 9.2", a.OrderLines, a.Count[NewOrderTx], 1, 9.5, 10.5, false)
	add("remote_order_lines_pct", "2.4.1.5, 9.2", a.RemoteOrderLines, a.OrderLines, 100, 0.95, 1.05, singleWarehouse)
	add("remote_payment_pct", "2.5.1.2, 9.2", a.PaymentRemote, a.Count[PaymentTx], 100, 14.25, 15.75, singleWarehouse)
	add("payment_by_name_pct", "2.5.1.2, 9.2", a.PaymentByName, a.Count[PaymentTx], 100, 57, 63, false)
	add("order_status_by_name_pct", "2.6.1.2, 9.2", a.OrderStatusByName, a.Count[OrderStatusTx], 100, 57, 63, false)

	// TPC-C 2.7.4.2: skipped deliveries at most 1%, over districts processed.
	add("delivery_skipped_pct", "2.7.4.2", a.DeliverySkipped, a.DeliveriesExecuted*DistrictsPerWarehouse, 100, 0, 1, false)
	return figs
}
