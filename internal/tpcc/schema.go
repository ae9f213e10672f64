package tpcc

// Table names one of the nine TPC-C tables (clause 1.3).
type Table int

// The nine tables, in load order (item first, then per warehouse).
const (
	Item Table = iota
	Warehouse
	Stock
	District
	Customer
	History
	Orders
	NewOrderTable
	OrderLine
	numTables
)

// Tables lists every table in load order.
var Tables = []Table{Item, Warehouse, Stock, District, Customer, History, Orders, NewOrderTable, OrderLine}

var tableNames = [numTables]string{"item", "warehouse", "stock", "district", "customer", "history", "orders", "new_order", "order_line"}

// String returns the standard table name used by HammerDB and go-tpc.
func (t Table) String() string {
	if t < 0 || t >= numTables {
		return "unknown"
	}
	return tableNames[t]
}

// Columns returns the standard column names of t, in the order in which
// generated rows (Row.AppendTSV, Row.AppendArgs) carry their values.
func (t Table) Columns() []string { return tableColumns[t] }

var tableColumns = [numTables][]string{
	Item:      {"i_id", "i_im_id", "i_name", "i_price", "i_data"},
	Warehouse: {"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"},
	Stock: {"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05",
		"s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"},
	District: {"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id"},
	Customer: {"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2", "c_city",
		"c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance",
		"c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"},
	History:       {"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"},
	Orders:        {"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"},
	NewOrderTable: {"no_o_id", "no_d_id", "no_w_id"},
	OrderLine: {"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d",
		"ol_quantity", "ol_amount", "ol_dist_info"},
}

// MetaTable is the key/value table in which build records what it built
// (scale, load seed, load-time C constants, tool version, build time).
// Its DDL is "CREATE TABLE oltplab_meta (k VARCHAR(64) PRIMARY KEY, v VARCHAR(1024) NOT NULL)"
// in every dialect.
const MetaTable = "oltplab_meta"

// Row is one generated row of the initial population (clause 4.3.3.1).
// Generators reuse Row values: a consumer must encode a row before asking
// for the next one and must not retain it.
type Row interface {
	Table() Table
	// AppendTSV appends the row as one line of tab-separated text ending in
	// '\n': NULL as \N, timestamps as "2006-01-02 15:04:05", money with two
	// decimals. Both PostgreSQL COPY text format and MySQL LOAD DATA accept it.
	// Generated strings never contain tab, newline or backslash.
	AppendTSV(dst []byte) []byte
	// AppendArgs appends the column values as driver arguments: int64,
	// float64 (money, rounded to cents), string, time.Time, or nil for NULL.
	AppendArgs(dst []any) []any
}
