package tpch

import (
	"fmt"
	"strings"
)

// Checks of a loaded database: TPC-H has no consistency conditions such
// as TPC-C's clause 3.3.2, so a database is checked against what its
// population must be: each table's cardinality (clause 4.2.5), every
// foreign key's rows referring to a row of the referenced table (clause
// 1.4.2.3: the relationships the queries' joins rely on), and every order
// with one to seven line items (clause 4.2.3). Each check is a query whose
// one value is a count.

// CountSQL counts the rows of t.
func CountSQL(t Table) string { return "select count(*) from " + t.String() }

// OrphansSQL counts the rows of fk's table whose foreign key refers to no
// row of the referenced table.
func (fk ForeignKey) OrphansSQL() string {
	ref := fk.References.PrimaryKey()
	var on []string
	for i, c := range fk.Columns {
		on = append(on, "p."+ref[i]+" = c."+c)
	}
	return fmt.Sprintf("select count(*) from %s c where not exists (select 1 from %s p where %s)",
		fk.Table, fk.References, strings.Join(on, " and "))
}

// String names the relationship: "lineitem (l_partkey, l_suppkey) → partsupp".
func (fk ForeignKey) String() string {
	return fmt.Sprintf("%s (%s) → %s", fk.Table, strings.Join(fk.Columns, ", "), fk.References)
}

// OrdersWithoutLinesSQL counts the orders without a line item.
const OrdersWithoutLinesSQL = "select count(*) from orders o where not exists (select 1 from lineitem l where l.l_orderkey = o.o_orderkey)"

// OrdersWithTooManyLinesSQL counts the orders with more than seven line
// items (O_LCNT_MAX, clause 4.2.3).
var OrdersWithTooManyLinesSQL = fmt.Sprintf(
	"select count(*) from (select l_orderkey from lineitem group by l_orderkey having count(*) > %d) x", linesMax)

// LinesOf counts the LINEITEM rows of the orders numbered first ..
// first+count−1 of the population (RF2 deletes them with their orders).
func (g *Generator) LinesOf(first, count int64) (int64, error) {
	var n int64
	err := g.Generate(Chunk{Table: Orders, Step: 1, Children: 1, First: first, Count: count}, func(r Row) error {
		if r.Table() == LineItem {
			n++
		}
		return nil
	})
	return n, err
}

// RefreshLinesDeleted is the number of LINEITEM rows update set u's RF2
// deletes: the line items of the orders it deletes.
func (g *Generator) RefreshLinesDeleted(u int) (int64, error) {
	s := g.scale
	if err := s.checkSet(u); err != nil {
		return 0, err
	}
	n := s.RefreshOrders()
	return g.LinesOf(int64(u-1)*n+1, n)
}

// CheckResult is the outcome of one check of a loaded database.
type CheckResult struct {
	// Name says what was checked: "orders rows", "lineitem (l_orderkey) → orders".
	Name   string `json:"name"`
	Clause string `json:"clause"`
	// Got is the count the database returned, Want the count it must be.
	Got     int64 `json:"got"`
	Want    int64 `json:"want"`
	Passed  bool  `json:"passed"`
	Skipped bool  `json:"skipped,omitempty"`
	// Detail says what Want comes from, or why the check was skipped.
	Detail string `json:"detail,omitempty"`
}
