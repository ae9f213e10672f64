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
	if in.DID < 1 || in.DID > len(s.st.NewOrderStock) {
		return fmt.Errorf("district %d out of range 1..%d", in.DID, len(s.st.NewOrderStock))
	}
	st := s.st
	w, d, c := int64(in.WID), int64(in.DID), int64(in.CID)

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
	if _, err := tx.Exec(ctx, st.NewOrderNextOID, w, d); err != nil {
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
	if _, err := tx.Exec(ctx, st.NewOrderInsertOrder, oID, d, w, c, in.EntryD, int64(len(in.Lines)), allLocal); err != nil {
		return fmt.Errorf("insert order %d: %w", oID, err)
	}
	if _, err := tx.Exec(ctx, st.NewOrderInsertNew, oID, d, w); err != nil {
		return fmt.Errorf("insert new_order %d: %w", oID, err)
	}

	stockSQL := st.NewOrderStock[in.DID-1]
	var sum Money
	branded := 0
	for i := range in.Lines {
		l := &in.Lines[i]
		iID, supW, qty := int64(l.IID), int64(l.SupplyWID), int64(l.Quantity)

		// TPC-C 2.4.2.2: the item row is selected, I_PRICE, I_NAME and
		// I_DATA retrieved. TPC-C 2.4.2.3: an unused I_ID signals
		// "not-found" and the whole transaction is rolled back.
		var price float64
		var iName, iData string
		if err := tx.QueryRow(ctx, st.NewOrderItem, iID).Scan(&price, &iName, &iData); err != nil {
			if isNoRows(err) {
				return ErrRollback
			}
			return fmt.Errorf("read item %d: %w", iID, err)
		}
		// TPC-C 2.4.2.2: the stock row (S_I_ID = OL_I_ID, S_W_ID =
		// OL_SUPPLY_W_ID) is selected; S_QUANTITY, S_DIST_xx (xx = D_ID)
		// and S_DATA retrieved.
		var sQty int64
		var sData, distInfo string
		if err := tx.QueryRow(ctx, stockSQL, iID, supW).Scan(&sQty, &sData, &distInfo); err != nil {
			return fmt.Errorf("read stock i=%d w=%d: %w", iID, supW, err)
		}
		// TPC-C 2.4.2.2: if S_QUANTITY >= OL_QUANTITY + 10 it is decreased
		// by OL_QUANTITY, otherwise decreased by OL_QUANTITY and increased
		// by 91. S_YTD += OL_QUANTITY, S_ORDER_CNT += 1, and S_REMOTE_CNT += 1
		// when the supply warehouse is not the home warehouse.
		if sQty >= qty+10 {
			sQty -= qty
		} else {
			sQty = sQty - qty + 91
		}
		remote := int64(0)
		if l.SupplyWID != in.WID {
			remote = 1
		}
		if _, err := tx.Exec(ctx, st.NewOrderUpdateStock, sQty, qty, remote, iID, supW); err != nil {
			return fmt.Errorf("update stock i=%d w=%d: %w", iID, supW, err)
		}
		// TPC-C 2.4.2.2: OL_AMOUNT = OL_QUANTITY * I_PRICE (exact, in cents);
		// OL_DIST_INFO = S_DIST_xx; OL_DELIVERY_D is null.
		amount := Money(qty) * moneyFromDB(price)
		if _, err := tx.Exec(ctx, st.NewOrderInsertOrdLine, oID, d, w, int64(i+1), iID, supW, qty, amount.Float(), distInfo); err != nil {
			return fmt.Errorf("insert order_line %d of order %d: %w", i+1, oID, err)
		}
		sum += amount
		// TPC-C 2.4.2.2: brand-generic is "B" when both I_DATA and S_DATA
		// contain "ORIGINAL", else "G".
		if strings.Contains(iData, "ORIGINAL") && strings.Contains(sData, "ORIGINAL") {
			branded++
		}
	}
	// TPC-C 2.4.2.2: total-amount = sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX).
	s.out = newOrderOutput{
		oID:     oID,
		total:   Money(math.Round(float64(sum) * (1 - cDiscount) * (1 + wTax + dTax))),
		branded: branded,
	}
	return nil
}
