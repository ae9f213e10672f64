package tpchload

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpch"
)

// CheckOutcome is what Check found.
type CheckOutcome struct {
	Meta    Meta               `json:"meta"`
	Passed  bool               `json:"passed"`
	Checks  []tpch.CheckResult `json:"checks"`
	Seconds float64            `json:"seconds"`
}

// Check verifies a TPC-H database oltplab built (see tpch/check.go): each
// table's rows (clause 4.2.5 for the six tables the refresh functions do
// not touch; for ORDERS and LINEITEM what the build loaded as changed by
// the refresh functions applied since, which the metadata records in their
// own transactions), every foreign
// key's rows referring to a row (clause 1.4.2.3), and every order with one
// to seven line items (clause 4.2.3). It returns an error only when it
// could not check; a failed check is a result.
func Check(ctx context.Context, db dialect.Database) (CheckOutcome, error) {
	start := time.Now()
	h, ok := db.(dialect.TPCH)
	if !ok {
		return CheckOutcome{}, fmt.Errorf("%s: %w", db.Name(), ErrNoTPCH)
	}
	m, err := ReadMeta(ctx, db)
	if err != nil {
		return CheckOutcome{}, err
	}
	out := CheckOutcome{Meta: m, Passed: true}
	s, err := h.NewTPCHSession(ctx)
	if err != nil {
		return out, err
	}
	defer s.Close()
	count := func(sql string) (int64, error) {
		rows, err := s.Query(ctx, sql)
		if err != nil {
			return 0, err
		}
		if len(rows) != 1 || len(rows[0]) != 1 {
			return 0, fmt.Errorf("%s: %d rows, want one count", sql, len(rows))
		}
		return strconv.ParseInt(rows[0][0], 10, 64)
	}
	add := func(name, clause, sql string, want int64, detail string) error {
		got, err := count(sql)
		if err != nil {
			return fmt.Errorf("check %s: %w", name, err)
		}
		out.Checks = append(out.Checks, tpch.CheckResult{Name: name, Clause: clause, Got: got, Want: want, Passed: got == want, Detail: detail})
		out.Passed = out.Passed && got == want
		return nil
	}
	for _, t := range tpch.Tables {
		want, exact := m.Scale.Rows(t)
		detail := fmt.Sprintf("SF %s", m.Scale)
		switch t {
		case tpch.Orders, tpch.LineItem:
			want, detail = m.rowsOf(t), m.refreshed()
		default:
			if !exact {
				continue
			}
		}
		if err := add(t.String()+" rows", "4.2.5", tpch.CountSQL(t), want, detail); err != nil {
			return out, err
		}
	}
	for _, fk := range tpch.ForeignKeys {
		if err := add(fk.String(), "1.4.2.3", fk.OrphansSQL(), 0, "rows referring to no row"); err != nil {
			return out, err
		}
	}
	if err := add("orders without line items", "4.2.3", tpch.OrdersWithoutLinesSQL, 0, "each order has 1 to 7 line items"); err != nil {
		return out, err
	}
	if err := add("orders with more than 7 line items", "4.2.3", tpch.OrdersWithTooManyLinesSQL, 0, "each order has 1 to 7 line items"); err != nil {
		return out, err
	}
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

func (m Meta) rowsOf(t tpch.Table) int64 {
	if t == tpch.Orders {
		return m.Orders
	}
	return m.LineItems
}

// refreshed says where the metadata's count comes from.
func (m Meta) refreshed() string {
	if m.RF1Sets == 0 && m.RF2Sets == 0 {
		return fmt.Sprintf("as loaded at SF %s", m.Scale)
	}
	return fmt.Sprintf("as loaded at SF %s, then update sets up to %d inserted (RF1) and up to %d deleted (RF2)", m.Scale, m.RF1Sets, m.RF2Sets)
}
