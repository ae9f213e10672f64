package tpcc

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestStatementPlaceholders holds every statement's '?' count against the
// number of arguments the transaction code passes to it (listed in the
// field comments of Statements).
func TestStatementPlaceholders(t *testing.T) {
	st := NewStatements(SQLOptions{ForUpdate: "FOR UPDATE"})
	cases := []struct {
		name string
		sql  string
		want int
	}{
		{"NewOrderWarehouse", st.NewOrderWarehouse, 1},
		{"NewOrderDistrict", st.NewOrderDistrict, 2},
		{"NewOrderNextOID", st.NewOrderNextOID, 2},
		{"NewOrderCustomer", st.NewOrderCustomer, 3},
		{"NewOrderInsertOrder", st.NewOrderInsertOrder, 7},
		{"NewOrderInsertNew", st.NewOrderInsertNew, 3},
		{"NewOrderItems", st.NewOrderItems, MaxOrderLines},
		{"NewOrderUpdateStocks", st.NewOrderUpdateStocks, 6 * MaxOrderLines},
		{"PaymentWarehouseYTD", st.PaymentWarehouseYTD, 2},
		{"PaymentWarehouse", st.PaymentWarehouse, 1},
		{"PaymentDistrictYTD", st.PaymentDistrictYTD, 3},
		{"PaymentDistrict", st.PaymentDistrict, 2},
		{"PaymentCustomer", st.PaymentCustomer, 3},
		{"PaymentCustomerData", st.PaymentCustomerData, 3},
		{"PaymentUpdateCustomer", st.PaymentUpdateCustomer, 5},
		{"PaymentUpdateCustData", st.PaymentUpdateCustData, 6},
		{"PaymentInsertHistory", st.PaymentInsertHistory, 8},
		{"CustomerIDsByLast", st.CustomerIDsByLast, 3},
		{"OrderStatusCustomer", st.OrderStatusCustomer, 3},
		{"OrderStatusLastOrder", st.OrderStatusLastOrder, 3},
		{"OrderStatusOrderLines", st.OrderStatusOrderLines, 3},
		{"DeliveryOldestNewOrder", st.DeliveryOldestNewOrder, 2},
		{"DeliveryDeleteNewOrder", st.DeliveryDeleteNewOrder, 3},
		{"DeliveryOrderCustomer", st.DeliveryOrderCustomer, 3},
		{"DeliverySetCarrier", st.DeliverySetCarrier, 4},
		{"DeliverySetDeliveryD", st.DeliverySetDeliveryD, 4},
		{"DeliverySumAmount", st.DeliverySumAmount, 3},
		{"DeliveryUpdateCustomer", st.DeliveryUpdateCustomer, 4},
		{"StockLevelNextOID", st.StockLevelNextOID, 2},
		{"StockLevelLowStock", st.StockLevelLowStock, 6},
	}
	for d := range st.NewOrderStocks {
		cases = append(cases, struct {
			name string
			sql  string
			want int
		}{fmt.Sprintf("NewOrderStocks[%d]", d), st.NewOrderStocks[d], 2 * MaxOrderLines})
	}
	for n := 1; n <= MaxOrderLines; n++ {
		cases = append(cases, struct {
			name string
			sql  string
			want int
		}{fmt.Sprintf("NewOrderInsertOrdLines[%d]", n), st.NewOrderInsertOrdLines[n], 9 * n})
	}
	if got, want := len(cases), len(st.All()); got != want {
		t.Errorf("test covers %d statements, Statements has %d", got, want)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := strings.Count(c.sql, "?"); got != c.want {
				t.Errorf("placeholders in %q: got %d, want %d", c.sql, got, c.want)
			}
		})
	}
}

// TestLowStockArray holds PostgreSQL's form of Stock-Level's count to the
// arguments the transaction passes (the same six, in the same order) and
// to the other dialects' statement being left as it is.
func TestLowStockArray(t *testing.T) {
	join := NewStatements(SQLOptions{}).StockLevelLowStock
	arr := NewStatements(SQLOptions{LowStockArray: true}).StockLevelLowStock
	if arr == join || !strings.Contains(arr, "= ANY (ARRAY(SELECT DISTINCT ol_i_id") {
		t.Errorf("LowStockArray: got %q", arr)
	}
	if strings.Contains(join, "ARRAY") {
		t.Errorf("without LowStockArray: got %q", join)
	}
	if got := strings.Count(arr, "?"); got != 6 {
		t.Errorf("placeholders in %q: got %d, want 6", arr, got)
	}
	// The arguments' order: ol_w_id, ol_d_id, the two bounds of OL_O_ID,
	// s_w_id, the threshold.
	order := []string{"ol_w_id = ?", "ol_d_id = ?", "ol_o_id < ?", "ol_o_id >= ?", "s_w_id = ?", "s_quantity < ?"}
	at := 0
	for _, o := range order {
		i := strings.Index(arr[at:], o)
		if i < 0 {
			t.Fatalf("%q: %q not after position %d", arr, o, at)
		}
		at += i + len(o)
	}
}

func TestStatementsForUpdate(t *testing.T) {
	locking := func(st *Statements) []string {
		s := []string{st.NewOrderDistrict, st.PaymentCustomer, st.DeliveryOldestNewOrder}
		return append(s, st.NewOrderStocks[:]...)
	}
	cases := []struct {
		forUpdate string
		want      int // statements with the clause
	}{
		{"FOR UPDATE", 13},
		{"", 0},
	}
	for _, c := range cases {
		t.Run(strconv.Quote(c.forUpdate), func(t *testing.T) {
			st := NewStatements(SQLOptions{ForUpdate: c.forUpdate})
			got := 0
			for _, q := range st.All() {
				if strings.Contains(q, "FOR UPDATE") {
					got++
				}
			}
			if got != c.want {
				t.Errorf("statements with FOR UPDATE: got %d, want %d", got, c.want)
			}
			if c.forUpdate != "" {
				for _, q := range locking(st) {
					if !strings.HasSuffix(q, " "+c.forUpdate) {
						t.Errorf("%q: got no trailing %s, want one", q, c.forUpdate)
					}
				}
			}
		})
	}
}

// TestStatementsStockDistrict: OL_DIST_INFO is S_DIST_xx with xx = D_ID (2.4.2.2).
func TestStatementsStockDistrict(t *testing.T) {
	st := NewStatements(SQLOptions{})
	for d := 1; d <= 10; d++ {
		t.Run(fmt.Sprintf("d=%d", d), func(t *testing.T) {
			q := st.NewOrderStocks[d-1]
			want := fmt.Sprintf("s_dist_%02d FROM", d)
			if !strings.Contains(q, want) {
				t.Errorf("got %q, want it to select %s", q, want)
			}
			if strings.Count(q, "s_dist_") != 1 {
				t.Errorf("got %q, want exactly one s_dist_ column", q)
			}
		})
	}
}

func TestStatementsMap(t *testing.T) {
	dollar := func(q string) string {
		var b strings.Builder
		n := 0
		for _, r := range q {
			if r == '?' {
				n++
				b.WriteString("$" + strconv.Itoa(n))
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	st := NewStatements(SQLOptions{ForUpdate: "FOR UPDATE"})
	m := st.Map(dollar)
	before, after := st.All(), m.All()
	if len(before) != len(after) {
		t.Fatalf("statements after Map: got %d, want %d", len(after), len(before))
	}
	for i := range before {
		if got, want := after[i], dollar(before[i]); got != want {
			t.Errorf("statement %d: got %q, want %q", i, got, want)
		}
		if strings.Contains(after[i], "?") {
			t.Errorf("statement %d still has '?': %q", i, after[i])
		}
	}
	if strings.Contains(st.NewOrderStocks[3], "$") {
		t.Errorf("Map changed the original: got %q", st.NewOrderStocks[3])
	}
}
