package tpch

import "fmt"

// The update sets of the refresh functions (clauses 2.5 and 4.2.4), as
// dbgen -U writes them: set u holds the new orders and line items RF1
// inserts (orders.tbl.u<u>, lineitem.tbl.u<u>) and the keys of the old
// orders RF2 deletes (delete.<u>).
//
// RF1's orders continue the population's random streams past the last
// order: set u's orders are numbered (u−1)·n+1 .. u·n, n = RefreshOrders,
// and take the key slot 1 + u/1000 of their group of 32 keys (the
// population uses slot 0), so they never collide with loaded orders.
// RF2 deletes the loaded orders numbered (u−1)·n+1 .. u·n.

// RefreshOrders is the number of orders each update set inserts and
// deletes: 0.1% of ORDERS (SF × 1,500), computed as dbgen computes it,
// which below SF 1 truncates to tens (10 at SF 0.01, 150 at SF 0.1).
func (s Scale) RefreshOrders() int64 {
	return s.base(baseOrders) / 10000 * s.factor() * 10 // dbgen's UPD_PCT of 10 in 10,000
}

func (s Scale) checkSet(u int) error {
	if u < 1 || u >= 1000 {
		return fmt.Errorf("update set %d: want 1..999", u)
	}
	if int64(u)*s.RefreshOrders() > s.orders() {
		return fmt.Errorf("update set %d: SF %s has orders for %d update sets", u, s, s.orders()/s.RefreshOrders())
	}
	return nil
}

// RefreshInserts emits update set u's new ORDERS rows, each followed by
// its LINEITEM rows (RF1, clause 2.5.2), for u from 1 (the power test's
// set) up.
func (g *Generator) RefreshInserts(u int, emit func(Row) error) error {
	s := g.scale
	if err := s.checkSet(u); err != nil {
		return err
	}
	og := newOrdersGen(g)
	// dbgen positions the streams after the population as if generating
	// step 101 of 100: ORDERS' streams skip every loaded order, LINEITEM's
	// only the 100 equal shares (its set_state leaves out the remainder).
	rows := s.orders()
	og.skipOrders(rows)
	og.skipLines(rows / 100 * 100)
	n := s.RefreshOrders()
	og.skipOrders(int64(u-1) * n)
	og.skipLines(int64(u-1) * n)
	return og.run(int64(u-1)*n+1, n, refreshSlot(u), emit)
}

// refreshSlot is the key slot of update set u's orders.
func refreshSlot(u int) int64 {
	if u%10000 == 0 {
		return 0
	}
	return 1 + int64(u%10000)/1000
}

// RefreshDeletes returns the keys of the orders update set u deletes,
// with their line items (RF2, clause 2.5.3), in dbgen's order.
func (s Scale) RefreshDeletes(u int) ([]int64, error) {
	if err := s.checkSet(u); err != nil {
		return nil, err
	}
	n := s.RefreshOrders()
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = sparseKey(int64(u-1)*n+int64(i)+1, int64(u)/1000)
	}
	return keys, nil
}
