package tpch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// The statements of the refresh functions (clause 2.5), rendered for a
// Flavor. Clause 2.5.1 leaves their implementation to the sponsor as long
// as each inserts or deletes exactly its update set's rows: RF1 inserts
// the set's orders and line items with multi-row INSERTs, RF2 deletes the
// set's orders and their line items by key lists. Values are literals
// (dbgen's text, which holds no quote or backslash), so that the
// statements run as they are on every product.

// RowsPerInsert is the number of rows of one RF1 INSERT statement.
const RowsPerInsert = 500

// KeysPerDelete is the number of order keys of one RF2 DELETE statement.
const KeysPerDelete = 1000

// RF1 is the new sales of update set u (clause 2.5.2): the statements
// that insert them, in f's flavor, and how many ORDERS and LINEITEM rows
// they insert.
type RF1 struct {
	Set              int
	Statements       []string
	Orders, LineItem int64
}

// RF1Statements renders update set u's inserts (RefreshInserts) as
// INSERT statements of up to RowsPerInsert rows each, the orders first.
func (g *Generator) RF1Statements(u int, f Flavor) (RF1, error) {
	out := RF1{Set: u}
	var orders, lines [][]byte
	var buf []byte
	err := g.RefreshInserts(u, func(r Row) error {
		buf = r.AppendTBL(buf[:0])
		lit := literalRow(r.Table(), buf, f)
		if r.Table() == Orders {
			orders = append(orders, lit)
		} else {
			lines = append(lines, lit)
		}
		return nil
	})
	if err != nil {
		return RF1{}, err
	}
	out.Orders, out.LineItem = int64(len(orders)), int64(len(lines))
	out.Statements = append(insertStatements(Orders, orders), insertStatements(LineItem, lines)...)
	return out, nil
}

// literalRow turns one row of dbgen's flat-file text into the SQL tuple
// of its values: numbers as written, text quoted, dates as f writes them.
func literalRow(t Table, tbl []byte, f Flavor) []byte {
	fields := bytes.Split(bytes.TrimSuffix(tbl, []byte{'\n'}), []byte{sep})
	var b []byte
	b = append(b, '(')
	for i, c := range t.Columns() {
		if i > 0 {
			b = append(b, ", "...)
		}
		v := fields[i]
		switch c.Type {
		case Identifier, Integer, Decimal:
			b = append(b, v...)
		case Date:
			b = append(b, f.Date(string(v))...)
		default:
			b = append(b, '\'')
			b = append(b, bytes.ReplaceAll(v, []byte("'"), []byte("''"))...)
			b = append(b, '\'')
		}
	}
	return append(b, ')')
}

// insertStatements groups tuples into INSERT statements of t.
func insertStatements(t Table, tuples [][]byte) []string {
	var out []string
	head := "INSERT INTO " + t.String() + " (" + strings.Join(t.ColumnNames(), ", ") + ") VALUES "
	for i := 0; i < len(tuples); i += RowsPerInsert {
		var b strings.Builder
		b.WriteString(head)
		for j, tu := range tuples[i:min(i+RowsPerInsert, len(tuples))] {
			if j > 0 {
				b.WriteString(", ")
			}
			b.Write(tu)
		}
		out = append(out, b.String())
	}
	return out
}

// RF2 is the old sales of update set u (clause 2.5.3): the statements
// that delete them and the number of orders they name.
type RF2 struct {
	Set        int
	Statements []string
	Orders     int64
}

// RF2Statements renders update set u's deletes (RefreshDeletes): for each
// group of up to KeysPerDelete keys, the line items, then the orders.
func (s Scale) RF2Statements(u int) (RF2, error) {
	keys, err := s.RefreshDeletes(u)
	if err != nil {
		return RF2{}, err
	}
	out := RF2{Set: u, Orders: int64(len(keys))}
	for i := 0; i < len(keys); i += KeysPerDelete {
		var list strings.Builder
		for j, k := range keys[i:min(i+KeysPerDelete, len(keys))] {
			if j > 0 {
				list.WriteString(", ")
			}
			list.WriteString(strconv.FormatInt(k, 10))
		}
		out.Statements = append(out.Statements,
			fmt.Sprintf("DELETE FROM lineitem WHERE l_orderkey IN (%s)", list.String()),
			fmt.Sprintf("DELETE FROM orders WHERE o_orderkey IN (%s)", list.String()))
	}
	return out, nil
}
