package tpch

import (
	"testing"
)

func TestRefreshOrders(t *testing.T) {
	for sf, want := range map[string]int64{"0.01": 10, "0.1": 150, "0.05": 70, "1": 1500, "10": 15000} {
		s, _ := ParseScale(sf)
		if got := s.RefreshOrders(); got != want {
			t.Errorf("SF %s: RefreshOrders() = %d, want %d", sf, got, want)
		}
	}
}

// TestRefreshSets checks update sets 1 and 2 at SF 0.01 against the
// population: RF2's keys are loaded orders (the first ones, in order),
// RF1's orders have keys no loaded order has, line items match their
// order, and the sets differ.
func TestRefreshSets(t *testing.T) {
	s, _ := ParseScale("0.01")
	g := NewGenerator(s)
	loaded := map[int64]bool{}
	var order []int64
	cs, _ := s.Chunks(Orders, 1)
	if err := g.Generate(cs[0], func(r Row) error {
		if o, ok := r.(*orderRow); ok {
			loaded[o.key] = true
			order = append(order, o.key)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	inserted := map[int64]bool{}
	for u := 1; u <= 2; u++ {
		keys, err := s.RefreshDeletes(u)
		if err != nil {
			t.Fatal(err)
		}
		n := s.RefreshOrders()
		for i, k := range keys {
			if want := order[int64(u-1)*n+int64(i)]; k != want {
				t.Errorf("set %d: RF2 key %d is %d, want the %d-th loaded order's key %d", u, i, k, int64(u-1)*n+int64(i)+1, want)
			}
		}
		var orders, lines int64
		var last *orderRow
		lineNo := int64(0)
		err = g.RefreshInserts(u, func(r Row) error {
			switch r := r.(type) {
			case *orderRow:
				if loaded[r.key] || inserted[r.key] {
					t.Errorf("set %d: RF1 inserts order key %d twice or over a loaded one", u, r.key)
				}
				inserted[r.key] = true
				cp := *r
				last, lineNo = &cp, 0
				orders++
			case *lineRow:
				lineNo++
				if last == nil || r.order != last.key || r.number != lineNo {
					t.Errorf("set %d: line item %d/%d does not follow its order", u, r.order, r.number)
				}
				lines++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if orders != n || lines < orders || lines > 7*orders {
			t.Errorf("set %d: %d orders and %d line items, want %d orders with 1..7 lines each", u, orders, lines, n)
		}
	}
	if _, err := s.RefreshDeletes(0); err == nil {
		t.Error("RefreshDeletes(0) has no error")
	}
	if err := g.RefreshInserts(1501, func(Row) error { return nil }); err == nil {
		t.Error("RefreshInserts(1501) at SF 0.01 has no error: there are orders for 1500 sets")
	}
}
