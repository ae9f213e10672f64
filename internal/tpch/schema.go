package tpch

// Table is one of the eight TPC-H tables (clause 1.4.1).
type Table int

const (
	Part Table = iota
	PartSupp
	Supplier
	Customer
	Orders
	LineItem
	Nation
	Region
)

// TableCount is the number of tables, for arrays indexed by Table.
const TableCount = 8

// MetaTable is the table in which oltplab records the TPC-H database it
// built (key/value rows, written by internal/tpchload): it marks the eight
// tables as oltplab's, so that only what oltplab built is ever dropped. A
// dialect creates it before the tables and drops it after them.
const MetaTable = "oltplab_tpch_meta"

// Tables lists the eight tables in the order dbgen generates them.
var Tables = []Table{Part, PartSupp, Supplier, Customer, Orders, LineItem, Nation, Region}

var tableNames = [...]string{"part", "partsupp", "supplier", "customer", "orders", "lineitem", "nation", "region"}

// String is the table's SQL name, lower case.
func (t Table) String() string {
	if t < 0 || int(t) >= len(tableNames) {
		return "table?"
	}
	return tableNames[t]
}

// Type is the datatype of a column (clause 1.3.1).
type Type int

const (
	// Identifier holds any key of the table at the database's scale
	// factor: integers well beyond 2³¹ for ORDERS at large scales.
	Identifier Type = iota
	// Integer holds exact integers in [−2³¹+1, 2³¹−1].
	Integer
	// Decimal holds values in [−9,999,999,999.99, 9,999,999,999.99] to the cent.
	Decimal
	// FixedText is text of a fixed length (Column.Length).
	FixedText
	// VarText is text of up to Column.Length characters.
	VarText
	// Date holds dates from 1992-01-01 to 1998-12-31 at least.
	Date
)

// Column is one column of a table (clause 1.4.1).
type Column struct {
	Name   string
	Type   Type
	Length int // FixedText and VarText: the length
	// Wide marks an identifier that grows with the scale factor beyond
	// 32 bits (O_ORDERKEY and L_ORDERKEY reach 2³¹ near SF 360).
	Wide bool
}

var columns = [...][]Column{
	Part: {
		{Name: "p_partkey", Type: Identifier},
		{Name: "p_name", Type: VarText, Length: 55},
		{Name: "p_mfgr", Type: FixedText, Length: 25},
		{Name: "p_brand", Type: FixedText, Length: 10},
		{Name: "p_type", Type: VarText, Length: 25},
		{Name: "p_size", Type: Integer},
		{Name: "p_container", Type: FixedText, Length: 10},
		{Name: "p_retailprice", Type: Decimal},
		{Name: "p_comment", Type: VarText, Length: 23},
	},
	PartSupp: {
		{Name: "ps_partkey", Type: Identifier},
		{Name: "ps_suppkey", Type: Identifier},
		{Name: "ps_availqty", Type: Integer},
		{Name: "ps_supplycost", Type: Decimal},
		{Name: "ps_comment", Type: VarText, Length: 199},
	},
	Supplier: {
		{Name: "s_suppkey", Type: Identifier},
		{Name: "s_name", Type: FixedText, Length: 25},
		{Name: "s_address", Type: VarText, Length: 40},
		{Name: "s_nationkey", Type: Identifier},
		{Name: "s_phone", Type: FixedText, Length: 15},
		{Name: "s_acctbal", Type: Decimal},
		{Name: "s_comment", Type: VarText, Length: 101},
	},
	Customer: {
		{Name: "c_custkey", Type: Identifier},
		{Name: "c_name", Type: VarText, Length: 25},
		{Name: "c_address", Type: VarText, Length: 40},
		{Name: "c_nationkey", Type: Identifier},
		{Name: "c_phone", Type: FixedText, Length: 15},
		{Name: "c_acctbal", Type: Decimal},
		{Name: "c_mktsegment", Type: FixedText, Length: 10},
		{Name: "c_comment", Type: VarText, Length: 117},
	},
	Orders: {
		{Name: "o_orderkey", Type: Identifier, Wide: true},
		{Name: "o_custkey", Type: Identifier},
		{Name: "o_orderstatus", Type: FixedText, Length: 1},
		{Name: "o_totalprice", Type: Decimal},
		{Name: "o_orderdate", Type: Date},
		{Name: "o_orderpriority", Type: FixedText, Length: 15},
		{Name: "o_clerk", Type: FixedText, Length: 15},
		{Name: "o_shippriority", Type: Integer},
		{Name: "o_comment", Type: VarText, Length: 79},
	},
	LineItem: {
		{Name: "l_orderkey", Type: Identifier, Wide: true},
		{Name: "l_partkey", Type: Identifier},
		{Name: "l_suppkey", Type: Identifier},
		{Name: "l_linenumber", Type: Integer},
		{Name: "l_quantity", Type: Decimal},
		{Name: "l_extendedprice", Type: Decimal},
		{Name: "l_discount", Type: Decimal},
		{Name: "l_tax", Type: Decimal},
		{Name: "l_returnflag", Type: FixedText, Length: 1},
		{Name: "l_linestatus", Type: FixedText, Length: 1},
		{Name: "l_shipdate", Type: Date},
		{Name: "l_commitdate", Type: Date},
		{Name: "l_receiptdate", Type: Date},
		{Name: "l_shipinstruct", Type: FixedText, Length: 25},
		{Name: "l_shipmode", Type: FixedText, Length: 10},
		{Name: "l_comment", Type: VarText, Length: 44},
	},
	Nation: {
		{Name: "n_nationkey", Type: Identifier},
		{Name: "n_name", Type: FixedText, Length: 25},
		{Name: "n_regionkey", Type: Identifier},
		{Name: "n_comment", Type: VarText, Length: 152},
	},
	Region: {
		{Name: "r_regionkey", Type: Identifier},
		{Name: "r_name", Type: FixedText, Length: 25},
		{Name: "r_comment", Type: VarText, Length: 152},
	},
}

// Columns returns the table's columns in the order of clause 1.4.1, which
// is also the field order of Row.AppendTBL and Row.AppendArgs.
func (t Table) Columns() []Column { return columns[t] }

// ColumnNames returns the names of the table's columns.
func (t Table) ColumnNames() []string {
	cs := columns[t]
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// PrimaryKey returns the columns of the table's primary key (clause 1.4.2.2).
func (t Table) PrimaryKey() []string { return primaryKeys[t] }

var primaryKeys = [...][]string{
	Part:     {"p_partkey"},
	PartSupp: {"ps_partkey", "ps_suppkey"},
	Supplier: {"s_suppkey"},
	Customer: {"c_custkey"},
	Orders:   {"o_orderkey"},
	LineItem: {"l_orderkey", "l_linenumber"},
	Nation:   {"n_nationkey"},
	Region:   {"r_regionkey"},
}

// ForeignKey is one referential constraint of clause 1.4.2.3.
type ForeignKey struct {
	Table      Table
	Columns    []string
	References Table
}

// ForeignKeys are the referential constraints of clause 1.4.2.3. Clause
// 1.5.4 allows an index on the columns of each; a dialect creates it where
// no primary key already starts with those columns.
var ForeignKeys = []ForeignKey{
	{Supplier, []string{"s_nationkey"}, Nation},
	{PartSupp, []string{"ps_partkey"}, Part},
	{PartSupp, []string{"ps_suppkey"}, Supplier},
	{Customer, []string{"c_nationkey"}, Nation},
	{Orders, []string{"o_custkey"}, Customer},
	{LineItem, []string{"l_orderkey"}, Orders},
	{LineItem, []string{"l_partkey", "l_suppkey"}, PartSupp},
	{Nation, []string{"n_regionkey"}, Region},
}

// CoveredByPrimaryKey reports whether the table's primary key starts with
// the foreign key's columns, so that the key's index serves it too.
func (fk ForeignKey) CoveredByPrimaryKey() bool {
	pk := fk.Table.PrimaryKey()
	if len(fk.Columns) > len(pk) {
		return false
	}
	for i, c := range fk.Columns {
		if pk[i] != c {
			return false
		}
	}
	return true
}
