package mysql

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

var styles = []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL}

func newSession(t testing.TB, d *DB, style dialect.Style) dialect.Session {
	t.Helper()
	s, err := d.NewSession(context.Background(), style)
	if err != nil {
		t.Fatalf("NewSession(%v): %v", style, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func queryString(t testing.TB, d *DB, query string, args ...any) string {
	t.Helper()
	var s string
	if err := d.db.QueryRowContext(context.Background(), query, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

// cents reads a money expression as exact cents.
func cents(t testing.TB, d *DB, expr, from string, args ...any) int64 {
	t.Helper()
	return queryInt(t, d, "SELECT CAST(("+expr+") * 100 AS SIGNED) FROM "+from, args...)
}

// TestTransactions checks each transaction's effects on the database, in
// both execution styles, against direct queries.
func TestTransactions(t *testing.T) {
	d := buildTest(t, 1)
	ctx := context.Background()
	// Whole seconds: DATETIME keeps no fraction.
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

	for si, style := range styles {
		t.Run(style.String(), func(t *testing.T) {
			s := newSession(t, d, style)
			dID := 3 + si

			// TPC-C 2.4.1.5 draws each line's item on its own: a stock row
			// two lines name is updated line after line, S_YTD and
			// S_ORDER_CNT by both, and each line gets its own ORDER-LINE.
			t.Run("new-order names a stock row twice", func(t *testing.T) {
				iID := 301 + si
				if _, err := d.db.ExecContext(ctx, "UPDATE stock SET s_quantity = 16 WHERE s_w_id = 1 AND s_i_id = ?", iID); err != nil {
					t.Fatal(err)
				}
				var ytd, orders int64
				if err := d.db.QueryRowContext(ctx, "SELECT s_ytd, s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = ?", iID).Scan(&ytd, &orders); err != nil {
					t.Fatal(err)
				}
				oID := queryInt(t, d, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", dID)
				lines := []tpcc.OrderLineInput{
					{IID: iID, SupplyWID: 1, Quantity: 5}, // 16 - 5 = 11
					{IID: 310, SupplyWID: 1, Quantity: 2},
					{IID: iID, SupplyWID: 1, Quantity: 5}, // 11 < 5 + 10: 11 - 5 + 91 = 97
				}
				if err := s.NewOrder(ctx, &tpcc.NewOrder{WID: 1, DID: dID, CID: 78, Lines: lines, AllLocal: true, EntryD: now}); err != nil {
					t.Fatalf("NewOrder: %v", err)
				}
				var got [3]int64
				if err := d.db.QueryRowContext(ctx, "SELECT s_quantity, s_ytd - ?, s_order_cnt - ? FROM stock WHERE s_w_id = 1 AND s_i_id = ?", ytd, orders, iID).
					Scan(&got[0], &got[1], &got[2]); err != nil {
					t.Fatal(err)
				}
				if want := [3]int64{97, 10, 2}; got != want {
					t.Errorf("stock (s_quantity, s_ytd delta, s_order_cnt delta): got %v, want %v", got, want)
				}
				for i, l := range lines {
					if got := queryInt(t, d, "SELECT ol_i_id * 100 + ol_quantity FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ? AND ol_number = ?",
						dID, oID, i+1); got != int64(l.IID*100+l.Quantity) {
						t.Errorf("line %d: item*100+quantity = %d, want %d", i+1, got, l.IID*100+l.Quantity)
					}
				}
			})

			t.Run("new-order", func(t *testing.T) {
				lines := []tpcc.OrderLineInput{
					{IID: 11, SupplyWID: 1, Quantity: 3}, {IID: 22, SupplyWID: 1, Quantity: 10},
					{IID: 33, SupplyWID: 1, Quantity: 1}, {IID: 44, SupplyWID: 1, Quantity: 7},
					{IID: 55, SupplyWID: 1, Quantity: 5},
				}
				oID := queryInt(t, d, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", dID)
				type stock struct{ qty, ytd, orders, remote int64 }
				read := func(iID int) stock {
					var s stock
					if err := d.db.QueryRowContext(ctx, "SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = ?", iID).
						Scan(&s.qty, &s.ytd, &s.orders, &s.remote); err != nil {
						t.Fatalf("read stock: %v", err)
					}
					return s
				}
				before := make([]stock, len(lines))
				for i, l := range lines {
					before[i] = read(l.IID)
				}
				in := &tpcc.NewOrder{WID: 1, DID: dID, CID: 77, Lines: lines, AllLocal: true, EntryD: now}
				if err := s.NewOrder(ctx, in); err != nil {
					t.Fatalf("NewOrder: %v", err)
				}
				// TPC-C 2.4.2.2: D_NEXT_O_ID + 1; ORDER, NEW-ORDER and O_OL_CNT order lines.
				if got := queryInt(t, d, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", dID); got != oID+1 {
					t.Errorf("d_next_o_id: got %d, want %d", got, oID+1)
				}
				var cID, olCnt, allLocal int64
				var carrier any
				var entry time.Time
				if err := d.db.QueryRowContext(ctx, "SELECT o_c_id, o_ol_cnt, o_all_local, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = 1 AND o_d_id = ? AND o_id = ?", dID, oID).
					Scan(&cID, &olCnt, &allLocal, &carrier, &entry); err != nil {
					t.Fatalf("read order: %v", err)
				}
				if cID != 77 || olCnt != 5 || allLocal != 1 || carrier != nil || !entry.Equal(now) {
					t.Errorf("order: got c_id=%d ol_cnt=%d all_local=%d carrier=%v entry=%v; want 77 5 1 <nil> %v", cID, olCnt, allLocal, carrier, entry, now)
				}
				if got := queryInt(t, d, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = ? AND no_o_id = ?", dID, oID); got != 1 {
					t.Errorf("new_order rows: got %d, want 1", got)
				}
				if got := queryInt(t, d, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ?", dID, oID); got != 5 {
					t.Errorf("order lines: got %d, want 5", got)
				}
				for i, l := range lines {
					n := i + 1
					// OL_AMOUNT = OL_QUANTITY * I_PRICE; OL_DIST_INFO = S_DIST_xx.
					wantAmount := int64(l.Quantity) * cents(t, d, "i_price", "item WHERE i_id = ?", l.IID)
					if got := cents(t, d, "ol_amount", "order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ? AND ol_number = ?", dID, oID, n); got != wantAmount {
						t.Errorf("line %d ol_amount: got %d cents, want %d", n, got, wantAmount)
					}
					dist := fmt.Sprintf("s_dist_%02d", dID)
					if got, want := queryString(t, d, "SELECT ol_dist_info FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ? AND ol_number = ?", dID, oID, n),
						queryString(t, d, "SELECT "+dist+" FROM stock WHERE s_w_id = 1 AND s_i_id = ?", l.IID); got != want {
						t.Errorf("line %d ol_dist_info: got %q, want %q", n, got, want)
					}
					// TPC-C 2.4.2.2: S_QUANTITY rule, S_YTD, S_ORDER_CNT.
					b, got := before[i], read(l.IID)
					want := stock{qty: b.qty - int64(l.Quantity), ytd: b.ytd + int64(l.Quantity), orders: b.orders + 1, remote: b.remote}
					if b.qty < int64(l.Quantity)+10 {
						want.qty += 91
					}
					if got != want {
						t.Errorf("line %d stock: got %+v, want %+v (before %+v)", n, got, want, b)
					}
				}
			})

			t.Run("new-order rollback", func(t *testing.T) {
				oID := queryInt(t, d, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", dID)
				orders := queryInt(t, d, "SELECT COUNT(*) FROM orders")
				lines := queryInt(t, d, "SELECT COUNT(*) FROM order_line")
				stockQty := queryInt(t, d, "SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 12")
				rollbacks := comRollback(t, d)
				in := &tpcc.NewOrder{WID: 1, DID: dID, CID: 5, AllLocal: true, Rollback: true, EntryD: now, Lines: []tpcc.OrderLineInput{
					{IID: 12, SupplyWID: 1, Quantity: 4}, {IID: 13, SupplyWID: 1, Quantity: 4}, {IID: 14, SupplyWID: 1, Quantity: 4},
					{IID: 15, SupplyWID: 1, Quantity: 4}, {IID: tpcc.ItemCount + 1, SupplyWID: 1, Quantity: 4},
				}}
				err := s.NewOrder(ctx, in)
				if !errors.Is(err, tpcc.ErrRollback) {
					t.Fatalf("NewOrder with an unused item: got %v, want tpcc.ErrRollback", err)
				}
				if got := d.Classify(err); got != dialect.ClassRollback {
					t.Errorf("Classify: got %v, want %v", got, dialect.ClassRollback)
				}
				for _, c := range []struct {
					what      string
					got, want int64
				}{
					{"d_next_o_id", queryInt(t, d, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", dID), oID},
					{"orders", queryInt(t, d, "SELECT COUNT(*) FROM orders"), orders},
					{"order lines", queryInt(t, d, "SELECT COUNT(*) FROM order_line"), lines},
					{"s_quantity of the first item", queryInt(t, d, "SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 12"), stockQty},
				} {
					if c.got != c.want {
						t.Errorf("%s after rollback: got %d, want %d", c.what, c.got, c.want)
					}
				}
				if got := comRollback(t, d); got <= rollbacks {
					t.Errorf("Com_rollback: got %d, want more than %d", got, rollbacks)
				}
			})

			t.Run("payment by id, bad credit", func(t *testing.T) {
				cID := queryInt(t, d, "SELECT MIN(c_id) FROM customer WHERE c_w_id = 1 AND c_d_id = ? AND c_credit = 'BC'", dID)
				payment(t, d, s, &tpcc.Payment{WID: 1, DID: dID, CWID: 1, CDID: dID, CID: int(cID), Amount: 123456,
					HDate: now.Add(time.Duration(si*100+1) * time.Second)}, cID, true)
			})

			t.Run("payment by name", func(t *testing.T) {
				// The most frequent last name of the district, so that n >= 2.
				last := queryString(t, d, `SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = ?
					GROUP BY c_last ORDER BY COUNT(*) DESC, c_last LIMIT 1`, dID+2)
				cID := middleCustomer(t, d, 1, dID+2, last)
				payment(t, d, s, &tpcc.Payment{WID: 1, DID: dID, CWID: 1, CDID: dID + 2, ByName: true, CLast: last, Amount: 501,
					HDate: now.Add(time.Duration(si*100+2) * time.Second)}, cID, false)
			})

			t.Run("order-status", func(t *testing.T) {
				last := queryString(t, d, "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1500")
				for _, in := range []*tpcc.OrderStatus{
					{WID: 1, DID: 1, CID: 1500},
					{WID: 1, DID: 1, ByName: true, CLast: last},
				} {
					if err := s.OrderStatus(ctx, in); err != nil {
						t.Errorf("OrderStatus(%+v): %v", *in, err)
					}
				}
				// No customer of that name: an error, not a silent success.
				if err := s.OrderStatus(ctx, &tpcc.OrderStatus{WID: 1, DID: 1, ByName: true, CLast: "NOSUCHNAME"}); err == nil {
					t.Errorf("OrderStatus for an unknown last name: got nil, want an error")
				}
			})

			t.Run("delivery", func(t *testing.T) {
				delivery(t, d, s, &tpcc.Delivery{WID: 1, CarrierID: 7 + si, DeliveryD: now.Add(time.Hour)})
			})

			t.Run("delivery skips an empty district", func(t *testing.T) {
				if _, err := d.db.ExecContext(ctx, "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 10"); err != nil {
					t.Fatalf("empty district 10: %v", err)
				}
				delivery(t, d, s, &tpcc.Delivery{WID: 1, CarrierID: 2, DeliveryD: now.Add(2 * time.Hour)})
			})

			t.Run("stock-level", func(t *testing.T) {
				for _, threshold := range []int{10, 15, 20, 100} {
					in := &tpcc.StockLevel{WID: 1, DID: dID, Threshold: threshold}
					if err := s.StockLevel(ctx, in); err != nil {
						t.Fatalf("StockLevel: %v", err)
					}
					next := queryInt(t, d, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", dID)
					want := queryInt(t, d, `SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock
						WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ? AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < ?`,
						dID, next-20, next, threshold)
					if int64(in.LowStock) != want {
						t.Errorf("threshold %d: LowStock got %d, want %d", threshold, in.LowStock, want)
					}
					if threshold == 100 && want == 0 {
						t.Errorf("threshold 100: want a non-zero count to compare")
					}
				}
			})
		})
	}
}

func comRollback(t testing.TB, d *DB) int64 {
	t.Helper()
	var name string
	var v int64
	if err := d.db.QueryRowContext(context.Background(), "SHOW GLOBAL STATUS LIKE 'Com_rollback'").Scan(&name, &v); err != nil {
		t.Fatalf("read Com_rollback: %v", err)
	}
	return v
}

// middleCustomer returns the customer at position ceil(n/2) of those named
// last sorted by C_FIRST (TPC-C 2.5.2.2), sorted here by byte value.
func middleCustomer(t testing.TB, d *DB, w, dist int, last string) int64 {
	t.Helper()
	rows, err := d.db.QueryContext(context.Background(), "SELECT c_first, c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?", w, dist, last)
	if err != nil {
		t.Fatalf("customers named %s: %v", last, err)
	}
	defer rows.Close()
	type cust struct {
		first string
		id    int64
	}
	var cs []cust
	for rows.Next() {
		var c cust
		if err := rows.Scan(&c.first, &c.id); err != nil {
			t.Fatalf("customers named %s: %v", last, err)
		}
		cs = append(cs, c)
	}
	if len(cs) < 2 {
		t.Fatalf("customers named %s: got %d, want at least 2", last, len(cs))
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].first < cs[j].first })
	return cs[(len(cs)+1)/2-1].id
}

// payment runs in and checks its effects on customer cID (TPC-C 2.5.2.2).
func payment(t *testing.T, d *DB, s dialect.Session, in *tpcc.Payment, cID int64, badCredit bool) {
	t.Helper()
	ctx := context.Background()
	wYTD := cents(t, d, "w_ytd", "warehouse WHERE w_id = ?", in.WID)
	dYTD := cents(t, d, "d_ytd", "district WHERE d_w_id = ? AND d_id = ?", in.WID, in.DID)
	custWhere := "customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	balance := cents(t, d, "c_balance", custWhere, in.CWID, in.CDID, cID)
	ytdPayment := cents(t, d, "c_ytd_payment", custWhere, in.CWID, in.CDID, cID)
	payments := queryInt(t, d, "SELECT c_payment_cnt FROM "+custWhere, in.CWID, in.CDID, cID)
	oldData := queryString(t, d, "SELECT c_data FROM "+custWhere, in.CWID, in.CDID, cID)
	if got := queryString(t, d, "SELECT c_credit FROM "+custWhere, in.CWID, in.CDID, cID); (got == "BC") != badCredit {
		t.Fatalf("customer %d c_credit %q: test wants bad credit %v", cID, got, badCredit)
	}

	if err := s.Payment(ctx, in); err != nil {
		t.Fatalf("Payment: %v", err)
	}
	amt := int64(in.Amount)
	for _, c := range []struct {
		what      string
		got, want int64
	}{
		{"w_ytd", cents(t, d, "w_ytd", "warehouse WHERE w_id = ?", in.WID), wYTD + amt},
		{"d_ytd", cents(t, d, "d_ytd", "district WHERE d_w_id = ? AND d_id = ?", in.WID, in.DID), dYTD + amt},
		{"c_balance", cents(t, d, "c_balance", custWhere, in.CWID, in.CDID, cID), balance - amt},
		{"c_ytd_payment", cents(t, d, "c_ytd_payment", custWhere, in.CWID, in.CDID, cID), ytdPayment + amt},
		{"c_payment_cnt", queryInt(t, d, "SELECT c_payment_cnt FROM "+custWhere, in.CWID, in.CDID, cID), payments + 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.what, c.got, c.want)
		}
	}
	wantData := oldData
	if badCredit {
		wantData = fmt.Sprintf("%d %d %d %d %d %d.%02d %s", cID, in.CDID, in.CWID, in.DID, in.WID, amt/100, amt%100, oldData)
		if len(wantData) > 500 {
			wantData = wantData[:500]
		}
	}
	if got := queryString(t, d, "SELECT c_data FROM "+custWhere, in.CWID, in.CDID, cID); got != wantData {
		t.Errorf("c_data:\n got %.80q...\nwant %.80q...", got, wantData)
	}
	// H_DATA is W_NAME, 4 spaces, D_NAME.
	wantH := queryString(t, d, "SELECT CONCAT(w_name, '    ', d_name) FROM warehouse, district WHERE w_id = ? AND d_w_id = w_id AND d_id = ?", in.WID, in.DID)
	if got := queryString(t, d, "SELECT h_data FROM history WHERE h_c_id = ? AND h_c_d_id = ? AND h_c_w_id = ? AND h_d_id = ? AND h_w_id = ? AND h_date = ? AND h_amount * 100 = ?",
		cID, in.CDID, in.CWID, in.DID, in.WID, in.HDate, amt); got != wantH {
		t.Errorf("h_data: got %q, want %q", got, wantH)
	}
}

// delivery runs in and checks TPC-C 2.7.4.2 for every district.
func delivery(t *testing.T, d *DB, s dialect.Session, in *tpcc.Delivery) {
	t.Helper()
	ctx := context.Background()
	type district struct {
		oID, cID, balance, deliveries, amount int64
	}
	var before [11]*district
	wantSkipped := 0
	for dist := 1; dist <= 10; dist++ {
		oID := queryInt(t, d, "SELECT COALESCE(MIN(no_o_id), 0) FROM new_order WHERE no_w_id = ? AND no_d_id = ?", in.WID, dist)
		if oID == 0 {
			wantSkipped++
			continue
		}
		c := &district{oID: oID}
		c.cID = queryInt(t, d, "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", in.WID, dist, oID)
		c.balance = cents(t, d, "c_balance", "customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", in.WID, dist, c.cID)
		c.deliveries = queryInt(t, d, "SELECT c_delivery_cnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", in.WID, dist, c.cID)
		c.amount = cents(t, d, "COALESCE(SUM(ol_amount), 0)", "order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", in.WID, dist, oID)
		before[dist] = c
	}
	newOrders := queryInt(t, d, "SELECT COUNT(*) FROM new_order WHERE no_w_id = ?", in.WID)

	if err := s.Delivery(ctx, in); err != nil {
		t.Fatalf("Delivery: %v", err)
	}
	if in.Skipped != wantSkipped {
		t.Errorf("Skipped: got %d, want %d", in.Skipped, wantSkipped)
	}
	if got, want := queryInt(t, d, "SELECT COUNT(*) FROM new_order WHERE no_w_id = ?", in.WID), newOrders-int64(10-wantSkipped); got != want {
		t.Errorf("new_order rows: got %d, want %d", got, want)
	}
	for dist, c := range before {
		if c == nil {
			continue
		}
		if got := queryInt(t, d, "SELECT COUNT(*) FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", in.WID, dist, c.oID); got != 0 {
			t.Errorf("district %d: new_order %d still there", dist, c.oID)
		}
		if got := queryInt(t, d, "SELECT o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", in.WID, dist, c.oID); got != int64(in.CarrierID) {
			t.Errorf("district %d: o_carrier_id got %d, want %d", dist, got, in.CarrierID)
		}
		if got := queryInt(t, d, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? AND (ol_delivery_d IS NULL OR ol_delivery_d <> ?)",
			in.WID, dist, c.oID, in.DeliveryD); got != 0 {
			t.Errorf("district %d: %d order lines without ol_delivery_d %v", dist, got, in.DeliveryD)
		}
		if got := cents(t, d, "c_balance", "customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", in.WID, dist, c.cID); got != c.balance+c.amount {
			t.Errorf("district %d: c_balance got %d, want %d", dist, got, c.balance+c.amount)
		}
		if got := queryInt(t, d, "SELECT c_delivery_cnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", in.WID, dist, c.cID); got != c.deliveries+1 {
			t.Errorf("district %d: c_delivery_cnt got %d, want %d", dist, got, c.deliveries+1)
		}
	}
}

// TestSessionStateDoesNotLeak: sessions and loaders change session
// variables; their connections must not go back to the pool.
func TestSessionStateDoesNotLeak(t *testing.T) {
	d := smallDB(t)
	ctx := context.Background()
	d.db.SetMaxOpenConns(1) // the next query gets the closed one's connection, if pooled
	defer d.db.SetMaxOpenConns(0)
	tests := []struct {
		name  string
		open  func() (func() error, error)
		query string
		want  int64
	}{
		{"client-sql session autocommit", func() (func() error, error) {
			s, err := d.NewSession(ctx, dialect.StyleClientSQL)
			if err != nil {
				return nil, err
			}
			return s.Close, nil
		}, "SELECT @@autocommit", 1},
		{"loader unique_checks", func() (func() error, error) {
			l, err := d.NewLoader(ctx)
			if err != nil {
				return nil, err
			}
			return func() error { return l.Close(ctx) }, nil
		}, "SELECT @@unique_checks", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			closeFn, err := tc.open()
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if err := closeFn(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if got := queryInt(t, d, tc.query); got != tc.want {
				t.Errorf("%s on the next pooled connection: got %d, want %d", tc.query, got, tc.want)
			}
		})
	}
}

// TestStockQuantity checks oltplab_stock_quantity, which New-Order's
// procedure applies to a stock row that several lines name, against TPC-C
// 2.4.2.2's rule applied line after line: with lines enough, one sum of the
// quantities would wrap at the wrong point.
func TestStockQuantity(t *testing.T) {
	d := buildTest(t, 1)
	// Lines of item 5 at warehouse 1, and others (item 6; item 5 at
	// warehouse 2) in between that the function must pass over.
	qs := []int64{7, 4, 9, 9, 5, 9, 7, 4, 9, 5, 7, 9, 8, 7}
	want := int64(11)
	var items, whs, quantities []string
	for i, q := range qs {
		item, wh := 5, 1
		switch i % 5 {
		case 1:
			item = 6
		case 3:
			wh = 2
		default:
			if want >= q+10 {
				want -= q
			} else {
				want = want - q + 91
			}
		}
		items, whs, quantities = append(items, fmt.Sprint(item)), append(whs, fmt.Sprint(wh)), append(quantities, fmt.Sprint(q))
	}
	i, w, q := strings.Join(items, ","), strings.Join(whs, ","), strings.Join(quantities, ",")
	if got := queryInt(t, d, "SELECT oltplab_stock_quantity(11, 1, 5, ?, ?, ?)", i, w, q); got != want {
		t.Errorf("oltplab_stock_quantity(11, 1, 5, %s, %s, %s) = %d, want %d", i, w, q, got, want)
	}
}
