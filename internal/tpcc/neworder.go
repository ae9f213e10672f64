package tpcc

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// newOrderOutput is what the terminal of a New-Order displays (clause
// 2.4.3.3) beyond what the database keeps.
type newOrderOutput struct {
	oID     int64
	total   Money // sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX)
	branded int   // lines whose brand-generic is "B"
}

// newOrder is the body of one New-Order transaction (clause 2.4.2.2). An
// unused item number ends it with ErrRollback (2.4.2.3).
func (s *ClientSession) newOrder(ctx context.Context, tx Tx, in *NewOrder) error {
	if in.DID < 1 || in.DID > len(s.st.NewOrderStocks) {
		return fmt.Errorf("district %d out of range 1..%d", in.DID, len(s.st.NewOrderStocks))
	}
	if len(in.Lines) < 1 || len(in.Lines) > MaxOrderLines {
		return fmt.Errorf("%d order lines: want 1..%d", len(in.Lines), MaxOrderLines)
	}
	st := s.st
	w, d, c := int64(in.WID), int64(in.DID), int64(in.CID)

	// Every read's arguments are known from the input: a Prefetcher sends
	// them all with BEGIN in one round trip, in the order they are read
	// below (the district's lock first, then the stock rows', as without
	// prefetching), and the writes with COMMIT in a second one.
	s.itemArgs = appendItemKeys(s.itemArgs[:0], in.Lines)
	s.stockArgs = appendStockKeys(s.stockArgs[:0], in.Lines)
	prefetch(tx, st.NewOrderWarehouse, w)
	prefetch(tx, st.NewOrderDistrict, w, d)
	prefetch(tx, st.NewOrderCustomer, w, d, c)
	prefetch(tx, st.NewOrderItems, s.itemArgs...)
	prefetch(tx, st.NewOrderStocks[in.DID-1], s.stockArgs...)

	// TPC-C 2.4.2.2: the warehouse row is selected and W_TAX retrieved.
	var wTax float64
	if err := tx.QueryRow(ctx, st.NewOrderWarehouse, w).Scan(&wTax); err != nil {
		return fmt.Errorf("read warehouse: %w", err)
	}
	// TPC-C 2.4.2.2: the district row is selected, D_TAX and D_NEXT_O_ID
	// retrieved, and D_NEXT_O_ID incremented by one.
	var dTax float64
	var oID int64
	if err := tx.QueryRow(ctx, st.NewOrderDistrict, w, d).Scan(&dTax, &oID); err != nil {
		return fmt.Errorf("read district: %w", err)
	}
	if err := execDeferred(ctx, tx, st.NewOrderNextOID, w, d); err != nil {
		return fmt.Errorf("increment d_next_o_id: %w", err)
	}
	// TPC-C 2.4.2.2: the customer row is selected and C_DISCOUNT, C_LAST
	// and C_CREDIT retrieved.
	var cDiscount float64
	var cLast, cCredit string
	if err := tx.QueryRow(ctx, st.NewOrderCustomer, w, d, c).Scan(&cDiscount, &cLast, &cCredit); err != nil {
		return fmt.Errorf("read customer %d: %w", c, err)
	}
	// TPC-C 2.4.2.2: a new row is inserted into ORDER and into NEW-ORDER;
	// O_CARRIER_ID is null, O_OL_CNT is the number of items, O_ALL_LOCAL
	// is 1 when every supply warehouse is the home warehouse.
	allLocal := int64(0)
	if in.AllLocal {
		allLocal = 1
	}
	if err := execDeferred(ctx, tx, st.NewOrderInsertOrder, oID, d, w, c, in.EntryD, int64(len(in.Lines)), allLocal); err != nil {
		return fmt.Errorf("insert order %d: %w", oID, err)
	}
	if err := execDeferred(ctx, tx, st.NewOrderInsertNew, oID, d, w); err != nil {
		return fmt.Errorf("insert new_order %d: %w", oID, err)
	}

	// TPC-C 2.4.2.2: for each item, the item row is selected, I_PRICE,
	// I_NAME and I_DATA retrieved; all items are read with one statement.
	if err := s.readItems(ctx, tx, in.Lines); err != nil {
		return err
	}
	// TPC-C 2.4.2.3: an unused I_ID signals "not-found" and the whole
	// transaction is rolled back.
	for i := range in.Lines {
		if s.item(int64(in.Lines[i].IID)) < 0 {
			return ErrRollback
		}
	}
	// TPC-C 2.4.2.2: for each item, the stock row (S_I_ID = OL_I_ID,
	// S_W_ID = OL_SUPPLY_W_ID) is selected; S_QUANTITY, S_DIST_xx (xx =
	// D_ID) and S_DATA retrieved. One statement locks all of them, in key
	// order.
	if err := s.readStocks(ctx, tx, st.NewOrderStocks[in.DID-1], in.Lines); err != nil {
		return err
	}

	ins := s.args[:0]
	var sum Money
	branded := 0
	for i := range in.Lines {
		l := &in.Lines[i]
		iID, supW, qty := int64(l.IID), int64(l.SupplyWID), int64(l.Quantity)
		it := &s.items[s.item(iID)]
		k := s.stock(supW, iID)
		if k < 0 {
			return fmt.Errorf("read stock i=%d w=%d: %w", iID, supW, ErrNoRows)
		}
		sk := &s.stocks[k]
		// TPC-C 2.4.2.2: if S_QUANTITY >= OL_QUANTITY + 10 it is decreased
		// by OL_QUANTITY, otherwise decreased by OL_QUANTITY and increased
		// by 91. S_YTD += OL_QUANTITY, S_ORDER_CNT += 1, and S_REMOTE_CNT += 1
		// when the supply warehouse is not the home warehouse. A row that
		// several lines name is updated line after line, as if each line
		// updated it in turn.
		if sk.qty >= qty+10 {
			sk.qty -= qty
		} else {
			sk.qty = sk.qty - qty + 91
		}
		sk.ytd += qty
		sk.cnt++
		if l.SupplyWID != in.WID {
			sk.remote++
		}
		// TPC-C 2.4.2.2: OL_AMOUNT = OL_QUANTITY * I_PRICE (exact, in cents);
		// OL_DIST_INFO = S_DIST_xx; OL_DELIVERY_D is null.
		amount := Money(qty) * it.price
		ins = append(ins, oID, d, w, int64(i+1), iID, supW, qty, amount.Float(), sk.distInfo)
		sum += amount
		// TPC-C 2.4.2.2: brand-generic is "B" when both I_DATA and S_DATA
		// contain "ORIGINAL", else "G".
		if strings.Contains(it.data, "ORIGINAL") && strings.Contains(sk.data, "ORIGINAL") {
			branded++
		}
	}
	s.args = ins
	// TPC-C 2.4.2.2: the stock rows are updated, with one statement.
	up := s.args2[:0]
	for k := range s.stocks {
		sk := &s.stocks[k]
		up = append(up, sk.w, sk.i, sk.qty, sk.ytd, sk.cnt, sk.remote)
	}
	last := up[len(up)-6:]
	for len(up) < 6*MaxOrderLines {
		up = append(up, last...)
	}
	s.args2 = up
	if err := execDeferred(ctx, tx, st.NewOrderUpdateStocks, up...); err != nil {
		return fmt.Errorf("update stock of order %d: %w", oID, err)
	}
	// TPC-C 2.4.2.2: a new row is inserted into ORDER-LINE for each item,
	// all with one statement.
	if err := execDeferred(ctx, tx, st.NewOrderInsertOrdLines[len(in.Lines)], ins...); err != nil {
		return fmt.Errorf("insert the %d order lines of order %d: %w", len(in.Lines), oID, err)
	}
	// TPC-C 2.4.2.2: total-amount = sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX).
	s.out = newOrderOutput{
		oID:     oID,
		total:   Money(math.Round(float64(sum) * (1 - cDiscount) * (1 + wTax + dTax))),
		branded: branded,
	}
	return nil
}

// orderItem is one distinct item of a New-Order as read (TPC-C 2.4.2.2).
type orderItem struct {
	id    int64
	price Money
	name  string // I_NAME
	data  string // I_DATA
}

// orderStock is one distinct stock row of a New-Order: as read, then as
// its lines update it (TPC-C 2.4.2.2).
type orderStock struct {
	w, i     int64
	qty      int64  // S_QUANTITY
	data     string // S_DATA
	distInfo string // S_DIST_xx
	ytd      int64  // S_YTD increment
	cnt      int64  // S_ORDER_CNT increment
	remote   int64  // S_REMOTE_CNT increment
}

// appendItemKeys appends the arguments of Statements.NewOrderItems for
// lines to dst: MaxOrderLines item ids, padded with the last one.
func appendItemKeys(dst []any, lines []OrderLineInput) []any {
	for i := range MaxOrderLines {
		dst = append(dst, int64(lines[min(i, len(lines)-1)].IID))
	}
	return dst
}

// appendStockKeys appends the arguments of Statements.NewOrderStocks for
// lines to dst: MaxOrderLines (supply warehouse, item) keys, padded with
// the last one.
func appendStockKeys(dst []any, lines []OrderLineInput) []any {
	for i := range MaxOrderLines {
		l := &lines[min(i, len(lines)-1)]
		dst = append(dst, int64(l.SupplyWID), int64(l.IID))
	}
	return dst
}

// readItems reads the distinct items of lines into s.items, with one
// statement (arguments in s.itemArgs).
func (s *ClientSession) readItems(ctx context.Context, tx Tx, lines []OrderLineInput) error {
	rows, err := tx.Query(ctx, s.st.NewOrderItems, s.itemArgs...)
	if err != nil {
		return fmt.Errorf("read items: %w", err)
	}
	s.items = s.items[:0]
	var price float64
	for rows.Next() {
		s.items = append(s.items, orderItem{})
		it := &s.items[len(s.items)-1]
		if err := rows.Scan(&it.id, &price, &it.name, &it.data); err != nil {
			rows.Close()
			return fmt.Errorf("read items: %w", err)
		}
		it.price = moneyFromDB(price)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read items: %w", err)
	}
	return nil
}

// item is the index in s.items of item id, or -1.
func (s *ClientSession) item(id int64) int {
	for k := range s.items {
		if s.items[k].id == id {
			return k
		}
	}
	return -1
}

// readStocks reads and locks the distinct stock rows of lines into
// s.stocks with q, one statement (arguments in s.stockArgs).
func (s *ClientSession) readStocks(ctx context.Context, tx Tx, q string, lines []OrderLineInput) error {
	rows, err := tx.Query(ctx, q, s.stockArgs...)
	if err != nil {
		return fmt.Errorf("read stock: %w", err)
	}
	s.stocks = s.stocks[:0]
	for rows.Next() {
		s.stocks = append(s.stocks, orderStock{})
		sk := &s.stocks[len(s.stocks)-1]
		if err := rows.Scan(&sk.w, &sk.i, &sk.qty, &sk.data, &sk.distInfo); err != nil {
			rows.Close()
			return fmt.Errorf("read stock: %w", err)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read stock: %w", err)
	}
	return nil
}

// stock is the index in s.stocks of the row (w, i), or -1.
func (s *ClientSession) stock(w, i int64) int {
	for k := range s.stocks {
		if s.stocks[k].w == w && s.stocks[k].i == i {
			return k
		}
	}
	return -1
}
