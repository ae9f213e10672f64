package tpcc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Condition is one consistency condition of clause 3.3.2. Its Query lists
// the groups (warehouses, districts, orders, order lines or customers) that
// violate it, first violation first; every '?' in Query is the money
// tolerance. The SQL is portable across PostgreSQL 15, MariaDB 10.11 and
// SQLite 3, and uses only the primary keys and the secondary indexes every
// dialect creates (customer by last name, orders by customer).
type Condition struct {
	Clause string // "3.3.2.1" ... "3.3.2.12"
	Name   string // the relationship, as the specification writes it
	// OnlyAfterBuild marks a condition that holds only right after the
	// initial population (3.3.2.11: running Deliveries changes it).
	OnlyAfterBuild bool
	Query          string

	columns []column // what Query returns, for the detail of the first violation
}

// column labels one value of a violation row; money values print with two decimals.
type column struct {
	label string
	money bool
}

func ints(labels ...string) []column {
	cs := make([]column, len(labels))
	for i, l := range labels {
		cs[i] = column{label: l}
	}
	return cs
}

func withMoney(cs []column, labels ...string) []column {
	for _, l := range labels {
		cs = append(cs, column{label: l, money: true})
	}
	return cs
}

// CheckResult is the outcome of one condition.
type CheckResult struct {
	Clause, Name string
	Passed       bool
	// Skipped: the condition does not apply now (OnlyAfterBuild after a run).
	Skipped bool
	// Violations is the number of violating groups.
	Violations int64
	// Detail describes the first violation, or why the check was skipped.
	Detail string
}

// deliveredAmounts is, per customer, the sum of OL_AMOUNT over the order
// lines of the customer's orders that are delivered (OL_DELIVERY_D not
// null), as clauses 3.3.2.10 and 3.3.2.12 select them.
const deliveredAmounts = "SELECT o.o_w_id AS w_id, o.o_d_id AS d_id, o.o_c_id AS c_id, SUM(l.ol_amount) AS amount " +
	"FROM orders o JOIN order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id " +
	"WHERE l.ol_delivery_d IS NOT NULL GROUP BY o.o_w_id, o.o_d_id, o.o_c_id"

// Conditions are the twelve consistency conditions of clause 3.3.2, in order.
var Conditions = []Condition{
	{
		// TPC-C 3.3.2.1: W_YTD = sum(D_YTD) for each warehouse (W_ID = D_W_ID).
		Clause: "3.3.2.1", Name: "W_YTD = sum(D_YTD)",
		Query: "SELECT w.w_id, w.w_ytd, COALESCE(d.ytd, 0) FROM warehouse w " +
			"LEFT JOIN (SELECT d_w_id, SUM(d_ytd) AS ytd FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id " +
			"WHERE ABS(w.w_ytd - COALESCE(d.ytd, 0)) > ? ORDER BY w.w_id",
		columns: withMoney(ints("w_id"), "w_ytd", "sum(d_ytd)"),
	},
	{
		// TPC-C 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each
		// district; the NEW-ORDER part does not apply to a district with
		// no new_order rows.
		Clause: "3.3.2.2", Name: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
		Query: "SELECT d_w_id, d_id, d_next_o_id, max_o_id, max_no_o_id FROM (" +
			"SELECT d.d_w_id, d.d_id, d.d_next_o_id, " +
			"COALESCE((SELECT MAX(o.o_id) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id), 0) AS max_o_id, " +
			"COALESCE((SELECT MAX(n.no_o_id) FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id), 0) AS max_no_o_id " +
			"FROM district d) x " +
			"WHERE d_next_o_id - 1 <> max_o_id OR (max_no_o_id <> 0 AND max_no_o_id <> max_o_id) ORDER BY d_w_id, d_id",
		columns: ints("w_id", "d_id", "d_next_o_id", "max(o_id)", "max(no_o_id)"),
	},
	{
		// TPC-C 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = number of
		// new_order rows, for each district that has any.
		Clause: "3.3.2.3", Name: "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER)",
		Query: "SELECT no_w_id, no_d_id, MIN(no_o_id), MAX(no_o_id), COUNT(*) FROM new_order " +
			"GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*) ORDER BY no_w_id, no_d_id",
		columns: ints("w_id", "d_id", "min(no_o_id)", "max(no_o_id)", "count"),
	},
	{
		// TPC-C 3.3.2.4: sum(O_OL_CNT) = number of order_line rows, for each
		// district.
		Clause: "3.3.2.4", Name: "sum(O_OL_CNT) = count(ORDER-LINE)",
		Query: "SELECT d_w_id, d_id, sum_ol_cnt, order_lines FROM (" +
			"SELECT d.d_w_id, d.d_id, " +
			"COALESCE((SELECT SUM(o.o_ol_cnt) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id), 0) AS sum_ol_cnt, " +
			"(SELECT COUNT(*) FROM order_line l WHERE l.ol_w_id = d.d_w_id AND l.ol_d_id = d.d_id) AS order_lines " +
			"FROM district d) x WHERE sum_ol_cnt <> order_lines ORDER BY d_w_id, d_id",
		columns: ints("w_id", "d_id", "sum(o_ol_cnt)", "count(order_line)"),
	},
	{
		// TPC-C 3.3.2.5: for any order, O_CARRIER_ID is null if and only if
		// a new_order row (NO_W_ID, NO_D_ID, NO_O_ID) = (O_W_ID, O_D_ID, O_ID) exists.
		Clause: "3.3.2.5", Name: "O_CARRIER_ID null iff a NEW-ORDER row exists",
		Query: "SELECT o.o_w_id, o.o_d_id, o.o_id, " +
			"CASE WHEN o.o_carrier_id IS NULL THEN 1 ELSE 0 END, CASE WHEN n.no_o_id IS NULL THEN 0 ELSE 1 END " +
			"FROM orders o LEFT JOIN new_order n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id " +
			"WHERE (o.o_carrier_id IS NULL AND n.no_o_id IS NULL) OR (o.o_carrier_id IS NOT NULL AND n.no_o_id IS NOT NULL) " +
			"ORDER BY o.o_w_id, o.o_d_id, o.o_id",
		columns: ints("w_id", "d_id", "o_id", "o_carrier_id_null", "new_order_exists"),
	},
	{
		// TPC-C 3.3.2.6: for any order, O_OL_CNT = number of its order_line rows.
		Clause: "3.3.2.6", Name: "O_OL_CNT = count(ORDER-LINE) per order",
		Query: "SELECT o_w_id, o_d_id, o_id, o_ol_cnt, order_lines FROM (" +
			"SELECT o.o_w_id, o.o_d_id, o.o_id, o.o_ol_cnt, " +
			"(SELECT COUNT(*) FROM order_line l WHERE l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id) AS order_lines " +
			"FROM orders o) x WHERE o_ol_cnt <> order_lines ORDER BY o_w_id, o_d_id, o_id",
		columns: ints("w_id", "d_id", "o_id", "o_ol_cnt", "count(order_line)"),
	},
	{
		// TPC-C 3.3.2.7: for any order line, OL_DELIVERY_D is null if and
		// only if O_CARRIER_ID of its order is null.
		Clause: "3.3.2.7", Name: "OL_DELIVERY_D null iff O_CARRIER_ID null",
		Query: "SELECT l.ol_w_id, l.ol_d_id, l.ol_o_id, l.ol_number, " +
			"CASE WHEN l.ol_delivery_d IS NULL THEN 1 ELSE 0 END, CASE WHEN o.o_carrier_id IS NULL THEN 1 ELSE 0 END " +
			"FROM order_line l JOIN orders o ON o.o_w_id = l.ol_w_id AND o.o_d_id = l.ol_d_id AND o.o_id = l.ol_o_id " +
			"WHERE (l.ol_delivery_d IS NULL AND o.o_carrier_id IS NOT NULL) OR (l.ol_delivery_d IS NOT NULL AND o.o_carrier_id IS NULL) " +
			"ORDER BY l.ol_w_id, l.ol_d_id, l.ol_o_id, l.ol_number",
		columns: ints("w_id", "d_id", "o_id", "ol_number", "ol_delivery_d_null", "o_carrier_id_null"),
	},
	{
		// TPC-C 3.3.2.8: W_YTD = sum(H_AMOUNT) for each warehouse (W_ID = H_W_ID).
		Clause: "3.3.2.8", Name: "W_YTD = sum(H_AMOUNT)",
		Query: "SELECT w.w_id, w.w_ytd, COALESCE(h.amount, 0) FROM warehouse w " +
			"LEFT JOIN (SELECT h_w_id, SUM(h_amount) AS amount FROM history GROUP BY h_w_id) h ON h.h_w_id = w.w_id " +
			"WHERE ABS(w.w_ytd - COALESCE(h.amount, 0)) > ? ORDER BY w.w_id",
		columns: withMoney(ints("w_id"), "w_ytd", "sum(h_amount)"),
	},
	{
		// TPC-C 3.3.2.9: D_YTD = sum(H_AMOUNT) for each district
		// ((D_W_ID, D_ID) = (H_W_ID, H_D_ID)).
		Clause: "3.3.2.9", Name: "D_YTD = sum(H_AMOUNT)",
		Query: "SELECT d.d_w_id, d.d_id, d.d_ytd, COALESCE(h.amount, 0) FROM district d " +
			"LEFT JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) AS amount FROM history GROUP BY h_w_id, h_d_id) h " +
			"ON h.h_w_id = d.d_w_id AND h.h_d_id = d.d_id " +
			"WHERE ABS(d.d_ytd - COALESCE(h.amount, 0)) > ? ORDER BY d.d_w_id, d.d_id",
		columns: withMoney(ints("w_id", "d_id"), "d_ytd", "sum(h_amount)"),
	},
	{
		// TPC-C 3.3.2.10: C_BALANCE = sum(OL_AMOUNT) - sum(H_AMOUNT) for each
		// customer, H_AMOUNT selected by (H_C_W_ID, H_C_D_ID, H_C_ID) and
		// OL_AMOUNT over the order lines of the customer's orders whose
		// OL_DELIVERY_D is not null.
		Clause: "3.3.2.10", Name: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
		Query: "SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_balance, COALESCE(ol.amount, 0), COALESCE(h.amount, 0) FROM customer c " +
			"LEFT JOIN (" + deliveredAmounts + ") ol ON ol.w_id = c.c_w_id AND ol.d_id = c.c_d_id AND ol.c_id = c.c_id " +
			"LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) AS amount FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) h " +
			"ON h.h_c_w_id = c.c_w_id AND h.h_c_d_id = c.c_d_id AND h.h_c_id = c.c_id " +
			"WHERE ABS(c.c_balance - (COALESCE(ol.amount, 0) - COALESCE(h.amount, 0))) > ? ORDER BY c.c_w_id, c.c_d_id, c.c_id",
		columns: withMoney(ints("w_id", "d_id", "c_id"), "c_balance", "sum(ol_amount)", "sum(h_amount)"),
	},
	{
		// TPC-C 3.3.2.11: count(ORDER) - count(NEW-ORDER) = 2100 for each
		// district ((O_W_ID, O_D_ID) = (NO_W_ID, NO_D_ID) = (C_W_ID, C_D_ID);
		// the districts are those of the DISTRICT table). It holds after the
		// initial population (3,000 orders, 900 new orders per district);
		// every Delivery moves it.
		Clause: "3.3.2.11", Name: "count(ORDER) - count(NEW-ORDER) = 2100", OnlyAfterBuild: true,
		Query: "SELECT d_w_id, d_id, n_orders, n_new_orders FROM (" +
			"SELECT d.d_w_id, d.d_id, " +
			"(SELECT COUNT(*) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id) AS n_orders, " +
			"(SELECT COUNT(*) FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id) AS n_new_orders " +
			"FROM district d) x WHERE n_orders - n_new_orders <> 2100 ORDER BY d_w_id, d_id",
		columns: ints("w_id", "d_id", "count(orders)", "count(new_order)"),
	},
	{
		// TPC-C 3.3.2.12: C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT) over the
		// customer's order lines whose OL_DELIVERY_D is not null. The
		// specification allows checking randomly selected customers; this
		// checks every customer.
		Clause: "3.3.2.12", Name: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
		Query: "SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_balance, c.c_ytd_payment, COALESCE(ol.amount, 0) FROM customer c " +
			"LEFT JOIN (" + deliveredAmounts + ") ol ON ol.w_id = c.c_w_id AND ol.d_id = c.c_d_id AND ol.c_id = c.c_id " +
			"WHERE ABS(c.c_balance + c.c_ytd_payment - COALESCE(ol.amount, 0)) > ? ORDER BY c.c_w_id, c.c_d_id, c.c_id",
		columns: withMoney(ints("w_id", "d_id", "c_id"), "c_balance", "c_ytd_payment", "sum(ol_amount)"),
	},
}

// Check runs c on q. tolerance is the absolute difference under which two
// money amounts are equal (dialect.Capabilities.MoneyTolerance).
func (c Condition) Check(ctx context.Context, q Querier, tolerance float64) (CheckResult, error) {
	res := CheckResult{Clause: c.Clause, Name: c.Name}
	args := make([]any, strings.Count(c.Query, "?"))
	for i := range args {
		args[i] = tolerance
	}
	rows, err := q.Query(ctx, c.Query, args...)
	if err != nil {
		return res, fmt.Errorf("check %s (%s): %w", c.Clause, c.Name, err)
	}
	for rows.Next() {
		res.Violations++
		if res.Violations > 1 {
			continue
		}
		detail, err := c.scanDetail(rows)
		if err != nil {
			rows.Close()
			return res, fmt.Errorf("check %s (%s): read violation: %w", c.Clause, c.Name, err)
		}
		res.Detail = detail
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("check %s (%s): %w", c.Clause, c.Name, err)
	}
	res.Passed = res.Violations == 0
	if res.Violations > 1 {
		res.Detail += " (first of " + strconv.FormatInt(res.Violations, 10) + ")"
	}
	return res, nil
}

// scanDetail formats the current violation row as "label=value ...".
func (c Condition) scanDetail(rows Rows) (string, error) {
	nums := make([]int64, len(c.columns))
	amounts := make([]float64, len(c.columns))
	dest := make([]any, len(c.columns))
	for i, col := range c.columns {
		if col.money {
			dest[i] = &amounts[i]
		} else {
			dest[i] = &nums[i]
		}
	}
	if err := rows.Scan(dest...); err != nil {
		return "", err
	}
	var b []byte
	for i, col := range c.columns {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, col.label...)
		b = append(b, '=')
		if col.money {
			b = strconv.AppendFloat(b, amounts[i], 'f', 2, 64)
		} else {
			b = strconv.AppendInt(b, nums[i], 10)
		}
	}
	return string(b), nil
}

// CheckAll runs every condition on q, in clause order. afterBuild says the
// database holds exactly the initial population, so that conditions marked
// OnlyAfterBuild apply; otherwise they are reported as skipped. On error it
// returns the results so far.
func CheckAll(ctx context.Context, q Querier, tolerance float64, afterBuild bool) ([]CheckResult, error) {
	out := make([]CheckResult, 0, len(Conditions))
	for _, c := range Conditions {
		if c.OnlyAfterBuild && !afterBuild {
			out = append(out, CheckResult{Clause: c.Clause, Name: c.Name, Skipped: true,
				Detail: "holds only right after the initial population"})
			continue
		}
		r, err := c.Check(ctx, q, tolerance)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}
