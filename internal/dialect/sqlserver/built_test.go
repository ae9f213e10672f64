package sqlserver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestOnABuiltDatabase builds one warehouse once for the tests that need
// the population.
func TestOnABuiltDatabase(t *testing.T) {
	d := buildTest(t)
	t.Run("row locks hold without hints", func(t *testing.T) { testRowLocks(t, d) })
	t.Run("bad-credit payment", func(t *testing.T) { testBadCreditPayment(t, d) })
}

// testRowLocks runs New-Orders from many sessions at once, over few stock
// rows, in each style: all on one district, then each session on a
// district of its own. They must never collide: a session that read
// D_NEXT_O_ID without holding the district's row would insert an order
// number another one inserted too (a duplicate key; Babelfish ignores the
// lock hints that would serialise such reads, and 11% of New-Orders failed
// so on it with four sessions), and one that read S_QUANTITY without
// holding the stock row would overwrite another's update of it (sessions
// on one district never meet there: the district's row lock, taken
// first, orders them). Stock quantities start high enough that every
// line takes the "decrease" branch of TPC-C 2.4.2.2, so a lost update
// shows as S_QUANTITY no longer equal to its start less the S_YTD added
// since.
func testRowLocks(t *testing.T, d *DB) {
	for _, c := range []struct {
		name     string
		district func(session int) int
	}{
		{"one district", func(int) int { return 4 }},
		{"a district each", func(s int) int { return 1 + s%10 }},
	} {
		for _, style := range []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL} {
			t.Run(c.name+"/"+style.String(), func(t *testing.T) { testRowLocksOf(t, d, style, c.district) })
		}
	}
}

func testRowLocksOf(t *testing.T, d *DB, style dialect.Style, district func(session int) int) {
	const (
		w        = 1
		sessions = 6
		orders   = 8   // per session
		items    = 100 // the stock rows every order draws from
		start    = 1_000_000
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := d.db.ExecContext(ctx, "UPDATE stock SET s_quantity = @p1 WHERE s_w_id = @p2 AND s_i_id <= @p3", start, w, items); err != nil {
		t.Fatalf("set stock quantities: %v", err)
	}
	ytdBefore := stockYTD(ctx, t, d, w, items)
	nextBefore := map[int]int64{}
	for i := range sessions {
		dID := district(i)
		var n int64
		if err := d.db.QueryRowContext(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = @p1 AND d_id = @p2", w, dID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		nextBefore[dID] = n
	}

	var mu sync.Mutex
	committed, retried := map[int]int{}, 0
	var failures []string
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := d.NewSession(ctx, style)
			if err != nil {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("session %d: %v", i, err))
				mu.Unlock()
				return
			}
			defer s.Close()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			for range orders {
				in := &tpcc.NewOrder{WID: w, DID: district(i), CID: 1 + r.IntN(3000), AllLocal: true, EntryD: time.Now()}
				for range 5 + r.IntN(11) {
					in.Lines = append(in.Lines, tpcc.OrderLineInput{IID: 1 + r.IntN(items), SupplyWID: w, Quantity: 1 + r.IntN(10)})
				}
				for attempt := 0; ; attempt++ {
					err := s.NewOrder(ctx, in)
					mu.Lock()
					switch {
					case err == nil:
						committed[in.DID]++
					case d.Classify(err).Retryable() && attempt < 100:
						// Two orders locking shared stock rows in
						// another order may deadlock; the driver
						// retries the whole transaction, and so
						// does this test.
						retried++
						mu.Unlock()
						continue
					default:
						failures = append(failures, fmt.Sprintf("session %d: class %v: %v", i, d.Classify(err), err))
					}
					mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%s: New-Orders committed by district %v from %d sessions, %d retried after a deadlock",
		style, committed, sessions, retried)
	for _, f := range failures {
		t.Errorf("New-Order failed: %s", f)
	}
	if t.Failed() {
		return
	}

	for dID, before := range nextBefore {
		var nextAfter, count, maxOID int64
		err := d.db.QueryRowContext(ctx, `SELECT d_next_o_id,
			(SELECT COUNT(*) FROM orders WHERE o_w_id = @p1 AND o_d_id = @p2 AND o_id >= @p3),
			(SELECT MAX(o_id) FROM orders WHERE o_w_id = @p1 AND o_d_id = @p2)
			FROM district WHERE d_w_id = @p1 AND d_id = @p2`, w, dID, before).Scan(&nextAfter, &count, &maxOID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := nextAfter-before, int64(committed[dID]); got != want || count != want || maxOID != nextAfter-1 {
			t.Errorf("district %d: D_NEXT_O_ID advanced by %d, %d new orders, MAX(O_ID) %d: want %d, %d and %d",
				dID, got, count, maxOID, want, want, nextAfter-1)
		}
	}
	ytdAfter := stockYTD(ctx, t, d, w, items)
	rows, err := d.db.QueryContext(ctx, "SELECT s_i_id, s_quantity FROM stock WHERE s_w_id = @p1 AND s_i_id <= @p2", w, items)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var i, q int64
		if err := rows.Scan(&i, &q); err != nil {
			t.Fatal(err)
		}
		if want := start - (ytdAfter[i] - ytdBefore[i]); q != want {
			t.Errorf("stock %d: S_QUANTITY %d, want %d (S_YTD grew by %d): an update was lost", i, q, want, ytdAfter[i]-ytdBefore[i])
		}
	}
}

func stockYTD(ctx context.Context, t *testing.T, d *DB, w, items int) map[int64]int64 {
	t.Helper()
	rows, err := d.db.QueryContext(ctx, "SELECT s_i_id, s_ytd FROM stock WHERE s_w_id = @p1 AND s_i_id <= @p2", w, items)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var i, y int64
		if err := rows.Scan(&i, &y); err != nil {
			t.Fatal(err)
		}
		out[i] = y
	}
	return out
}

// testBadCreditPayment: a Payment to a bad-credit customer inserts the
// payment's history at the left of C_DATA (TPC-C 2.5.2.2), in the same
// form in both styles ("C_ID C_D_ID C_W_ID D_ID W_ID H_AMOUNT ").
func testBadCreditPayment(t *testing.T, d *DB) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cID int64
	if err := d.db.QueryRowContext(ctx, "SELECT TOP (1) c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_credit = 'BC' ORDER BY c_id").Scan(&cID); err != nil {
		t.Fatalf("find a bad-credit customer: %v", err)
	}
	for i, style := range []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL} {
		s, err := d.NewSession(ctx, style)
		if err != nil {
			t.Fatal(err)
		}
		amount := tpcc.Money(1205 + i) // 12.05, 12.06
		in := &tpcc.Payment{WID: 1, DID: 3, CWID: 1, CDID: 2, CID: int(cID), Amount: amount, HDate: time.Now()}
		err = s.Payment(ctx, in)
		s.Close()
		if err != nil {
			t.Fatalf("%s: Payment: %v", style, err)
		}
		var data string
		if err := d.db.QueryRowContext(ctx, "SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = @p1", cID).Scan(&data); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%d 2 1 3 1 12.0%d ", cID, 5+i)
		if !strings.HasPrefix(data, want) || len(data) > 500 {
			t.Errorf("%s: C_DATA starts %q (%d characters), want %q and at most 500", style, data[:min(len(data), 40)], len(data), want)
		}
	}
}
