package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

var txTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// uniqueTimes hands out distinct timestamps, so that the rows one
// transaction inserts can be told from those of the others.
var uniqueTimes = txTime

func uniqueTime() time.Time {
	uniqueTimes = uniqueTimes.Add(time.Second)
	return uniqueTimes
}

// qInt and qMoney read one value with a direct query.
func qInt(t *testing.T, c tpcc.Querier, sql string, args ...any) int64 {
	t.Helper()
	var v int64
	if err := c.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
	return v
}

// qMoney returns a money value in cents.
func qMoney(t *testing.T, c tpcc.Querier, sql string, args ...any) tpcc.Money {
	t.Helper()
	var v float64
	if err := c.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
	return tpcc.Money(math.Round(v * 100))
}

func qString(t *testing.T, c tpcc.Querier, sql string, args ...any) string {
	t.Helper()
	var v string
	if err := c.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
	return v
}

func exec(t *testing.T, c tpcc.Querier, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
}

func testTransactions(t *testing.T, d *Database, c tpcc.Querier, style dialect.Style) {
	ctx := context.Background()
	s, err := d.NewSession(ctx, style)
	if err != nil {
		t.Fatalf("NewSession(%v): %v", style, err)
	}
	defer s.Close()
	t.Run("new-order", func(t *testing.T) { testNewOrder(t, c, s) })
	t.Run("new-order rollback", func(t *testing.T) { testNewOrderRollback(t, d, c, s) })
	t.Run("payment", func(t *testing.T) { testPayment(t, c, s) })
	t.Run("order-status", func(t *testing.T) { testOrderStatus(t, c, s) })
	t.Run("delivery", func(t *testing.T) { testDelivery(t, c, s) })
	t.Run("stock-level", func(t *testing.T) { testStockLevel(t, c, s) })
}

type stockState struct {
	quantity, ytd, orderCnt, remoteCnt int64
	dist                               string
}

func readStock(t *testing.T, c tpcc.Querier, iID, wID, dID int) stockState {
	t.Helper()
	var s stockState
	err := c.QueryRow(context.Background(), fmt.Sprintf("SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt, s_dist_%02d "+
		"FROM stock WHERE s_i_id = ? AND s_w_id = ?", dID), iID, wID).Scan(&s.quantity, &s.ytd, &s.orderCnt, &s.remoteCnt, &s.dist)
	if err != nil {
		t.Fatalf("read stock %d/%d: %v", wID, iID, err)
	}
	return s
}

func testNewOrder(t *testing.T, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	const w, dID, cID = 1, 3, 42
	in := &tpcc.NewOrder{WID: w, DID: dID, CID: cID, EntryD: txTime, Lines: []tpcc.OrderLineInput{
		{IID: 101, SupplyWID: 1, Quantity: 5}, // stock 50: decreases by 5
		{IID: 102, SupplyWID: 1, Quantity: 5}, // stock 12: 12 - 5 + 91 (TPC-C 2.4.2.2)
		{IID: 103, SupplyWID: 2, Quantity: 3}, // stock 13, remote supplier
		{IID: 104, SupplyWID: 1, Quantity: 10},
		{IID: 105, SupplyWID: 1, Quantity: 1},
		{IID: 106, SupplyWID: 1, Quantity: 7},
	}}
	exec(t, c, "UPDATE stock SET s_quantity = 50 WHERE s_i_id = 101 AND s_w_id = 1")
	exec(t, c, "UPDATE stock SET s_quantity = 12 WHERE s_i_id = 102 AND s_w_id = 1")
	exec(t, c, "UPDATE stock SET s_quantity = 13 WHERE s_i_id = 103 AND s_w_id = 2") // exactly 10 more: decreases by 3
	before := make([]stockState, len(in.Lines))
	prices := make([]tpcc.Money, len(in.Lines))
	for i, l := range in.Lines {
		before[i] = readStock(t, c, l.IID, l.SupplyWID, dID)
		prices[i] = qMoney(t, c, "SELECT i_price FROM item WHERE i_id = ?", l.IID)
	}
	oID := qInt(t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dID)

	if err := s.NewOrder(ctx, in); err != nil {
		t.Fatalf("NewOrder: %v", err)
	}

	if got, want := qInt(t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dID), oID+1; got != want {
		t.Errorf("d_next_o_id = %d, want %d", got, want)
	}
	var oCID, olCnt, allLocal, carrierNull int64
	var entry time.Time
	err := c.QueryRow(ctx, "SELECT o_c_id, o_ol_cnt, o_all_local, CASE WHEN o_carrier_id IS NULL THEN 1 ELSE 0 END, o_entry_d "+
		"FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", w, dID, oID).Scan(&oCID, &olCnt, &allLocal, &carrierNull, &entry)
	if err != nil {
		t.Fatalf("read the new order %d: %v", oID, err)
	}
	if oCID != cID || olCnt != int64(len(in.Lines)) || allLocal != 0 || carrierNull != 1 || !entry.Equal(txTime) {
		t.Errorf("order = (c %d, ol_cnt %d, all_local %d, carrier null %d, entry %v), want (c %d, ol_cnt %d, all_local 0, carrier null 1, entry %v)",
			oCID, olCnt, allLocal, carrierNull, entry, cID, len(in.Lines), txTime)
	}
	if got := qInt(t, c, "SELECT count(*) FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", w, dID, oID); got != 1 {
		t.Errorf("new_order rows for order %d = %d, want 1", oID, got)
	}
	if got := qInt(t, c, "SELECT count(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", w, dID, oID); got != int64(len(in.Lines)) {
		t.Errorf("order lines = %d, want o_ol_cnt %d", got, len(in.Lines))
	}
	for i, l := range in.Lines {
		var iID, supply, qty, deliveredNull int64
		var amount float64
		var dist string
		err := c.QueryRow(ctx, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info, "+
			"CASE WHEN ol_delivery_d IS NULL THEN 1 ELSE 0 END FROM order_line "+
			"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? AND ol_number = ?", w, dID, oID, i+1).
			Scan(&iID, &supply, &qty, &amount, &dist, &deliveredNull)
		if err != nil {
			t.Fatalf("read order line %d: %v", i+1, err)
		}
		wantAmount := prices[i] * tpcc.Money(l.Quantity)
		if iID != int64(l.IID) || supply != int64(l.SupplyWID) || qty != int64(l.Quantity) ||
			tpcc.Money(math.Round(amount*100)) != wantAmount || dist != before[i].dist || deliveredNull != 1 {
			t.Errorf("order line %d = (%d, %d, %d, %.2f, %q, null %d), want (%d, %d, %d, %.2f, %q, null 1)", i+1,
				iID, supply, qty, amount, dist, deliveredNull, l.IID, l.SupplyWID, l.Quantity, wantAmount.Float(), before[i].dist)
		}
		after := readStock(t, c, l.IID, l.SupplyWID, dID)
		want := before[i]
		q := int64(l.Quantity)
		// TPC-C 2.4.2.2: the S_QUANTITY rule, S_YTD, S_ORDER_CNT, S_REMOTE_CNT.
		if want.quantity >= q+10 {
			want.quantity -= q
		} else {
			want.quantity = want.quantity - q + 91
		}
		want.ytd += q
		want.orderCnt++
		if l.SupplyWID != w {
			want.remoteCnt++
		}
		if after != want {
			t.Errorf("stock of item %d at %d after = %+v, want %+v", l.IID, l.SupplyWID, after, want)
		}
	}
}

func testNewOrderRollback(t *testing.T, d *Database, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	const w, dID = 1, 4
	in := &tpcc.NewOrder{WID: w, DID: dID, CID: 9, EntryD: txTime, Rollback: true, AllLocal: true, Lines: []tpcc.OrderLineInput{
		{IID: 201, SupplyWID: 1, Quantity: 2},
		{IID: 202, SupplyWID: 1, Quantity: 2},
		{IID: tpcc.ItemCount + 1, SupplyWID: 1, Quantity: 2}, // TPC-C 2.4.1.5: an unused item
	}}
	next := qInt(t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dID)
	stock := readStock(t, c, 201, 1, dID)
	orders := qInt(t, c, "SELECT count(*) FROM orders")

	err := s.NewOrder(ctx, in)
	if !errors.Is(err, tpcc.ErrRollback) {
		t.Fatalf("NewOrder with an unused item = %v, want tpcc.ErrRollback", err)
	}
	if got := d.Classify(err); got != dialect.ClassRollback {
		t.Errorf("Classify(rollback) = %v, want %v", got, dialect.ClassRollback)
	}
	if got := qInt(t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dID); got != next {
		t.Errorf("d_next_o_id after rollback = %d, want unchanged %d", got, next)
	}
	if got := readStock(t, c, 201, 1, dID); got != stock {
		t.Errorf("stock after rollback = %+v, want unchanged %+v", got, stock)
	}
	if got := qInt(t, c, "SELECT count(*) FROM orders"); got != orders {
		t.Errorf("orders after rollback = %d, want unchanged %d", got, orders)
	}
	// The session still works.
	in.Lines = in.Lines[:2]
	in.Rollback = false
	if err := s.NewOrder(ctx, in); err != nil {
		t.Errorf("NewOrder after a rollback: %v", err)
	}
}

type customerState struct {
	balance, ytdPayment tpcc.Money
	paymentCnt          int64
	data                string
	credit              string
}

func readCustomer(t *testing.T, c tpcc.Querier, w, d, id int64) customerState {
	t.Helper()
	var s customerState
	var bal, ytd float64
	err := c.QueryRow(context.Background(), "SELECT c_balance, c_ytd_payment, c_payment_cnt, c_data, c_credit FROM customer "+
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", w, d, id).Scan(&bal, &ytd, &s.paymentCnt, &s.data, &s.credit)
	if err != nil {
		t.Fatalf("read customer %d/%d/%d: %v", w, d, id, err)
	}
	s.balance, s.ytdPayment = tpcc.Money(math.Round(bal*100)), tpcc.Money(math.Round(ytd*100))
	return s
}

func testPayment(t *testing.T, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	// A last name shared by several customers of warehouse 2, district 5.
	shared := qString(t, c, "SELECT c_last FROM customer WHERE c_w_id = 2 AND c_d_id = 5 GROUP BY c_last "+
		"ORDER BY count(*) DESC, c_last LIMIT 1")
	bc := qInt(t, c, "SELECT min(c_id) FROM customer WHERE c_w_id = 1 AND c_d_id = 4 AND c_credit = 'BC'")
	gc := qInt(t, c, "SELECT min(c_id) FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_credit = 'GC'")
	cases := []struct {
		name string
		in   tpcc.Payment
	}{
		{"by number, good credit", tpcc.Payment{WID: 1, DID: 2, CWID: 1, CDID: 2, CID: int(gc), Amount: 12345, HDate: txTime}},
		{"by number, bad credit", tpcc.Payment{WID: 1, DID: 4, CWID: 1, CDID: 4, CID: int(bc), Amount: 500000, HDate: txTime}},
		{"by name, remote customer", tpcc.Payment{WID: 1, DID: 2, CWID: 2, CDID: 5, ByName: true, CLast: shared, Amount: 100, HDate: txTime}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.HDate = uniqueTime()
			cID := int64(in.CID)
			if in.ByName {
				// TPC-C 2.5.2.2: the customer at position ceil(n/2) by C_FIRST.
				rows, err := c.Query(ctx, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
					in.CWID, in.CDID, in.CLast)
				if err != nil {
					t.Fatalf("customers named %s: %v", in.CLast, err)
				}
				var ids []int64
				for rows.Next() {
					var id int64
					if err := rows.Scan(&id); err != nil {
						t.Fatalf("scan: %v", err)
					}
					ids = append(ids, id)
				}
				rows.Close()
				if len(ids) < 2 {
					t.Fatalf("only %d customers named %s: the case does not test the choice", len(ids), in.CLast)
				}
				cID = ids[(len(ids)+1)/2-1]
			}
			wYTD := qMoney(t, c, "SELECT w_ytd FROM warehouse WHERE w_id = ?", in.WID)
			dYTD := qMoney(t, c, "SELECT d_ytd FROM district WHERE d_w_id = ? AND d_id = ?", in.WID, in.DID)
			cust := readCustomer(t, c, int64(in.CWID), int64(in.CDID), cID)
			hist := qInt(t, c, "SELECT count(*) FROM history")

			if err := s.Payment(ctx, &in); err != nil {
				t.Fatalf("Payment: %v", err)
			}

			if got, want := qMoney(t, c, "SELECT w_ytd FROM warehouse WHERE w_id = ?", in.WID), wYTD+in.Amount; got != want {
				t.Errorf("w_ytd = %d cents, want %d", got, want)
			}
			if got, want := qMoney(t, c, "SELECT d_ytd FROM district WHERE d_w_id = ? AND d_id = ?", in.WID, in.DID), dYTD+in.Amount; got != want {
				t.Errorf("d_ytd = %d cents, want %d", got, want)
			}
			got := readCustomer(t, c, int64(in.CWID), int64(in.CDID), cID)
			want := cust
			want.balance -= in.Amount
			want.ytdPayment += in.Amount
			want.paymentCnt++
			if cust.credit == "BC" {
				// TPC-C 2.5.2.2: the history is inserted at the left of C_DATA, at most 500 characters.
				want.data = fmt.Sprintf("%d %d %d %d %d %s %s", cID, in.CDID, in.CWID, in.DID, in.WID,
					strings.TrimSpace(fmt.Sprintf("%8.2f", in.Amount.Float())), cust.data)
				if len(want.data) > 500 {
					want.data = want.data[:500]
				}
			}
			if got != want {
				t.Errorf("customer %d after = %+v\nwant %+v", cID, got, want)
			}
			if n := qInt(t, c, "SELECT count(*) FROM history"); n != hist+1 {
				t.Errorf("history rows = %d, want %d", n, hist+1)
			}
			var hData string
			var hAmount float64
			err := c.QueryRow(ctx, "SELECT h_data, h_amount FROM history WHERE h_c_id = ? AND h_c_d_id = ? AND h_c_w_id = ? "+
				"AND h_d_id = ? AND h_w_id = ? AND h_date = ?", cID, in.CDID, in.CWID, in.DID, in.WID, in.HDate).Scan(&hData, &hAmount)
			if err != nil {
				t.Fatalf("read the history row: %v", err)
			}
			wantData := qString(t, c, "SELECT w_name FROM warehouse WHERE w_id = ?", in.WID) + "    " +
				qString(t, c, "SELECT d_name FROM district WHERE d_w_id = ? AND d_id = ?", in.WID, in.DID)
			if hData != wantData || tpcc.Money(math.Round(hAmount*100)) != in.Amount {
				t.Errorf("history = (%q, %.2f), want (%q, %.2f)", hData, hAmount, wantData, in.Amount.Float())
			}
		})
	}
}

func testOrderStatus(t *testing.T, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	last := qString(t, c, "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 1500")
	cases := []struct {
		name string
		in   tpcc.OrderStatus
	}{
		{"by number", tpcc.OrderStatus{WID: 1, DID: 3, CID: 42}},
		{"by name", tpcc.OrderStatus{WID: 1, DID: 6, ByName: true, CLast: last}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.OrderStatus(ctx, &tc.in); err != nil {
				t.Errorf("OrderStatus: %v", err)
			}
		})
	}
	// An unknown customer is an error, not a silent success.
	bad := tpcc.OrderStatus{WID: 1, DID: 6, ByName: true, CLast: "NOSUCHNAME"}
	if err := s.OrderStatus(ctx, &bad); err == nil {
		t.Errorf("OrderStatus of an unknown last name succeeded")
	}
}

func testDelivery(t *testing.T, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	const w, carrier = 1, 7
	type district struct {
		oID, cID int64
		amount   tpcc.Money
		cust     customerState
		delivery int64
	}
	var before [tpcc.DistrictsPerWarehouse + 1]district
	for d := 1; d <= tpcc.DistrictsPerWarehouse; d++ {
		b := &before[d]
		b.oID = qInt(t, c, "SELECT min(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?", w, d)
		b.cID = qInt(t, c, "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", w, d, b.oID)
		b.amount = qMoney(t, c, "SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", w, d, b.oID)
		b.cust = readCustomer(t, c, w, int64(d), b.cID)
		b.delivery = qInt(t, c, "SELECT c_delivery_cnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", w, d, b.cID)
	}
	in := &tpcc.Delivery{WID: w, CarrierID: carrier, DeliveryD: txTime.Add(time.Hour), Skipped: -1}
	if err := s.Delivery(ctx, in); err != nil {
		t.Fatalf("Delivery: %v", err)
	}
	if in.Skipped != 0 {
		t.Errorf("Skipped = %d, want 0", in.Skipped)
	}
	for d := 1; d <= tpcc.DistrictsPerWarehouse; d++ {
		b := before[d]
		if n := qInt(t, c, "SELECT count(*) FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", w, d, b.oID); n != 0 {
			t.Errorf("district %d: new_order row of order %d still there", d, b.oID)
		}
		if got := qInt(t, c, "SELECT o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", w, d, b.oID); got != carrier {
			t.Errorf("district %d: o_carrier_id = %d, want %d", d, got, carrier)
		}
		if n := qInt(t, c, "SELECT count(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? "+
			"AND (ol_delivery_d IS NULL OR ol_delivery_d <> ?)", w, d, b.oID, in.DeliveryD); n != 0 {
			t.Errorf("district %d: %d order lines without ol_delivery_d = %v", d, n, in.DeliveryD)
		}
		got := readCustomer(t, c, w, int64(d), b.cID)
		if want := b.cust.balance + b.amount; got.balance != want {
			t.Errorf("district %d: c_balance = %d cents, want %d", d, got.balance, want)
		}
		if n := qInt(t, c, "SELECT c_delivery_cnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", w, d, b.cID); n != b.delivery+1 {
			t.Errorf("district %d: c_delivery_cnt = %d, want %d", d, n, b.delivery+1)
		}
	}
}

func testStockLevel(t *testing.T, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	const w, dID, threshold = 1, 3, 20
	next := qInt(t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dID)
	want := qInt(t, c, "SELECT count(DISTINCT ol_i_id) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? "+
		"AND ol_o_id BETWEEN ? AND ? AND ol_i_id IN (SELECT s_i_id FROM stock WHERE s_w_id = ? AND s_quantity < ?)",
		w, dID, next-20, next-1, w, threshold)
	if want == 0 {
		t.Fatalf("no low stock in the last 20 orders: the case does not test the count")
	}
	in := &tpcc.StockLevel{WID: w, DID: dID, Threshold: threshold, LowStock: -1}
	if err := s.StockLevel(ctx, in); err != nil {
		t.Fatalf("StockLevel: %v", err)
	}
	if int64(in.LowStock) != want {
		t.Errorf("LowStock = %d, want %d", in.LowStock, want)
	}
}

func testTxCount(t *testing.T, d *Database) {
	ctx := context.Background()
	if got, want := d.TxCountSource(), "pg_stat_database xact_commit+xact_rollback"; got != want {
		t.Errorf("TxCountSource = %q, want %q", got, want)
	}
	before, err := d.TxCount(ctx)
	if err != nil {
		t.Fatalf("TxCount: %v", err)
	}
	s, err := d.NewSession(ctx, dialect.StyleProcedures)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	const n = 20
	for range n {
		if err := s.StockLevel(ctx, &tpcc.StockLevel{WID: 1, DID: 1, Threshold: 15}); err != nil {
			t.Fatalf("StockLevel: %v", err)
		}
	}
	_ = s.Close() // the backend publishes its counts when it exits
	// Backends publish their counts at most once a second: poll briefly.
	deadline := time.Now().Add(5 * time.Second)
	for {
		after, err := d.TxCount(ctx)
		if err != nil {
			t.Fatalf("TxCount: %v", err)
		}
		if after-before >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("TxCount went from %d to %d after %d transactions", before, after, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func testDeliverySkips(t *testing.T, d *Database, c tpcc.Querier, style dialect.Style) {
	ctx := context.Background()
	// Warehouse 2, district 3 has no undelivered order left.
	exec(t, c, "DELETE FROM new_order WHERE no_w_id = 2 AND no_d_id = 3")
	s, err := d.NewSession(ctx, style)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	defer s.Close()
	in := &tpcc.Delivery{WID: 2, CarrierID: 3, DeliveryD: txTime}
	if err := s.Delivery(ctx, in); err != nil {
		t.Fatalf("Delivery: %v", err)
	}
	if in.Skipped != 1 {
		t.Errorf("Skipped = %d, want 1", in.Skipped)
	}
}

// testNewOrderRepeatedStock orders one stock row on two lines (TPC-C
// 2.4.1.5 draws each line's item independently): the row is updated line
// after line, S_YTD and S_ORDER_CNT by both lines, and each line gets its
// own ORDER-LINE row.
func testNewOrderRepeatedStock(t *testing.T, d *Database, c tpcc.Querier, style dialect.Style) {
	ctx := context.Background()
	s, err := d.NewSession(ctx, style)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	defer s.Close()
	const w, dID, cID = 1, 5, 17
	in := &tpcc.NewOrder{WID: w, DID: dID, CID: cID, EntryD: txTime, AllLocal: true, Lines: []tpcc.OrderLineInput{
		{IID: 301, SupplyWID: 1, Quantity: 5}, // stock 16: 16 - 5 = 11
		{IID: 302, SupplyWID: 1, Quantity: 2},
		{IID: 301, SupplyWID: 1, Quantity: 5}, // 11 < 5 + 10: 11 - 5 + 91 = 97
	}}
	exec(t, c, "UPDATE stock SET s_quantity = 16 WHERE s_i_id = 301 AND s_w_id = 1")
	before := readStock(t, c, 301, 1, dID)
	oID := qInt(t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dID)
	if err := s.NewOrder(ctx, in); err != nil {
		t.Fatalf("NewOrder: %v", err)
	}
	after := readStock(t, c, 301, 1, dID)
	got := [3]int64{after.quantity, after.ytd - before.ytd, after.orderCnt - before.orderCnt}
	if want := [3]int64{97, 10, 2}; got != want {
		t.Errorf("stock 301/1 (s_quantity, s_ytd delta, s_order_cnt delta) = %v, want %v", got, want)
	}
	for i, l := range in.Lines {
		if got := qInt(t, c, "SELECT ol_i_id * 100 + ol_quantity FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? AND ol_number = ?",
			w, dID, oID, i+1); got != int64(l.IID*100+l.Quantity) {
			t.Errorf("order line %d: item*100+quantity = %d, want %d", i+1, got, l.IID*100+l.Quantity)
		}
	}
}

// testStockQuantity checks oltplab_stock_quantity, which New-Order's
// function applies to a stock row that several lines name, against the
// rule of TPC-C 2.4.2.2 applied line after line: with lines enough, one
// sum of the quantities would wrap at the wrong point.
func testStockQuantity(t *testing.T, c tpcc.Querier) {
	qs := []int{7, 4, 9, 9, 5, 9, 7, 4, 9, 5, 7, 9, 8, 7}
	want := int64(11)
	for _, q := range qs {
		if want >= int64(q)+10 {
			want -= int64(q)
		} else {
			want = want - int64(q) + 91
		}
	}
	if got := qInt(t, c, "SELECT oltplab_stock_quantity(11, ?::integer[])", qs); got != want {
		t.Errorf("oltplab_stock_quantity(11, %v) = %d, want %d", qs, got, want)
	}
}
