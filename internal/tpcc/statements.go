package tpcc

import (
	"fmt"
	"strings"
)

// SQLOptions are the few differences between products that the client-side
// statement text has to carry.
type SQLOptions struct {
	// ForUpdate is the row-locking clause appended to the reads that
	// precede an update of the same row: "FOR UPDATE", or "" where the
	// engine locks the whole database at write time (SQLite).
	ForUpdate string
	// IntParam is how a statement names an integer parameter whose type
	// the server cannot infer (a column of a derived table): "?", or
	// "CAST(? AS INTEGER)" where an untyped parameter would be text.
	IntParam string
	// UpdateJoin selects the multi-table UPDATE form "UPDATE t JOIN s ON
	// ... SET ..." (MySQL, MariaDB) over "UPDATE t SET ... FROM s WHERE
	// ..." (PostgreSQL, SQLite).
	UpdateJoin bool
	// LowStockArray selects PostgreSQL's form of Stock-Level's count: the
	// distinct items of the order lines are read into an array first
	// (= ANY (ARRAY(SELECT DISTINCT ...))), then their stock rows are found
	// through the primary key, one probe per item, the same count (clause
	// 2.8.2.2). The join form's plan depends on D_NEXT_O_ID: PostgreSQL
	// planned it again at every call, and its generic plan read the
	// warehouse's whole stock.
	LowStockArray bool
}

// Statements holds the text of every statement the client-side
// transactions send, with '?' placeholders. A dialect whose driver wants
// another placeholder form rewrites them once with Map. The comment of each
// field lists its arguments in order.
type Statements struct {
	// New-Order, clause 2.4.2.2.
	NewOrderWarehouse   string // w_id -> w_tax
	NewOrderDistrict    string // d_w_id, d_id -> d_tax, d_next_o_id (locks the district)
	NewOrderNextOID     string // d_w_id, d_id: d_next_o_id + 1
	NewOrderCustomer    string // c_w_id, c_d_id, c_id -> c_discount, c_last, c_credit
	NewOrderInsertOrder string // o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local
	NewOrderInsertNew   string // no_o_id, no_d_id, no_w_id
	// The order's items and stocks are read, and its stocks updated, with
	// one statement each for all lines, and its lines inserted with one
	// statement: four round trips per order instead of four per line.
	// Lists of MaxOrderLines entries are padded by repeating their last
	// entry, so one statement text serves every order size.
	NewOrderItems          string                    // MaxOrderLines i_id -> i_id, i_price, i_name, i_data (one row per distinct item)
	NewOrderStocks         [10]string                // by district: MaxOrderLines (s_w_id, s_i_id) -> s_w_id, s_i_id, s_quantity, s_data, s_dist_DD in key order (locks the rows)
	NewOrderUpdateStocks   string                    // MaxOrderLines (s_w_id, s_i_id, s_quantity, s_ytd +, s_order_cnt +, s_remote_cnt +)
	NewOrderInsertOrdLines [MaxOrderLines + 1]string // by line count n: n x (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info)

	// Payment, clause 2.5.2.2.
	PaymentWarehouseYTD   string // h_amount, w_id
	PaymentWarehouse      string // w_id -> w_name, w_street_1, w_street_2, w_city, w_state, w_zip
	PaymentDistrictYTD    string // h_amount, d_w_id, d_id
	PaymentDistrict       string // d_w_id, d_id -> d_name, d_street_1, d_street_2, d_city, d_state, d_zip
	PaymentCustomer       string // c_w_id, c_d_id, c_id -> c_first ... c_balance (locks the row)
	PaymentCustomerData   string // c_w_id, c_d_id, c_id -> c_data
	PaymentUpdateCustomer string // h_amount (c_balance), h_amount (c_ytd_payment), c_w_id, c_d_id, c_id
	PaymentUpdateCustData string // h_amount, h_amount, c_data, c_w_id, c_d_id, c_id
	PaymentInsertHistory  string // h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data

	// Customer selection by last name (2.5.2.2, 2.6.2.2): c_w_id, c_d_id,
	// c_last -> c_id, sorted by c_first.
	CustomerIDsByLast string

	// Order-Status, clause 2.6.2.2.
	OrderStatusCustomer   string // c_w_id, c_d_id, c_id -> c_balance, c_first, c_middle, c_last
	OrderStatusLastOrder  string // o_w_id, o_d_id, o_c_id -> o_id, o_entry_d, o_carrier_id
	OrderStatusOrderLines string // ol_w_id, ol_d_id, ol_o_id -> ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d

	// Delivery, clause 2.7.4.2.
	DeliveryOldestNewOrder string // no_w_id, no_d_id -> no_o_id (locks the row)
	DeliveryDeleteNewOrder string // no_w_id, no_d_id, no_o_id
	DeliveryOrderCustomer  string // o_w_id, o_d_id, o_id -> o_c_id
	DeliverySetCarrier     string // o_carrier_id, o_w_id, o_d_id, o_id
	DeliverySetDeliveryD   string // ol_delivery_d, ol_w_id, ol_d_id, ol_o_id
	DeliverySumAmount      string // ol_w_id, ol_d_id, ol_o_id -> sum(ol_amount)
	DeliveryUpdateCustomer string // sum(ol_amount), c_w_id, c_d_id, c_id

	// Stock-Level, clause 2.8.2.2.
	StockLevelNextOID  string // d_w_id, d_id -> d_next_o_id
	StockLevelLowStock string // ol_w_id, ol_d_id, d_next_o_id, d_next_o_id-20, s_w_id, threshold -> count
}

// NewStatements returns the statement text for o.
func NewStatements(o SQLOptions) *Statements {
	lock := func(q string) string {
		if o.ForUpdate == "" {
			return q
		}
		return q + " " + o.ForUpdate
	}
	st := &Statements{
		NewOrderWarehouse:    "SELECT w_tax FROM warehouse WHERE w_id = ?",
		NewOrderDistrict:     lock("SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"),
		NewOrderNextOID:      "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
		NewOrderCustomer:     "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
		NewOrderInsertOrder:  "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
		NewOrderInsertNew:    "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
		NewOrderItems:        "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN (" + list("?", ", ", MaxOrderLines) + ")",
		NewOrderUpdateStocks: updateStocks(o),

		PaymentWarehouseYTD: "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
		PaymentWarehouse:    "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
		PaymentDistrictYTD:  "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
		PaymentDistrict:     "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
		PaymentCustomer: lock("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, " +
			"c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
		PaymentCustomerData: "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
		PaymentUpdateCustomer: "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 " +
			"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
		PaymentUpdateCustData: "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? " +
			"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
		PaymentInsertHistory: "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",

		CustomerIDsByLast: "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",

		OrderStatusCustomer: "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
		OrderStatusLastOrder: "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? " +
			"ORDER BY o_id DESC LIMIT 1",
		OrderStatusOrderLines: "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line " +
			"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",

		DeliveryOldestNewOrder: lock("SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1"),
		DeliveryDeleteNewOrder: "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
		DeliveryOrderCustomer:  "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
		DeliverySetCarrier:     "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
		DeliverySetDeliveryD:   "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
		DeliverySumAmount:      "SELECT COALESCE(SUM(ol_amount), 0) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
		DeliveryUpdateCustomer: "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 " +
			"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",

		StockLevelNextOID: "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
		StockLevelLowStock: "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_i_id = ol_i_id " +
			"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_quantity < ?",
	}
	if o.LowStockArray {
		// The array holds each item once and the warehouse is fixed, so
		// COUNT(*) counts distinct S_I_IDs.
		st.StockLevelLowStock = "SELECT COUNT(*) FROM stock WHERE s_i_id = ANY (ARRAY(SELECT DISTINCT ol_i_id FROM order_line " +
			"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ?)) AND s_w_id = ? AND s_quantity < ?"
	}
	// TPC-C 2.4.2.2: OL_DIST_INFO is S_DIST_xx, xx = D_ID. One prebuilt
	// statement per district, so no SQL is built per transaction. The rows
	// are locked in primary-key order whatever the order of the lines, so
	// that two New-Orders sharing stock rows cannot deadlock on them.
	keys := list("(s_w_id = ? AND s_i_id = ?)", " OR ", MaxOrderLines)
	for d := range st.NewOrderStocks {
		col := fmt.Sprintf("s_dist_%02d", d+1)
		st.NewOrderStocks[d] = lock("SELECT s_w_id, s_i_id, s_quantity, s_data, " + col + " FROM stock WHERE " + keys +
			" ORDER BY s_w_id, s_i_id")
	}
	for n := 1; n <= MaxOrderLines; n++ {
		st.NewOrderInsertOrdLines[n] = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) " +
			"VALUES " + list("(?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)", ", ", n)
	}
	return st
}

// MaxOrderLines is the most lines an order has (TPC-C 2.4.1.3: 5 to 15).
const MaxOrderLines = 15

// list is n copies of item separated by sep.
func list(item, sep string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(item)
	}
	return b.String()
}

// updateStocks is the one UPDATE of every stock row of an order (TPC-C
// 2.4.2.2): MaxOrderLines rows of new values, joined to STOCK on its key.
// A stock row that several lines name appears once, with the sums of
// their increments.
func updateStocks(o SQLOptions) string {
	p := o.IntParam
	if p == "" {
		p = "?"
	}
	first := "SELECT " + p + " AS w, " + p + " AS i, " + p + " AS q, " + p + " AS ytd, " + p + " AS cnt, " + p + " AS remote"
	src := "(" + first + strings.Repeat(" UNION ALL SELECT ?, ?, ?, ?, ?, ?", MaxOrderLines-1) + ") AS v"
	set := "s_quantity = v.q, s_ytd = s_ytd + v.ytd, s_order_cnt = s_order_cnt + v.cnt, s_remote_cnt = s_remote_cnt + v.remote"
	if o.UpdateJoin {
		return "UPDATE stock JOIN " + src + " ON s_w_id = v.w AND s_i_id = v.i SET " + set
	}
	return "UPDATE stock SET " + set + " FROM " + src + " WHERE s_w_id = v.w AND s_i_id = v.i"
}

// Map returns a copy of st with f applied to every statement, e.g. to
// rewrite '?' placeholders into $1, $2, ... once per session.
func (st *Statements) Map(f func(string) string) *Statements {
	c := *st
	for _, p := range c.texts() {
		*p = f(*p)
	}
	return &c
}

// All returns every statement text, for a dialect that prepares them up front.
func (st *Statements) All() []string {
	ps := st.texts()
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = *p
	}
	return out
}

func (st *Statements) texts() []*string {
	ps := []*string{
		&st.NewOrderWarehouse, &st.NewOrderDistrict, &st.NewOrderNextOID, &st.NewOrderCustomer,
		&st.NewOrderInsertOrder, &st.NewOrderInsertNew, &st.NewOrderItems, &st.NewOrderUpdateStocks,
		&st.PaymentWarehouseYTD, &st.PaymentWarehouse, &st.PaymentDistrictYTD, &st.PaymentDistrict,
		&st.PaymentCustomer, &st.PaymentCustomerData, &st.PaymentUpdateCustomer, &st.PaymentUpdateCustData,
		&st.PaymentInsertHistory,
		&st.CustomerIDsByLast,
		&st.OrderStatusCustomer, &st.OrderStatusLastOrder, &st.OrderStatusOrderLines,
		&st.DeliveryOldestNewOrder, &st.DeliveryDeleteNewOrder, &st.DeliveryOrderCustomer, &st.DeliverySetCarrier,
		&st.DeliverySetDeliveryD, &st.DeliverySumAmount, &st.DeliveryUpdateCustomer,
		&st.StockLevelNextOID, &st.StockLevelLowStock,
	}
	for d := range st.NewOrderStocks {
		ps = append(ps, &st.NewOrderStocks[d])
	}
	for n := 1; n <= MaxOrderLines; n++ {
		ps = append(ps, &st.NewOrderInsertOrdLines[n])
	}
	return ps
}
