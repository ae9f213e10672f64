package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

var runTime = time.Date(2024, 5, 7, 10, 11, 12, 0, time.UTC)

func newSession(t *testing.T, d *Database) dialect.Session {
	t.Helper()
	s, err := d.NewSession(context.Background(), dialect.StyleClientSQL)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func plainConn(t *testing.T, d *Database) dialect.Conn {
	t.Helper()
	c, err := d.Connect(context.Background())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func queryInt(t *testing.T, c tpcc.Querier, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func queryFloat(t *testing.T, c tpcc.Querier, q string, args ...any) float64 {
	t.Helper()
	var f float64
	if err := c.QueryRow(context.Background(), q, args...).Scan(&f); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return f
}

func TestNewOrder(t *testing.T) {
	d := openBuilt(t)
	s, c := newSession(t, d), plainConn(t, d)
	ctx := context.Background()
	const w, dist = 1, 3
	nextOID := queryInt(t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dist)
	stockBefore := queryInt(t, c, "SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 77")

	in := &tpcc.NewOrder{WID: w, DID: dist, CID: 1234, AllLocal: true, EntryD: runTime, Lines: []tpcc.OrderLineInput{
		{IID: 77, SupplyWID: 1, Quantity: 3}, {IID: 1001, SupplyWID: 1, Quantity: 1}, {IID: 5, SupplyWID: 1, Quantity: 10},
		{IID: 99999, SupplyWID: 1, Quantity: 2}, {IID: 4242, SupplyWID: 1, Quantity: 7}, {IID: 31, SupplyWID: 1, Quantity: 4},
	}}
	if err := s.NewOrder(ctx, in); err != nil {
		t.Fatalf("NewOrder: %v", err)
	}
	if got, want := queryInt(t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", w, dist), nextOID+1; got != want {
		t.Errorf("d_next_o_id: got %d, want %d", got, want)
	}
	if got, want := queryInt(t, c, "SELECT o_ol_cnt FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ? AND o_c_id = 1234 AND o_carrier_id IS NULL", w, dist, nextOID), int64(len(in.Lines)); got != want {
		t.Errorf("o_ol_cnt: got %d, want %d", got, want)
	}
	if got, want := queryInt(t, c, "SELECT count(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", w, dist, nextOID), int64(len(in.Lines)); got != want {
		t.Errorf("order lines: got %d, want %d", got, want)
	}
	if got := queryInt(t, c, "SELECT count(*) FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", w, dist, nextOID); got != 1 {
		t.Errorf("new_order rows: got %d, want 1", got)
	}
	if got, want := queryInt(t, c, "SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 77"), stockBefore+1; got != want {
		t.Errorf("s_order_cnt of item 77: got %d, want %d", got, want)
	}
	var entry string
	if err := c.QueryRow(ctx, "SELECT typeof(o_entry_d) || ' ' || o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", w, dist, nextOID).Scan(&entry); err != nil {
		t.Fatal(err)
	}
	if want := "text " + runTime.Format("2006-01-02 15:04:05"); entry != want {
		t.Errorf("o_entry_d: got %q, want %q", entry, want)
	}
}

func TestNewOrderRollback(t *testing.T) {
	d := openBuilt(t)
	s, c := newSession(t, d), plainConn(t, d)
	ctx := context.Background()
	state := func() string {
		return fmt.Sprint(
			queryInt(t, c, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2"),
			queryInt(t, c, "SELECT count(*) FROM orders"),
			queryInt(t, c, "SELECT count(*) FROM new_order"),
			queryInt(t, c, "SELECT count(*) FROM order_line"),
			queryInt(t, c, "SELECT sum(s_order_cnt) FROM stock"))
	}
	before := state()
	// TPC-C 2.4.1.4: the last line carries an unused item number.
	in := &tpcc.NewOrder{WID: 1, DID: 2, CID: 7, AllLocal: true, Rollback: true, EntryD: runTime, Lines: []tpcc.OrderLineInput{
		{IID: 10, SupplyWID: 1, Quantity: 1}, {IID: 20, SupplyWID: 1, Quantity: 1}, {IID: 30, SupplyWID: 1, Quantity: 1},
		{IID: 40, SupplyWID: 1, Quantity: 1}, {IID: tpcc.ItemCount + 1, SupplyWID: 1, Quantity: 1},
	}}
	err := s.NewOrder(ctx, in)
	if !errors.Is(err, tpcc.ErrRollback) {
		t.Fatalf("NewOrder with an unused item: got %v, want tpcc.ErrRollback", err)
	}
	if got, want := d.Classify(err), dialect.ClassRollback; got != want {
		t.Errorf("Classify: got %v, want %v", got, want)
	}
	if after := state(); after != before {
		t.Errorf("state after rollback: got %s, want %s", after, before)
	}
	// The session is usable afterwards.
	in.Rollback, in.Lines[4].IID = false, 50
	if err := s.NewOrder(ctx, in); err != nil {
		t.Fatalf("NewOrder after a rollback: %v", err)
	}
}

func TestPayment(t *testing.T) {
	tests := []struct {
		name string
		in   tpcc.Payment
	}{
		{"by id, home", tpcc.Payment{WID: 1, DID: 4, CWID: 1, CDID: 4, CID: 42, Amount: 123456}},
		{"by id, other district", tpcc.Payment{WID: 1, DID: 4, CWID: 1, CDID: 9, CID: 2999, Amount: 100}},
		{"by name", tpcc.Payment{WID: 1, DID: 5, CWID: 1, CDID: 5, ByName: true, Amount: 500000}},
	}
	d := openBuilt(t)
	s, c := newSession(t, d), plainConn(t, d)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.HDate = runTime
			if in.ByName {
				// A last name that exists in the district (customer 1..1000 names are sequential).
				var last string
				if err := c.QueryRow(ctx, "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = ? AND c_id = 17", in.CDID).Scan(&last); err != nil {
					t.Fatal(err)
				}
				in.CLast = last
				// TPC-C 2.5.2.2: the customer at position ceil(n/2) sorted by C_FIRST.
				ids := []int64{}
				rows, err := c.Query(ctx, "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = ? AND c_last = ? ORDER BY c_first", in.CDID, last)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var id int64
					if err := rows.Scan(&id); err != nil {
						t.Fatal(err)
					}
					ids = append(ids, id)
				}
				rows.Close()
				in.CID = int(ids[(len(ids)+1)/2-1])
			}
			amount := in.Amount.Float()
			wYTD := queryFloat(t, c, "SELECT w_ytd FROM warehouse WHERE w_id = ?", in.WID)
			dYTD := queryFloat(t, c, "SELECT d_ytd FROM district WHERE d_w_id = ? AND d_id = ?", in.WID, in.DID)
			bal := queryFloat(t, c, "SELECT c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", in.CWID, in.CDID, in.CID)
			hist := queryInt(t, c, "SELECT count(*) FROM history")
			if err := s.Payment(ctx, &in); err != nil {
				t.Fatalf("Payment: %v", err)
			}
			checks := []struct {
				what      string
				got, want float64
			}{
				{"w_ytd", queryFloat(t, c, "SELECT w_ytd FROM warehouse WHERE w_id = ?", in.WID), wYTD + amount},
				{"d_ytd", queryFloat(t, c, "SELECT d_ytd FROM district WHERE d_w_id = ? AND d_id = ?", in.WID, in.DID), dYTD + amount},
				{"c_balance", queryFloat(t, c, "SELECT c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", in.CWID, in.CDID, in.CID), bal - amount},
				{"history rows", float64(queryInt(t, c, "SELECT count(*) FROM history")), float64(hist + 1)},
			}
			for _, ch := range checks {
				if math.Abs(ch.got-ch.want) > d.Caps().MoneyTolerance {
					t.Errorf("%s: got %.2f, want %.2f", ch.what, ch.got, ch.want)
				}
			}
		})
	}
}

func TestOrderStatus(t *testing.T) {
	d := openBuilt(t)
	s, c := newSession(t, d), plainConn(t, d)
	ctx := context.Background()
	var last string
	if err := c.QueryRow(ctx, "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 500").Scan(&last); err != nil {
		t.Fatal(err)
	}
	for _, in := range []tpcc.OrderStatus{
		{WID: 1, DID: 6, CID: 500},
		{WID: 1, DID: 6, ByName: true, CLast: last},
	} {
		t.Run(fmt.Sprintf("byName=%v", in.ByName), func(t *testing.T) {
			if err := s.OrderStatus(ctx, &in); err != nil {
				t.Fatalf("OrderStatus: %v", err)
			}
		})
	}
}

func TestDelivery(t *testing.T) {
	d := openBuilt(t)
	s, c := newSession(t, d), plainConn(t, d)
	ctx := context.Background()
	newOrders := queryInt(t, c, "SELECT count(*) FROM new_order WHERE no_w_id = 1")
	in := &tpcc.Delivery{WID: 1, CarrierID: 7, DeliveryD: runTime}
	if err := s.Delivery(ctx, in); err != nil {
		t.Fatalf("Delivery: %v", err)
	}
	if in.Skipped != 0 {
		t.Errorf("Skipped: got %d, want 0", in.Skipped)
	}
	if got, want := queryInt(t, c, "SELECT count(*) FROM new_order WHERE no_w_id = 1"), newOrders-tpcc.DistrictsPerWarehouse; got != want {
		t.Errorf("new_order rows: got %d, want %d", got, want)
	}
	// TPC-C 4.3.3.1: the oldest undelivered order of each district is 2101.
	if got := queryInt(t, c, "SELECT count(*) FROM orders WHERE o_w_id = 1 AND o_id = ? AND o_carrier_id = 7", tpcc.FirstNewOrderID); got != tpcc.DistrictsPerWarehouse {
		t.Errorf("orders %d with carrier 7: got %d, want %d", tpcc.FirstNewOrderID, got, tpcc.DistrictsPerWarehouse)
	}
	if got := queryInt(t, c, "SELECT count(*) FROM order_line WHERE ol_w_id = 1 AND ol_o_id = ? AND ol_delivery_d IS NULL", tpcc.FirstNewOrderID); got != 0 {
		t.Errorf("undelivered lines of order %d: got %d, want 0", tpcc.FirstNewOrderID, got)
	}
	if got := queryInt(t, c, "SELECT count(*) FROM new_order WHERE no_w_id = 1 AND no_o_id = ?", tpcc.FirstNewOrderID); got != 0 {
		t.Errorf("new_order rows of order %d: got %d, want 0", tpcc.FirstNewOrderID, got)
	}
}

func TestStockLevel(t *testing.T) {
	d := openBuilt(t)
	s, c := newSession(t, d), plainConn(t, d)
	ctx := context.Background()
	for _, threshold := range []int{10, 15, 20} {
		t.Run(fmt.Sprint("threshold=", threshold), func(t *testing.T) {
			in := &tpcc.StockLevel{WID: 1, DID: 8, Threshold: threshold}
			if err := s.StockLevel(ctx, in); err != nil {
				t.Fatalf("StockLevel: %v", err)
			}
			// TPC-C 2.8.2.2: distinct items of the last 20 orders of the district below the threshold.
			want := queryInt(t, c, `SELECT count(DISTINCT s.s_i_id) FROM order_line ol, stock s, district d
				WHERE d.d_w_id = 1 AND d.d_id = 8 AND ol.ol_w_id = 1 AND ol.ol_d_id = 8
				AND ol.ol_o_id >= d.d_next_o_id - 20 AND ol.ol_o_id < d.d_next_o_id
				AND s.s_w_id = 1 AND s.s_i_id = ol.ol_i_id AND s.s_quantity < ?`, threshold)
			if int64(in.LowStock) != want {
				t.Errorf("LowStock: got %d, want %d", in.LowStock, want)
			}
			if threshold == 20 && want == 0 {
				t.Errorf("no low stock at threshold 20: the test checks nothing")
			}
		})
	}
}

// TestConcurrentMix runs the standard mix from four concurrent sessions on
// one warehouse and checks the consistency conditions afterwards.
func TestConcurrentMix(t *testing.T) {
	testenv.Require(t, testenv.Long)
	d := openBuilt(t)
	ctx := context.Background()
	const sessions, perSession = 4, 100
	run := tpcc.NewRunConstants(tpcc.NewRand(testSeed, 999), testLoad)
	var g errgroup.Group
	counts := make([][tpcc.NumTxKinds]int, sessions)
	retries := make([]int, sessions)
	for i := range sessions {
		s := newSession(t, d)
		term := tpcc.NewTerminal(tpcc.NewRand(testSeed, tpcc.TerminalStream(i)), run, 1, 1, i+1)
		g.Go(func() error {
			var (
				no tpcc.NewOrder
				pa tpcc.Payment
				os tpcc.OrderStatus
				de tpcc.Delivery
				sl tpcc.StockLevel
			)
			for range perSession {
				k := term.NextKind()
				// Inputs are drawn once; a retry runs the same transaction again.
				var exec func() error
				switch k {
				case tpcc.NewOrderTx:
					term.NewOrder(&no, runTime)
					exec = func() error { return s.NewOrder(ctx, &no) }
				case tpcc.PaymentTx:
					term.Payment(&pa, runTime)
					exec = func() error { return s.Payment(ctx, &pa) }
				case tpcc.OrderStatusTx:
					term.OrderStatus(&os)
					exec = func() error { return s.OrderStatus(ctx, &os) }
				case tpcc.DeliveryTx:
					term.Delivery(&de, runTime)
					exec = func() error { return s.Delivery(ctx, &de) }
				case tpcc.StockLevelTx:
					term.StockLevel(&sl)
					exec = func() error { return s.StockLevel(ctx, &sl) }
				}
				err := exec()
				for attempt := 0; d.Classify(err).Retryable() && attempt < 5; attempt++ {
					retries[i]++
					err = exec()
				}
				if err != nil && d.Classify(err) != dialect.ClassRollback {
					return fmt.Errorf("session %d %v: %w (class %v)", i, k, err, d.Classify(err))
				}
				counts[i][k]++
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	var newOrders int
	for i := range counts {
		newOrders += counts[i][tpcc.NewOrderTx]
	}
	if newOrders == 0 {
		t.Fatalf("no New-Order in %d transactions", sessions*perSession)
	}
	t.Logf("transactions per kind and session: %v; retries: %v", counts, retries)
	checkAll(t, d, false)
}

func TestBusyIsLockTimeout(t *testing.T) {
	d := openBuilt(t)
	ctx := context.Background()
	holder, err := d.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer holder.ExecContext(ctx, "ROLLBACK")

	s := newSession(t, d)
	if _, err := s.(*session).q.c.ExecContext(ctx, "PRAGMA busy_timeout = 10"); err != nil {
		t.Fatal(err)
	}
	err = s.Payment(ctx, &tpcc.Payment{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 100, HDate: runTime})
	if err == nil {
		t.Fatal("Payment while another connection holds the write lock: got nil error, want SQLITE_BUSY")
	}
	if got, want := d.Classify(err), dialect.ClassLockTimeout; got != want {
		t.Errorf("Classify(%v): got %v, want %v", err, got, want)
	}
	if !d.Classify(err).Retryable() {
		t.Errorf("lock timeout is not retryable")
	}
	// A read-only transaction does not wait for the write lock (WAL).
	if err := s.StockLevel(ctx, &tpcc.StockLevel{WID: 1, DID: 1, Threshold: 15}); err != nil {
		t.Errorf("StockLevel while another connection holds the write lock: %v", err)
	}
}

// TestCancelWhileWaitingForLock: a transaction waiting for the write lock
// ends when its context does (the driver's grace period), long before
// busy_timeout, and is classified as canceled. The lock is held by another
// connection (SQLite's lock, another process's view) or by another session
// of this Database (the in-process gate).
func TestCancelWhileWaitingForLock(t *testing.T) {
	tests := []struct {
		name string
		hold func(t *testing.T, d *Database) (release func())
	}{
		{"sqlite lock", func(t *testing.T, d *Database) func() {
			holder, err := d.db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := holder.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
				t.Fatal(err)
			}
			return func() {
				if _, err := holder.ExecContext(context.Background(), "ROLLBACK"); err != nil {
					t.Error(err)
				}
				_ = holder.Close()
			}
		}},
		{"session gate", func(t *testing.T, d *Database) func() {
			q := newSession(t, d).(*session).q
			tx, err := q.Begin(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := tx.Rollback(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := openBuilt(t)
			release := tt.hold(t, d)
			s := newSession(t, d)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			err := s.Delivery(ctx, &tpcc.Delivery{WID: 1, CarrierID: 1, DeliveryD: runTime})
			if got, want := d.Classify(err), dialect.ClassCanceled; got != want {
				t.Errorf("Classify(%v): got %v, want %v", err, got, want)
			}
			// The session is clean: its next transaction runs once the lock is free.
			release()
			if err := s.Delivery(context.Background(), &tpcc.Delivery{WID: 1, CarrierID: 1, DeliveryD: runTime}); err != nil {
				t.Errorf("Delivery after a canceled one: %v", err)
			}
		})
	}
}

func TestProceduresRefused(t *testing.T) {
	d := openBuilt(t)
	_, err := d.NewSession(context.Background(), dialect.StyleProcedures)
	if err == nil {
		t.Fatal("NewSession(StyleProcedures): got nil error")
	}
	if got, want := dialect.ClassOf(err), dialect.ClassOther; got != want {
		t.Errorf("class: got %v, want %v", got, want)
	}
	if d.Caps().Procedures {
		t.Errorf("Caps().Procedures: got true, want false")
	}
}

// BenchmarkSessionMix runs the standard mix on one session (client-sql)
// and reports the process CPU per transaction (SQLite runs in-process, so
// this includes the engine).
func BenchmarkSessionMix(b *testing.B) {
	d := openBuilt(b)
	ctx, cancel := context.WithCancel(context.Background()) // like the driver's
	defer cancel()
	s, err := d.NewSession(ctx, dialect.StyleClientSQL)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	run := tpcc.NewRunConstants(tpcc.NewRand(testSeed, 999), testLoad)
	term := tpcc.NewTerminal(tpcc.NewRand(testSeed, tpcc.TerminalStream(0)), run, 1, 1, 1)
	var (
		no tpcc.NewOrder
		pa tpcc.Payment
		os tpcc.OrderStatus
		de tpcc.Delivery
		sl tpcc.StockLevel
	)
	b.ReportAllocs()
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		switch term.NextKind() {
		case tpcc.NewOrderTx:
			term.NewOrder(&no, runTime)
			err = s.NewOrder(ctx, &no)
		case tpcc.PaymentTx:
			term.Payment(&pa, runTime)
			err = s.Payment(ctx, &pa)
		case tpcc.OrderStatusTx:
			term.OrderStatus(&os)
			err = s.OrderStatus(ctx, &os)
		case tpcc.DeliveryTx:
			term.Delivery(&de, runTime)
			err = s.Delivery(ctx, &de)
		case tpcc.StockLevelTx:
			term.StockLevel(&sl)
			err = s.StockLevel(ctx, &sl)
		}
		if err != nil && !errors.Is(err, tpcc.ErrRollback) {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/tx")
}

// BenchmarkConcurrentMix runs the standard mix from eight sessions on one
// warehouse, b.N transactions in all: the throughput of the write lock's
// hand-over between virtual users.
func BenchmarkConcurrentMix(b *testing.B) {
	d := openBuilt(b)
	ctx := context.Background()
	const sessions = 8
	run := tpcc.NewRunConstants(tpcc.NewRand(testSeed, 999), testLoad)
	var g errgroup.Group
	per := b.N/sessions + 1
	b.ResetTimer()
	for i := range sessions {
		s, err := d.NewSession(ctx, dialect.StyleClientSQL)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		term := tpcc.NewTerminal(tpcc.NewRand(testSeed, tpcc.TerminalStream(i)), run, 1, 1, i%10+1)
		g.Go(func() error {
			var (
				no tpcc.NewOrder
				pa tpcc.Payment
				os tpcc.OrderStatus
				de tpcc.Delivery
				sl tpcc.StockLevel
			)
			for range per {
				var err error
				switch term.NextKind() {
				case tpcc.NewOrderTx:
					term.NewOrder(&no, runTime)
					err = s.NewOrder(ctx, &no)
				case tpcc.PaymentTx:
					term.Payment(&pa, runTime)
					err = s.Payment(ctx, &pa)
				case tpcc.OrderStatusTx:
					term.OrderStatus(&os)
					err = s.OrderStatus(ctx, &os)
				case tpcc.DeliveryTx:
					term.Delivery(&de, runTime)
					err = s.Delivery(ctx, &de)
				case tpcc.StockLevelTx:
					term.StockLevel(&sl)
					err = s.StockLevel(ctx, &sl)
				}
				if err != nil && !errors.Is(err, tpcc.ErrRollback) {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}
