package tpcc_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// These tests run the client-side transactions, the consistency conditions
// and the metadata helpers against a real embedded SQLite database holding
// the standard one-warehouse population.

var (
	testLoad     = tpcc.Constants{CLast: 157, CID: 259, OLIID: 7911}
	testLoadTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	txTime       = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
)

// buildOne builds one warehouse into the empty database tg names, the way
// `oltplab build` does.
func buildOne(t *testing.T, tg dialect.Target) dialect.Database {
	testenv.Require(t, testenv.Long)
	t.Helper()
	ctx := context.Background()
	d, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.DropSchema(ctx); err != nil {
		t.Fatalf("drop schema: %v", err)
	}
	if err := d.CreateTables(ctx); err != nil {
		t.Fatalf("create tables: %v", err)
	}
	l, err := d.NewLoader(ctx)
	if err != nil {
		t.Fatalf("new loader: %v", err)
	}
	emit := func(r tpcc.Row) error { return l.Add(ctx, r) }
	g := tpcc.NewGenerator(7, testLoad, testLoadTime)
	err = g.Items(emit)
	if err == nil {
		err = g.Warehouse(1, emit)
	}
	if cerr := l.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := d.CreateIndexes(ctx); err != nil {
		t.Fatalf("create indexes: %v", err)
	}
	if err := d.Analyze(ctx); err != nil {
		t.Fatalf("analyze: %v", err)
	}
	return d
}

func scalar[T any](t *testing.T, q tpcc.Querier, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := q.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
	return v
}

func moneyNear(a, b float64) bool { return math.Abs(a-b) < 0.005 }

// checkedConn runs client-side transactions on a plain connection and
// fails the test when a statement gets a number of arguments other than
// its number of '?' placeholders. It records which statements ran.
type checkedConn struct {
	dialect.Conn
	t    *testing.T
	seen map[string]bool
}

func (c *checkedConn) check(sql string, args []any) {
	c.t.Helper()
	c.seen[sql] = true
	if got, want := len(args), strings.Count(sql, "?"); got != want {
		c.t.Errorf("%s: got %d arguments, want %d", sql, got, want)
	}
}

func (c *checkedConn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	c.check(sql, args)
	return c.Conn.Exec(ctx, sql, args...)
}

func (c *checkedConn) QueryRow(ctx context.Context, sql string, args ...any) tpcc.RowScanner {
	c.check(sql, args)
	return c.Conn.QueryRow(ctx, sql, args...)
}

func (c *checkedConn) Query(ctx context.Context, sql string, args ...any) (tpcc.Rows, error) {
	c.check(sql, args)
	return c.Conn.Query(ctx, sql, args...)
}

func (c *checkedConn) Begin(ctx context.Context) (tpcc.Tx, error) {
	if _, err := c.Conn.Exec(ctx, "BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *checkedConn) Commit(ctx context.Context) error {
	_, err := c.Conn.Exec(ctx, "COMMIT")
	return err
}

func (c *checkedConn) Rollback(ctx context.Context) error {
	_, err := c.Conn.Exec(ctx, "ROLLBACK")
	return err
}

func TestClientSQLOnSQLite(t *testing.T) {
	testenv.Require(t, testenv.Long)
	ctx := context.Background()
	d := buildOne(t, dbtest.SQLite(t))
	checkAll(t, d, true, nil)

	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()

	sessions := []struct {
		name string
		open func(t *testing.T) (dialect.Session, func())
	}{
		{"dialect session", func(t *testing.T) (dialect.Session, func()) {
			s, err := d.NewSession(ctx, dialect.StyleClientSQL)
			if err != nil {
				t.Fatalf("new session: %v", err)
			}
			return s, func() {}
		}},
		{"checked arguments", func(t *testing.T) (dialect.Session, func()) {
			pc, err := d.Connect(ctx)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			cc := &checkedConn{Conn: pc, t: t, seen: map[string]bool{}}
			st := tpcc.NewStatements(tpcc.SQLOptions{})
			return tpcc.NewClientSession(cc, st, pc.Close), func() {
				for _, q := range st.All() {
					if !cc.seen[q] {
						t.Errorf("statement never ran: %s", q)
					}
				}
			}
		}},
	}
	for _, ss := range sessions {
		t.Run(ss.name, func(t *testing.T) {
			s, done := ss.open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("close session: %v", err)
				}
			}()
			runTransactions(t, d, c, s)
			done()
		})
	}

	// After transactions every condition but 3.3.2.11 holds, and 3.3.2.11
	// (only right after the build) no longer does: Deliveries moved it.
	checkAll(t, d, false, nil)
	checkAll(t, d, true, map[string]bool{"3.3.2.11": true})

	// A damaged W_YTD breaks exactly the two conditions that involve it.
	if _, err := c.Exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1"); err != nil {
		t.Fatal(err)
	}
	checkAll(t, d, false, map[string]bool{"3.3.2.1": true, "3.3.2.8": true})
}

// runTransactions runs each transaction on s and holds the database, read
// through c, against the specification.
func runTransactions(t *testing.T, d dialect.Database, c tpcc.Querier, s dialect.Session) {
	t.Run("new-order", func(t *testing.T) { testNewOrder(t, d, c, s) })
	t.Run("new-order rollback", func(t *testing.T) { testNewOrderRollback(t, d, c, s) })
	t.Run("new-order repeated items", func(t *testing.T) { testNewOrderRepeatedItems(t, d, c, s) })
	t.Run("payment by id", func(t *testing.T) { testPaymentByID(t, c, s) })
	t.Run("payment by name", func(t *testing.T) { testPaymentByName(t, c, s) })
	t.Run("payment bad credit", func(t *testing.T) { testPaymentBadCredit(t, c, s) })
	t.Run("order-status", func(t *testing.T) { testOrderStatus(t, c, s) })
	t.Run("delivery", func(t *testing.T) { testDelivery(t, c, s) })
	t.Run("stock-level", func(t *testing.T) { testStockLevel(t, c, s) })
}

// checkAll runs CheckAll in one snapshot and wants exactly the clauses in
// failing to fail (with one violating warehouse or district each at most).
func checkAll(t *testing.T, d dialect.Database, afterBuild bool, failing map[string]bool) {
	t.Helper()
	ctx := context.Background()
	var res []tpcc.CheckResult
	err := d.Snapshot(ctx, func(q tpcc.Querier) error {
		var err error
		res, err = tpcc.CheckAll(ctx, q, d.Caps().MoneyTolerance, afterBuild)
		return err
	})
	if err != nil {
		t.Fatalf("CheckAll: %v", err)
	}
	if got, want := len(res), len(tpcc.Conditions); got != want {
		t.Fatalf("results: got %d, want %d", got, want)
	}
	for _, r := range res {
		wantSkip := !afterBuild && r.Clause == "3.3.2.11"
		if r.Skipped != wantSkip {
			t.Errorf("%s skipped: got %v, want %v", r.Clause, r.Skipped, wantSkip)
		}
		if r.Skipped {
			continue
		}
		if got, want := !r.Passed, failing[r.Clause]; got != want {
			t.Errorf("%s %s failed: got %v, want %v (%d violations: %s)", r.Clause, r.Name, got, want, r.Violations, r.Detail)
		}
		if !r.Passed && (r.Violations < 1 || !strings.Contains(r.Detail, "w_id=1")) {
			t.Errorf("%s: got %d violations, detail %q; want a detail naming w_id=1", r.Clause, r.Violations, r.Detail)
		}
	}
}

type stockState struct {
	qty, ytd, orderCnt, remoteCnt int64
}

func readStock(t *testing.T, c tpcc.Querier, iID int) stockState {
	t.Helper()
	var s stockState
	err := c.QueryRow(context.Background(), "SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = ?",
		int64(iID)).Scan(&s.qty, &s.ytd, &s.orderCnt, &s.remoteCnt)
	if err != nil {
		t.Fatalf("read stock %d: %v", iID, err)
	}
	return s
}

// testNewOrder places one order in every district and holds the database
// against clause 2.4.2.2.
func testNewOrder(t *testing.T, d dialect.Database, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	for did := 1; did <= 10; did++ {
		t.Run(fmt.Sprintf("d=%d", did), func(t *testing.T) {
			next := scalar[int64](t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", int64(did))
			in := &tpcc.NewOrder{WID: 1, DID: did, CID: did * 3, AllLocal: true, EntryD: txTime}
			before := map[int]stockState{}
			for k := 1; k <= 5; k++ {
				// Quantities 6..10 and an item whose stock is low exercise
				// both branches of the S_QUANTITY rule.
				l := tpcc.OrderLineInput{IID: did*100 + k, SupplyWID: 1, Quantity: 5 + k}
				in.Lines = append(in.Lines, l)
				before[l.IID] = readStock(t, c, l.IID)
			}
			if err := s.NewOrder(ctx, in); err != nil {
				t.Fatalf("new-order: %v (class %v)", err, d.Classify(err))
			}
			if got, want := scalar[int64](t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", int64(did)), next+1; got != want {
				t.Errorf("d_next_o_id: got %d, want %d", got, want)
			}
			var cID, olCnt, allLocal, carrierNull int64
			err := c.QueryRow(ctx, "SELECT o_c_id, o_ol_cnt, o_all_local, CASE WHEN o_carrier_id IS NULL THEN 1 ELSE 0 END FROM orders WHERE o_w_id = 1 AND o_d_id = ? AND o_id = ?",
				int64(did), next).Scan(&cID, &olCnt, &allLocal, &carrierNull)
			if err != nil {
				t.Fatalf("read order %d: %v", next, err)
			}
			if cID != int64(in.CID) || olCnt != 5 || allLocal != 1 || carrierNull != 1 {
				t.Errorf("order: got c_id=%d ol_cnt=%d all_local=%d carrier_null=%d, want %d 5 1 1", cID, olCnt, allLocal, carrierNull, in.CID)
			}
			if got := scalar[int64](t, c, "SELECT count(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = ? AND no_o_id = ?", int64(did), next); got != 1 {
				t.Errorf("new_order rows: got %d, want 1", got)
			}
			for n, l := range in.Lines {
				var iID, qty, deliveryNull int64
				var amount float64
				var dist string
				err := c.QueryRow(ctx, "SELECT ol_i_id, ol_quantity, ol_amount, ol_dist_info, CASE WHEN ol_delivery_d IS NULL THEN 1 ELSE 0 END FROM order_line "+
					"WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ? AND ol_number = ?", int64(did), next, int64(n+1)).Scan(&iID, &qty, &amount, &dist, &deliveryNull)
				if err != nil {
					t.Fatalf("read order line %d: %v", n+1, err)
				}
				price := scalar[float64](t, c, "SELECT i_price FROM item WHERE i_id = ?", int64(l.IID))
				wantDist := scalar[string](t, c, fmt.Sprintf("SELECT s_dist_%02d FROM stock WHERE s_w_id = 1 AND s_i_id = ?", did), int64(l.IID))
				if iID != int64(l.IID) || qty != int64(l.Quantity) || !moneyNear(amount, float64(l.Quantity)*price) || dist != wantDist || deliveryNull != 1 {
					t.Errorf("line %d: got i=%d qty=%d amount=%.2f dist=%q delivery_null=%d, want %d %d %.2f %q 1",
						n+1, iID, qty, amount, dist, deliveryNull, l.IID, l.Quantity, float64(l.Quantity)*price, wantDist)
				}
				b, a := before[l.IID], readStock(t, c, l.IID)
				wantQty := b.qty - int64(l.Quantity)
				if b.qty < int64(l.Quantity)+10 {
					wantQty += 91
				}
				want := stockState{qty: wantQty, ytd: b.ytd + int64(l.Quantity), orderCnt: b.orderCnt + 1, remoteCnt: b.remoteCnt}
				if a != want {
					t.Errorf("stock %d: got %+v, want %+v (before %+v)", l.IID, a, want, b)
				}
			}
		})
	}
}

// testNewOrderRepeatedItems places orders of every size from 1 to 15
// lines, their items in descending order and the first one repeated on
// the last line, and wants each stock row updated as if line after line
// (clause 2.4.2.2), and one order line per input line.
func testNewOrderRepeatedItems(t *testing.T, d dialect.Database, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	const did = 7
	for n := 1; n <= tpcc.MaxOrderLines; n++ {
		t.Run(fmt.Sprintf("lines=%d", n), func(t *testing.T) {
			next := scalar[int64](t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", int64(did))
			in := &tpcc.NewOrder{WID: 1, DID: did, CID: 11, AllLocal: true, EntryD: txTime}
			want := map[int]stockState{}
			for k := range n {
				iID := 5000 + 100*n - k
				if k == n-1 && n > 1 {
					iID = in.Lines[0].IID
				}
				l := tpcc.OrderLineInput{IID: iID, SupplyWID: 1, Quantity: 10 - k%10}
				in.Lines = append(in.Lines, l)
				st, ok := want[iID]
				if !ok {
					st = readStock(t, c, iID)
				}
				qty := int64(l.Quantity)
				if st.qty >= qty+10 {
					st.qty -= qty
				} else {
					st.qty = st.qty - qty + 91
				}
				st.ytd += qty
				st.orderCnt++
				want[iID] = st
			}
			if err := s.NewOrder(ctx, in); err != nil {
				t.Fatalf("new-order: %v (class %v)", err, d.Classify(err))
			}
			for iID, w := range want {
				if got := readStock(t, c, iID); got != w {
					t.Errorf("stock %d: got %+v, want %+v", iID, got, w)
				}
			}
			if got := scalar[int64](t, c, "SELECT count(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ?", int64(did), next); got != int64(n) {
				t.Errorf("order lines: got %d, want %d", got, n)
			}
		})
	}
}

// testNewOrderRollback: an unused item number rolls the whole order back
// (clause 2.4.2.3).
func testNewOrderRollback(t *testing.T, d dialect.Database, c tpcc.Querier, s dialect.Session) {
	next := scalar[int64](t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4")
	before := readStock(t, c, 77)
	in := &tpcc.NewOrder{WID: 1, DID: 4, CID: 5, AllLocal: true, Rollback: true, EntryD: txTime,
		Lines: []tpcc.OrderLineInput{{IID: 77, SupplyWID: 1, Quantity: 3}, {IID: 100001, SupplyWID: 1, Quantity: 1}}}
	err := s.NewOrder(context.Background(), in)
	if !errors.Is(err, tpcc.ErrRollback) {
		t.Fatalf("got %v, want ErrRollback", err)
	}
	if got := d.Classify(err); got != dialect.ClassRollback {
		t.Errorf("class: got %v, want %v", got, dialect.ClassRollback)
	}
	if got := scalar[int64](t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4"); got != next {
		t.Errorf("d_next_o_id: got %d, want %d (unchanged)", got, next)
	}
	if got := scalar[int64](t, c, "SELECT count(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = ?", next); got != 0 {
		t.Errorf("orders with o_id %d: got %d, want 0", next, got)
	}
	if got := readStock(t, c, 77); got != before {
		t.Errorf("stock 77: got %+v, want %+v (unchanged)", got, before)
	}
}

type customerState struct {
	balance, ytdPayment float64
	paymentCnt          int64
	data                string
}

func readCustomer(t *testing.T, c tpcc.Querier, did, cid int64) customerState {
	t.Helper()
	var s customerState
	err := c.QueryRow(context.Background(), "SELECT c_balance, c_ytd_payment, c_payment_cnt, c_data FROM customer WHERE c_w_id = 1 AND c_d_id = ? AND c_id = ?",
		did, cid).Scan(&s.balance, &s.ytdPayment, &s.paymentCnt, &s.data)
	if err != nil {
		t.Fatalf("read customer %d/%d: %v", did, cid, err)
	}
	return s
}

func checkPaid(t *testing.T, before, after customerState, amount tpcc.Money) {
	t.Helper()
	if !moneyNear(after.balance, before.balance-amount.Float()) || !moneyNear(after.ytdPayment, before.ytdPayment+amount.Float()) ||
		after.paymentCnt != before.paymentCnt+1 {
		t.Errorf("customer: got balance %.2f ytd %.2f cnt %d, want %.2f %.2f %d", after.balance, after.ytdPayment, after.paymentCnt,
			before.balance-amount.Float(), before.ytdPayment+amount.Float(), before.paymentCnt+1)
	}
}

// testPaymentByID holds one Payment against clause 2.5.2.2.
func testPaymentByID(t *testing.T, c tpcc.Querier, s dialect.Session) {
	const did, cid = 3, 9
	wYTD := scalar[float64](t, c, "SELECT w_ytd FROM warehouse WHERE w_id = 1")
	dYTD := scalar[float64](t, c, "SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = ?", int64(did))
	before := readCustomer(t, c, did, cid)
	hist := scalar[int64](t, c, "SELECT count(*) FROM history WHERE h_c_w_id = 1 AND h_c_d_id = ? AND h_c_id = ?", int64(did), int64(cid))
	in := &tpcc.Payment{WID: 1, DID: did, CWID: 1, CDID: did, CID: cid, Amount: 1234, HDate: txTime}
	if err := s.Payment(context.Background(), in); err != nil {
		t.Fatalf("payment: %v", err)
	}
	if got := scalar[float64](t, c, "SELECT w_ytd FROM warehouse WHERE w_id = 1"); !moneyNear(got, wYTD+12.34) {
		t.Errorf("w_ytd: got %.2f, want %.2f", got, wYTD+12.34)
	}
	if got := scalar[float64](t, c, "SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = ?", int64(did)); !moneyNear(got, dYTD+12.34) {
		t.Errorf("d_ytd: got %.2f, want %.2f", got, dYTD+12.34)
	}
	after := readCustomer(t, c, did, cid)
	checkPaid(t, before, after, in.Amount)
	if got := scalar[int64](t, c, "SELECT count(*) FROM history WHERE h_c_w_id = 1 AND h_c_d_id = ? AND h_c_id = ?", int64(did), int64(cid)); got != hist+1 {
		t.Errorf("history rows: got %d, want %d", got, hist+1)
	}
	wantData := scalar[string](t, c, "SELECT w_name FROM warehouse WHERE w_id = 1") + "    " +
		scalar[string](t, c, "SELECT d_name FROM district WHERE d_w_id = 1 AND d_id = ?", int64(did))
	gotData := scalar[string](t, c, "SELECT h_data FROM history WHERE h_c_w_id = 1 AND h_c_d_id = ? AND h_c_id = ? AND h_d_id = ? AND h_amount > 12.33 AND h_amount < 12.35",
		int64(did), int64(cid), int64(did))
	if gotData != wantData {
		t.Errorf("h_data: got %q, want %q", gotData, wantData)
	}
}

// testPaymentByName: the customer at position ceil(n/2) of those with the
// last name, sorted by C_FIRST, pays (clause 2.5.2.2).
func testPaymentByName(t *testing.T, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	const did = 5
	// The most common last name of the district, so that there is a choice.
	last := scalar[string](t, c, "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = ? GROUP BY c_last ORDER BY count(*) DESC, c_last LIMIT 1", int64(did))
	rows, err := c.Query(ctx, "SELECT c_id, c_first FROM customer WHERE c_w_id = 1 AND c_d_id = ? AND c_last = ?", int64(did), last)
	if err != nil {
		t.Fatal(err)
	}
	type named struct {
		id    int64
		first string
	}
	var all []named
	for rows.Next() {
		var n named
		if err := rows.Scan(&n.id, &n.first); err != nil {
			t.Fatal(err)
		}
		all = append(all, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 {
		t.Fatalf("customers named %s: got %d, want at least 2 for the test to mean something", last, len(all))
	}
	sort.Slice(all, func(i, j int) bool { return all[i].first < all[j].first })
	want := all[(len(all)+1)/2-1].id
	before := map[int64]customerState{}
	for _, n := range all {
		before[n.id] = readCustomer(t, c, did, n.id)
	}
	in := &tpcc.Payment{WID: 1, DID: did, CWID: 1, CDID: did, ByName: true, CLast: last, Amount: 500, HDate: txTime}
	if err := s.Payment(ctx, in); err != nil {
		t.Fatalf("payment: %v", err)
	}
	for _, n := range all {
		after := readCustomer(t, c, did, n.id)
		if n.id == want {
			checkPaid(t, before[n.id], after, in.Amount)
		} else if after.paymentCnt != before[n.id].paymentCnt {
			t.Errorf("customer %d of %d named %s paid; want customer %d", n.id, len(all), last, want)
		}
	}
}

// testPaymentBadCredit: the payment's history goes at the left of C_DATA
// of a "BC" customer, which stays within 500 characters (clause 2.5.2.2).
func testPaymentBadCredit(t *testing.T, c tpcc.Querier, s dialect.Session) {
	const did = 6
	cid := scalar[int64](t, c, "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = ? AND c_credit = 'BC' ORDER BY c_id LIMIT 1", int64(did))
	before := readCustomer(t, c, did, cid)
	in := &tpcc.Payment{WID: 1, DID: did, CWID: 1, CDID: did, CID: int(cid), Amount: 105, HDate: txTime}
	if err := s.Payment(context.Background(), in); err != nil {
		t.Fatalf("payment: %v", err)
	}
	after := readCustomer(t, c, did, cid)
	checkPaid(t, before, after, in.Amount)
	prefix := fmt.Sprintf("%d %d 1 %d 1 1.05 ", cid, did, did)
	want := prefix + before.data
	if len(want) > 500 {
		want = want[:500]
	}
	if after.data != want {
		t.Errorf("c_data: got %q (len %d), want %q (len %d)", after.data, len(after.data), want, len(want))
	}
}

// testOrderStatus runs Order-Status by number and by name (clause 2.6).
func testOrderStatus(t *testing.T, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	for _, in := range []*tpcc.OrderStatus{
		{WID: 1, DID: 2, CID: 6},
		{WID: 1, DID: 7, ByName: true, CLast: tpcc.LastName(3)},
	} {
		if err := s.OrderStatus(ctx, in); err != nil {
			t.Errorf("order-status %+v: %v", in, err)
		}
	}
	// A last name no customer has is an error, not a silent success.
	if err := s.OrderStatus(ctx, &tpcc.OrderStatus{WID: 1, DID: 1, ByName: true, CLast: "NOSUCHNAME"}); !errors.Is(err, tpcc.ErrNoRows) {
		t.Errorf("order-status of an unknown name: got %v, want ErrNoRows", err)
	}
}

// testDelivery delivers the oldest undelivered order of every district
// (clause 2.7.4.2).
func testDelivery(t *testing.T, c tpcc.Querier, s dialect.Session) {
	type district struct {
		oID, cID int64
		amount   float64
		balance  float64
	}
	before := map[int64]district{}
	for did := int64(1); did <= 10; did++ {
		var x district
		x.oID = scalar[int64](t, c, "SELECT min(no_o_id) FROM new_order WHERE no_w_id = 1 AND no_d_id = ?", did)
		x.cID = scalar[int64](t, c, "SELECT o_c_id FROM orders WHERE o_w_id = 1 AND o_d_id = ? AND o_id = ?", did, x.oID)
		x.amount = scalar[float64](t, c, "SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ?", did, x.oID)
		x.balance = readCustomer(t, c, did, x.cID).balance
		before[did] = x
	}
	newOrders := scalar[int64](t, c, "SELECT count(*) FROM new_order")
	in := &tpcc.Delivery{WID: 1, CarrierID: 7, DeliveryD: txTime}
	if err := s.Delivery(context.Background(), in); err != nil {
		t.Fatalf("delivery: %v", err)
	}
	if in.Skipped != 0 {
		t.Errorf("skipped: got %d, want 0", in.Skipped)
	}
	if got, want := scalar[int64](t, c, "SELECT count(*) FROM new_order"), newOrders-10; got != want {
		t.Errorf("new_order rows: got %d, want %d", got, want)
	}
	for did, x := range before {
		if got := scalar[int64](t, c, "SELECT o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = ? AND o_id = ?", did, x.oID); got != 7 {
			t.Errorf("d=%d o_carrier_id: got %d, want 7", did, got)
		}
		if got := scalar[int64](t, c, "SELECT count(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ? AND ol_delivery_d IS NULL", did, x.oID); got != 0 {
			t.Errorf("d=%d undelivered lines: got %d, want 0", did, got)
		}
		if got := readCustomer(t, c, did, x.cID).balance; !moneyNear(got, x.balance+x.amount) {
			t.Errorf("d=%d customer %d balance: got %.2f, want %.2f", did, x.cID, got, x.balance+x.amount)
		}
	}
}

// testStockLevel compares Stock-Level with the count computed here from
// the rows (clause 2.8.2.2).
func testStockLevel(t *testing.T, c tpcc.Querier, s dialect.Session) {
	ctx := context.Background()
	const did = 2
	for _, threshold := range []int{10, 15, 20, 101} {
		t.Run(fmt.Sprintf("threshold=%d", threshold), func(t *testing.T) {
			next := scalar[int64](t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = ?", int64(did))
			rows, err := c.Query(ctx, "SELECT ol_i_id FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ?",
				int64(did), next-20, next)
			if err != nil {
				t.Fatal(err)
			}
			items := map[int64]bool{}
			for rows.Next() {
				var i int64
				if err := rows.Scan(&i); err != nil {
					t.Fatal(err)
				}
				items[i] = true
			}
			rows.Close()
			want := 0
			for i := range items {
				if readStock(t, c, int(i)).qty < int64(threshold) {
					want++
				}
			}
			in := &tpcc.StockLevel{WID: 1, DID: did, Threshold: threshold}
			if err := s.StockLevel(ctx, in); err != nil {
				t.Fatalf("stock-level: %v", err)
			}
			if in.LowStock != want {
				t.Errorf("low stock: got %d, want %d (of %d items)", in.LowStock, want, len(items))
			}
			if threshold == 101 && want != len(items) {
				t.Errorf("threshold above every S_QUANTITY: got %d, want all %d items", want, len(items))
			}
		})
	}
}

func TestMetaOnSQLite(t *testing.T) {
	ctx := context.Background()
	d, err := dialect.Open(ctx, dbtest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.DropSchema(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// No table: the driver's error, wrapped, not a *SchemaError.
	if _, err := c.Exec(ctx, "DROP TABLE "+tpcc.MetaTable); err != nil {
		t.Fatal(err)
	}
	_, err = tpcc.ReadMeta(ctx, c)
	var se *tpcc.SchemaError
	if err == nil || errors.As(err, &se) {
		t.Errorf("without %s: got %v, want the driver's error", tpcc.MetaTable, err)
	}

	if err := d.DropSchema(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	// An empty table: a build that did not finish.
	_, err = tpcc.ReadMeta(ctx, c)
	if !errors.As(err, &se) || se.Kind != tpcc.SchemaMissing {
		t.Errorf("empty %s: got %v, want a SchemaMissing error", tpcc.MetaTable, err)
	}

	m := tpcc.Meta{SchemaVersion: tpcc.SchemaVersion, Warehouses: 3, LoadSeed: 1 << 63, Load: testLoad,
		ToolVersion: "v1.2.3", BuiltAt: testLoadTime.Add(123456 * time.Microsecond), Dialect: d.Name(), Procedures: false}
	for i := 0; i < 2; i++ { // writing twice replaces
		if err := tpcc.WriteMeta(ctx, c, m); err != nil {
			t.Fatalf("write meta: %v", err)
		}
		m.Warehouses++
	}
	m.Warehouses--
	got, err := tpcc.ReadMeta(ctx, c)
	if err != nil {
		t.Fatalf("read meta: %v", err)
	}
	if !got.BuiltAt.Equal(m.BuiltAt) {
		t.Errorf("BuiltAt: got %v, want %v", got.BuiltAt, m.BuiltAt)
	}
	got.BuiltAt, m.BuiltAt = time.Time{}, time.Time{}
	if got != m {
		t.Errorf("got %+v, want %+v", got, m)
	}

	if _, err := c.Exec(ctx, "UPDATE "+tpcc.MetaTable+" SET v = '2' WHERE k = 'schema_version'"); err != nil {
		t.Fatal(err)
	}
	_, err = tpcc.ReadMeta(ctx, c)
	if !errors.As(err, &se) || se.Kind != tpcc.SchemaVersionMismatch || se.Found != 2 {
		t.Errorf("format 2: got %v, want a SchemaVersionMismatch error", err)
	}
}
