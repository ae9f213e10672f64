package conformance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// styles are the execution styles a dialect offers: client-side SQL
// always, stored procedures when its capabilities say so.
func styles(c dialect.Capabilities) []dialect.Style {
	if c.Procedures {
		return []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL}
	}
	return []dialect.Style{dialect.StyleClientSQL}
}

// effects are what one style's transactions did to the database, in a form
// that does not depend on the rows an earlier style already changed
// (deltas, and values the test set beforehand). Every style must give the
// same effects.
type effects struct {
	NewOrder    newOrderEffect
	Rollback    rollbackEffect
	Payment     map[string]paymentEffect
	OrderStatus map[string]string // case name -> error text ("" for none)
	Delivery    deliveryEffect
	StockLevel  map[int]int // threshold -> LowStock
}

// txTime is the clock of the hand-made inputs.
var txTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func testTransactions(t *testing.T, db dialect.Database) {
	ctx := subtestContext(t)
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	tol := moneyTolerance(db.Caps())

	got := map[dialect.Style]*effects{}
	for _, style := range styles(db.Caps()) {
		t.Run(style.String(), func(t *testing.T) {
			s, err := db.NewSession(ctx, style)
			if err != nil {
				t.Fatalf("NewSession(%v): %v", style, err)
			}
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Session.Close: %v", err)
				}
			}()
			e := &effects{}
			got[style] = e
			t.Run("new-order", func(t *testing.T) { e.NewOrder = testNewOrder(ctx, t, c, s) })
			t.Run("new-order rollback", func(t *testing.T) { e.Rollback = testNewOrderRollback(ctx, t, db, c, s) })
			t.Run("payment", func(t *testing.T) { e.Payment = testPayment(ctx, t, c, s, tol) })
			t.Run("order-status", func(t *testing.T) { e.OrderStatus = testOrderStatus(ctx, t, c, s) })
			t.Run("delivery", func(t *testing.T) { e.Delivery = testDelivery(ctx, t, c, s, tol) })
			t.Run("stock-level", func(t *testing.T) { e.StockLevel = testStockLevel(ctx, t, c, s) })
		})
	}

	st := styles(db.Caps())
	for _, other := range st[1:] {
		a, b := got[st[0]], got[other]
		if a == nil || b == nil {
			continue
		}
		for _, f := range []struct {
			name string
			x, y any
		}{
			{"new-order", a.NewOrder, b.NewOrder},
			{"new-order rollback", a.Rollback, b.Rollback},
			{"payment", a.Payment, b.Payment},
			{"order-status", a.OrderStatus, b.OrderStatus},
			{"delivery", a.Delivery, b.Delivery},
			{"stock-level", a.StockLevel, b.StockLevel},
		} {
			if !reflect.DeepEqual(f.x, f.y) {
				t.Errorf("%s effects differ between styles:\n%s: %+v\n%s: %+v", f.name, st[0], f.x, other, f.y)
			}
		}
	}
}

// moneyTolerance is the difference in cents under which two amounts are
// equal: none where money is exact, one cent where it is REAL.
func moneyTolerance(c dialect.Capabilities) tpcc.Money {
	return tpcc.Money(math.Ceil(c.MoneyTolerance * 100))
}

func moneyNear(a, b, tol tpcc.Money) bool {
	d := a - b
	return d <= tol && -d <= tol
}

type stockState struct {
	Quantity, YTD, OrderCnt, RemoteCnt int64
	Dist                               string
}

func readStock(ctx context.Context, t *testing.T, q tpcc.Querier, iID, wID, dID int) stockState {
	t.Helper()
	var s stockState
	err := q.QueryRow(ctx, fmt.Sprintf("SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt, s_dist_%02d "+
		"FROM stock WHERE s_i_id = ? AND s_w_id = ?", dID), iID, wID).Scan(&s.Quantity, &s.YTD, &s.OrderCnt, &s.RemoteCnt, &s.Dist)
	if err != nil {
		t.Fatalf("read stock of item %d at warehouse %d: %v", iID, wID, err)
	}
	return s
}

type newOrderEffect struct {
	NextOIDDelta    int64
	CID, OLCnt      int64
	AllLocal        int64
	CarrierNull     bool
	NewOrderRows    int64
	OrderLineRows   int64
	Lines           []lineEffect
	StockQuantities []int64 // S_QUANTITY after, per line
}

type lineEffect struct {
	IID, SupplyWID, Quantity int64
	Amount                   tpcc.Money
	DistInfoIsStockDist      bool // OL_DIST_INFO = S_DIST_xx of the district
	DeliveryNull             bool
	YTDDelta, OrderCntDelta  int64
	RemoteCntDelta           int64
}

// testNewOrder runs one New-Order of six lines, one supplied by the other
// warehouse, with stock quantities set on both sides of the rule of
// TPC-C 2.4.2.2.
func testNewOrder(ctx context.Context, t *testing.T, c tpcc.Querier, s dialect.Session) newOrderEffect {
	const w, dID, cID = 1, 3, 42
	cases := []struct {
		line   tpcc.OrderLineInput
		before int64 // S_QUANTITY set before the transaction
	}{
		{tpcc.OrderLineInput{IID: 101, SupplyWID: 1, Quantity: 5}, 50}, // 50 >= 5+10: 45
		{tpcc.OrderLineInput{IID: 102, SupplyWID: 1, Quantity: 5}, 12}, // 12 < 15: 12-5+91 = 98
		{tpcc.OrderLineInput{IID: 103, SupplyWID: 2, Quantity: 3}, 13}, // remote, 13 >= 13: 10
		{tpcc.OrderLineInput{IID: 104, SupplyWID: 1, Quantity: 10}, 19},
		{tpcc.OrderLineInput{IID: 105, SupplyWID: 1, Quantity: 1}, 11},
		{tpcc.OrderLineInput{IID: 106, SupplyWID: 1, Quantity: 7}, 100},
	}
	in := &tpcc.NewOrder{WID: w, DID: dID, CID: cID, EntryD: txTime, AllLocal: false}
	before := make([]stockState, len(cases))
	prices := make([]tpcc.Money, len(cases))
	for i, tc := range cases {
		in.Lines = append(in.Lines, tc.line)
		exec(ctx, t, c, "UPDATE stock SET s_quantity = ? WHERE s_i_id = ? AND s_w_id = ?", tc.before, tc.line.IID, tc.line.SupplyWID)
		before[i] = readStock(ctx, t, c, tc.line.IID, tc.line.SupplyWID, dID)
		prices[i] = queryMoney(ctx, t, c, "SELECT i_price FROM item WHERE i_id = ?", tc.line.IID)
	}
	oID := queryInt(ctx, t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dID)

	if err := s.NewOrder(ctx, in); err != nil {
		t.Fatalf("NewOrder(%+v): %v", *in, err)
	}

	// What TPC-C 2.4.2.2 asks for.
	want := newOrderEffect{NextOIDDelta: 1, CID: cID, OLCnt: int64(len(cases)), AllLocal: 0, CarrierNull: true,
		NewOrderRows: 1, OrderLineRows: int64(len(cases))}
	for i, tc := range cases {
		l, q := tc.line, int64(tc.line.Quantity)
		le := lineEffect{IID: int64(l.IID), SupplyWID: int64(l.SupplyWID), Quantity: q,
			Amount: prices[i] * tpcc.Money(q), DistInfoIsStockDist: true, DeliveryNull: true, YTDDelta: q, OrderCntDelta: 1}
		if l.SupplyWID != w {
			le.RemoteCntDelta = 1
		}
		want.Lines = append(want.Lines, le)
		// TPC-C 2.4.2.2: S_QUANTITY decreases by OL_QUANTITY if at least
		// 10 remain, else is increased by 91 after the decrease.
		quantity := tc.before - q
		if tc.before < q+10 {
			quantity += 91
		}
		want.StockQuantities = append(want.StockQuantities, quantity)
	}

	var got newOrderEffect
	got.NextOIDDelta = queryInt(ctx, t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dID) - oID
	var carrierNull int64
	err := c.QueryRow(ctx, "SELECT o_c_id, o_ol_cnt, o_all_local, CASE WHEN o_carrier_id IS NULL THEN 1 ELSE 0 END "+
		"FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", w, dID, oID).Scan(&got.CID, &got.OLCnt, &got.AllLocal, &carrierNull)
	if err != nil {
		t.Fatalf("read the new order %d/%d/%d: %v", w, dID, oID, err)
	}
	got.CarrierNull = carrierNull == 1
	got.NewOrderRows = queryInt(ctx, t, c, "SELECT COUNT(*) FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", w, dID, oID)
	got.OrderLineRows = queryInt(ctx, t, c, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", w, dID, oID)
	for i := range cases {
		var le lineEffect
		var amount float64
		var dist string
		var deliveryNull int64
		err := c.QueryRow(ctx, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info, "+
			"CASE WHEN ol_delivery_d IS NULL THEN 1 ELSE 0 END FROM order_line "+
			"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? AND ol_number = ?", w, dID, oID, i+1).
			Scan(&le.IID, &le.SupplyWID, &le.Quantity, &amount, &dist, &deliveryNull)
		if err != nil {
			t.Fatalf("read order line %d of order %d: %v", i+1, oID, err)
		}
		le.Amount, le.DistInfoIsStockDist, le.DeliveryNull = cents(amount), dist == before[i].Dist, deliveryNull == 1
		after := readStock(ctx, t, c, cases[i].line.IID, cases[i].line.SupplyWID, dID)
		le.YTDDelta = after.YTD - before[i].YTD
		le.OrderCntDelta = after.OrderCnt - before[i].OrderCnt
		le.RemoteCntDelta = after.RemoteCnt - before[i].RemoteCnt
		got.Lines = append(got.Lines, le)
		got.StockQuantities = append(got.StockQuantities, after.Quantity)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("New-Order effects:\n got %+v\nwant %+v", got, want)
	}
	return got
}

type rollbackEffect struct {
	IsErrRollback bool
	Class         dialect.ErrClass
	// Deltas of what must not change.
	NextOIDDelta, OrdersDelta, NewOrdersDelta, OrderLinesDelta int64
	StockChanged                                               bool
	// The session works after the rollback.
	NextOrderErr string
}

// testNewOrderRollback runs a New-Order whose last item is unused
// (TPC-C 2.4.1.4, 2.4.2.3): it must return tpcc.ErrRollback, classified as
// ClassRollback, and change nothing.
func testNewOrderRollback(ctx context.Context, t *testing.T, db dialect.Database, c tpcc.Querier, s dialect.Session) rollbackEffect {
	const w, dID = 1, 4
	in := &tpcc.NewOrder{WID: w, DID: dID, CID: 9, EntryD: txTime, Rollback: true, AllLocal: true, Lines: []tpcc.OrderLineInput{
		{IID: 201, SupplyWID: 1, Quantity: 2},
		{IID: 202, SupplyWID: 1, Quantity: 2},
		{IID: tpcc.ItemCount + 1, SupplyWID: 1, Quantity: 2}, // TPC-C 2.4.1.5: an unused item number
	}}
	counts := func() [4]int64 {
		return [4]int64{
			queryInt(ctx, t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dID),
			queryInt(ctx, t, c, "SELECT COUNT(*) FROM orders WHERE o_w_id = ? AND o_d_id = ?", w, dID),
			queryInt(ctx, t, c, "SELECT COUNT(*) FROM new_order WHERE no_w_id = ? AND no_d_id = ?", w, dID),
			queryInt(ctx, t, c, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ?", w, dID),
		}
	}
	before := counts()
	stock := []stockState{readStock(ctx, t, c, 201, 1, dID), readStock(ctx, t, c, 202, 1, dID)}

	err := s.NewOrder(ctx, in)

	after := counts()
	got := rollbackEffect{
		IsErrRollback:   errors.Is(err, tpcc.ErrRollback),
		Class:           db.Classify(err),
		NextOIDDelta:    after[0] - before[0],
		OrdersDelta:     after[1] - before[1],
		NewOrdersDelta:  after[2] - before[2],
		OrderLinesDelta: after[3] - before[3],
		StockChanged:    readStock(ctx, t, c, 201, 1, dID) != stock[0] || readStock(ctx, t, c, 202, 1, dID) != stock[1],
	}
	if !got.IsErrRollback {
		t.Errorf("NewOrder with an unused item = %v, want an error satisfying errors.Is(err, tpcc.ErrRollback)", err)
	}
	// The session goes on after the expected rollback.
	in.Lines, in.Rollback = in.Lines[:2], false
	if err := s.NewOrder(ctx, in); err != nil {
		got.NextOrderErr = err.Error()
	}
	want := rollbackEffect{IsErrRollback: true, Class: dialect.ClassRollback}
	if got != want {
		t.Errorf("rolled-back New-Order: got %+v, want %+v (error %v)", got, want, err)
	}
	return got
}

type customerState struct {
	Balance, YTDPayment   tpcc.Money
	PaymentCnt            int64
	HistoryRows           int64
	HistoryAmount         tpcc.Money
	WarehouseYTD, DistYTD tpcc.Money
}

type paymentEffect struct {
	CID                             int64
	WarehouseYTDDelta, DistYTDDelta tpcc.Money
	BalanceDelta, YTDPaymentDelta   tpcc.Money
	PaymentCntDelta                 int64
	HistoryRowsDelta                int64
	HistoryAmountDelta              tpcc.Money
}

func readPaymentState(ctx context.Context, t *testing.T, c tpcc.Querier, in *tpcc.Payment, cID int64) customerState {
	t.Helper()
	var s customerState
	var bal, ytd float64
	err := c.QueryRow(ctx, "SELECT c_balance, c_ytd_payment, c_payment_cnt FROM customer "+
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", in.CWID, in.CDID, cID).Scan(&bal, &ytd, &s.PaymentCnt)
	if err != nil {
		t.Fatalf("read customer %d/%d/%d: %v", in.CWID, in.CDID, cID, err)
	}
	s.Balance, s.YTDPayment = cents(bal), cents(ytd)
	const hist = " FROM history WHERE h_c_w_id = ? AND h_c_d_id = ? AND h_c_id = ? AND h_w_id = ? AND h_d_id = ?"
	s.HistoryRows = queryInt(ctx, t, c, "SELECT COUNT(*)"+hist, in.CWID, in.CDID, cID, in.WID, in.DID)
	s.HistoryAmount = queryMoney(ctx, t, c, "SELECT COALESCE(SUM(h_amount), 0)"+hist, in.CWID, in.CDID, cID, in.WID, in.DID)
	s.WarehouseYTD = queryMoney(ctx, t, c, "SELECT w_ytd FROM warehouse WHERE w_id = ?", in.WID)
	s.DistYTD = queryMoney(ctx, t, c, "SELECT d_ytd FROM district WHERE d_w_id = ? AND d_id = ?", in.WID, in.DID)
	return s
}

// customerByName is the customer TPC-C 2.5.2.2 selects by last name: the
// one at position ceil(n/2) of the n customers of that name sorted by
// C_FIRST.
func customerByName(ctx context.Context, t *testing.T, c tpcc.Querier, w, d int, last string) int64 {
	t.Helper()
	rows, err := c.Query(ctx, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first", w, d, last)
	if err != nil {
		t.Fatalf("customers named %s: %v", last, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatalf("customers named %s: %v", last, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("customers named %s: %v", last, err)
	}
	if len(ids) < 2 {
		t.Fatalf("only %d customers named %s: the case would not test the choice", len(ids), last)
	}
	return ids[(len(ids)+1)/2-1]
}

// testPayment runs a Payment by customer number at the home warehouse and
// one by last name of a customer of the other warehouse (TPC-C 2.5.2.2).
func testPayment(ctx context.Context, t *testing.T, c tpcc.Querier, s dialect.Session, tol tpcc.Money) map[string]paymentEffect {
	// A last name held by an even number (>= 2) of customers, where
	// ceil(n/2) differs from n/2 + 1.
	shared := queryString(ctx, t, c, "SELECT c_last FROM customer WHERE c_w_id = 2 AND c_d_id = 5 GROUP BY c_last "+
		"HAVING COUNT(*) >= 2 ORDER BY COUNT(*) % 2, COUNT(*) DESC, c_last LIMIT 1")
	cases := []struct {
		name string
		in   tpcc.Payment
	}{
		{"by number, home", tpcc.Payment{WID: 1, DID: 2, CWID: 1, CDID: 2, CID: 17, Amount: 123456, HDate: txTime}},
		{"by name, remote", tpcc.Payment{WID: 1, DID: 2, CWID: 2, CDID: 5, ByName: true, CLast: shared, Amount: 100, HDate: txTime}},
	}
	out := map[string]paymentEffect{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			cID := int64(in.CID)
			if in.ByName {
				cID = customerByName(ctx, t, c, in.CWID, in.CDID, in.CLast)
			}
			before := readPaymentState(ctx, t, c, &in, cID)
			if err := s.Payment(ctx, &in); err != nil {
				t.Fatalf("Payment(%+v): %v", in, err)
			}
			after := readPaymentState(ctx, t, c, &in, cID)
			got := paymentEffect{
				CID:                cID,
				WarehouseYTDDelta:  after.WarehouseYTD - before.WarehouseYTD,
				DistYTDDelta:       after.DistYTD - before.DistYTD,
				BalanceDelta:       after.Balance - before.Balance,
				YTDPaymentDelta:    after.YTDPayment - before.YTDPayment,
				PaymentCntDelta:    after.PaymentCnt - before.PaymentCnt,
				HistoryRowsDelta:   after.HistoryRows - before.HistoryRows,
				HistoryAmountDelta: after.HistoryAmount - before.HistoryAmount,
			}
			// TPC-C 2.5.2.2: W_YTD and D_YTD += H_AMOUNT; C_BALANCE -=
			// H_AMOUNT; C_YTD_PAYMENT += H_AMOUNT; C_PAYMENT_CNT += 1; one
			// HISTORY row of H_AMOUNT for the selected customer.
			a := in.Amount
			if !moneyNear(got.WarehouseYTDDelta, a, tol) || !moneyNear(got.DistYTDDelta, a, tol) ||
				!moneyNear(got.BalanceDelta, -a, tol) || !moneyNear(got.YTDPaymentDelta, a, tol) ||
				got.PaymentCntDelta != 1 || got.HistoryRowsDelta != 1 || !moneyNear(got.HistoryAmountDelta, a, tol) {
				t.Errorf("Payment of %d cents to customer %d/%d/%d: got %+v, want deltas w_ytd %d, d_ytd %d, c_balance %d, "+
					"c_ytd_payment %d, c_payment_cnt 1, history rows 1 of %d", a, in.CWID, in.CDID, cID, got, a, a, -a, a, a)
			}
			out[tc.name] = got
		})
	}
	return out
}

// testOrderStatus runs Order-Status by customer number and by last name
// (TPC-C 2.6.2.2); it changes nothing, so only its error is compared.
func testOrderStatus(ctx context.Context, t *testing.T, c tpcc.Querier, s dialect.Session) map[string]string {
	last := queryString(ctx, t, c, "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 6 GROUP BY c_last "+
		"HAVING COUNT(*) >= 2 ORDER BY COUNT(*) DESC, c_last LIMIT 1")
	cases := []struct {
		name string
		in   tpcc.OrderStatus
	}{
		{"by number", tpcc.OrderStatus{WID: 1, DID: 3, CID: 42}},
		{"by name", tpcc.OrderStatus{WID: 1, DID: 6, ByName: true, CLast: last}},
	}
	out := map[string]string{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			out[tc.name] = ""
			if err := s.OrderStatus(ctx, &in); err != nil {
				out[tc.name] = err.Error()
				t.Errorf("OrderStatus(%+v): %v, want no error", in, err)
			}
		})
	}
	return out
}

type deliveryEffect struct {
	Skipped        int
	NewOrdersDelta int64
	Districts      []districtDelivery
}

type districtDelivery struct {
	OldestRemoved         bool  // the NEW-ORDER row of the oldest order is gone
	Carrier               int64 // O_CARRIER_ID of that order
	LinesUndelivered      int64 // lines left with a null OL_DELIVERY_D
	BalanceIncreasedBySum bool  // C_BALANCE += sum(OL_AMOUNT)
	DeliveryCntDelta      int64
}

// testDelivery delivers the oldest undelivered order of every district of
// warehouse 1 (TPC-C 2.7.4.2): none is skipped right after a build.
func testDelivery(ctx context.Context, t *testing.T, c tpcc.Querier, s dialect.Session, tol tpcc.Money) deliveryEffect {
	const w, carrier = 1, 7
	type district struct {
		oID, cID   int64
		sum        tpcc.Money
		balance    tpcc.Money
		deliveries int64
	}
	var ds [districtsPerWarehouse]district
	for i := range ds {
		d := i + 1
		x := &ds[i]
		x.oID = queryInt(ctx, t, c, "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?", w, d)
		x.cID = queryInt(ctx, t, c, "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", w, d, x.oID)
		x.sum = queryMoney(ctx, t, c, "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", w, d, x.oID)
		x.balance = queryMoney(ctx, t, c, "SELECT c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", w, d, x.cID)
		x.deliveries = queryInt(ctx, t, c, "SELECT c_delivery_cnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", w, d, x.cID)
	}
	newOrders := queryInt(ctx, t, c, "SELECT COUNT(*) FROM new_order WHERE no_w_id = ?", w)

	in := &tpcc.Delivery{WID: w, CarrierID: carrier, DeliveryD: txTime.Add(time.Hour), Skipped: -1}
	if err := s.Delivery(ctx, in); err != nil {
		t.Fatalf("Delivery(%+v): %v", *in, err)
	}

	got := deliveryEffect{Skipped: in.Skipped,
		NewOrdersDelta: queryInt(ctx, t, c, "SELECT COUNT(*) FROM new_order WHERE no_w_id = ?", w) - newOrders}
	want := deliveryEffect{Skipped: 0, NewOrdersDelta: -districtsPerWarehouse}
	for i, x := range ds {
		d := i + 1
		var dd districtDelivery
		dd.OldestRemoved = queryInt(ctx, t, c, "SELECT COUNT(*) FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", w, d, x.oID) == 0
		dd.Carrier = queryInt(ctx, t, c, "SELECT COALESCE(o_carrier_id, 0) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", w, d, x.oID)
		lines := queryInt(ctx, t, c, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", w, d, x.oID)
		dd.LinesUndelivered = queryInt(ctx, t, c, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? "+
			"AND ol_delivery_d IS NULL", w, d, x.oID)
		balance := queryMoney(ctx, t, c, "SELECT c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", w, d, x.cID)
		dd.BalanceIncreasedBySum = moneyNear(balance-x.balance, x.sum, tol)
		dd.DeliveryCntDelta = queryInt(ctx, t, c, "SELECT c_delivery_cnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", w, d, x.cID) - x.deliveries
		got.Districts = append(got.Districts, dd)
		// TPC-C 2.7.4.2: the oldest NEW-ORDER row is deleted, O_CARRIER_ID
		// set, every OL_DELIVERY_D set, C_BALANCE += sum(OL_AMOUNT),
		// C_DELIVERY_CNT += 1.
		want.Districts = append(want.Districts, districtDelivery{OldestRemoved: true, Carrier: carrier,
			LinesUndelivered: 0, BalanceIncreasedBySum: true, DeliveryCntDelta: 1})
		if lines < 5 || lines > 15 {
			t.Errorf("order %d/%d/%d has %d lines, want 5 to 15", w, d, x.oID, lines)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Delivery effects:\n got %+v\nwant %+v", got, want)
	}
	return got
}

// testStockLevel compares LowStock with a direct count (TPC-C 2.8.2.2):
// the distinct items of the last 20 orders of the district whose stock at
// the warehouse is below the threshold. One item of the district's last
// order is set low, so that the count is not zero.
func testStockLevel(ctx context.Context, t *testing.T, c tpcc.Querier, s dialect.Session) map[int]int {
	const w, d = 2, 7 // no other test changes this district's orders
	next := queryInt(ctx, t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, d)
	item := queryInt(ctx, t, c, "SELECT MIN(ol_i_id) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", w, d, next-1)
	exec(ctx, t, c, "UPDATE stock SET s_quantity = 5 WHERE s_w_id = ? AND s_i_id = ?", w, item)
	out := map[int]int{}
	for _, threshold := range []int{10, 15, 20} {
		t.Run(fmt.Sprintf("threshold %d", threshold), func(t *testing.T) {
			want := queryInt(ctx, t, c, "SELECT COUNT(DISTINCT s.s_i_id) FROM order_line ol "+
				"JOIN stock s ON s.s_w_id = ? AND s.s_i_id = ol.ol_i_id "+
				"WHERE ol.ol_w_id = ? AND ol.ol_d_id = ? AND ol.ol_o_id >= ? AND ol.ol_o_id < ? AND s.s_quantity < ?",
				w, w, d, next-20, next, threshold)
			if want < 1 {
				t.Fatalf("direct count is %d: item %d was set below every threshold", want, item)
			}
			in := &tpcc.StockLevel{WID: w, DID: d, Threshold: threshold, LowStock: -1}
			if err := s.StockLevel(ctx, in); err != nil {
				t.Fatalf("StockLevel(%+v): %v", *in, err)
			}
			if int64(in.LowStock) != want {
				t.Errorf("StockLevel(w %d, d %d, threshold %d).LowStock = %d, want %d (direct count)", w, d, threshold, in.LowStock, want)
			}
			out[threshold] = in.LowStock
		})
	}
	return out
}
