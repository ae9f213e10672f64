package tpcc

import (
	"context"
	"fmt"
	"time"
)

// orderStatus is the body of one Order-Status transaction (clause 2.6.2.2).
// It only reads; what it reads is the terminal's output (2.6.3.3).
func (s *ClientSession) orderStatus(ctx context.Context, tx Tx, in *OrderStatus) error {
	st := s.st
	w, d := int64(in.WID), int64(in.DID)

	// TPC-C 2.6.2.2: the customer, by number or by last name (the row at
	// position ceil(n/2) of those sorted by C_FIRST); C_BALANCE, C_FIRST,
	// C_MIDDLE and C_LAST are retrieved.
	cID, err := s.customerID(ctx, tx, w, d, in.ByName, in.CLast, in.CID)
	if err != nil {
		return err
	}
	// A Prefetcher sends the customer's and its last order's reads together.
	prefetch(tx, st.OrderStatusCustomer, w, d, cID)
	prefetch(tx, st.OrderStatusLastOrder, w, d, cID)
	cu := &s.cust
	if err := tx.QueryRow(ctx, st.OrderStatusCustomer, w, d, cID).Scan(&cu.balance, &cu.first, &cu.middle, &cu.last); err != nil {
		return fmt.Errorf("read customer %d: %w", cID, err)
	}
	// TPC-C 2.6.2.2: the customer's order with the largest O_ID; O_ID,
	// O_ENTRY_D and O_CARRIER_ID are retrieved.
	var oID int64
	var entryD time.Time
	var carrier any
	if err := tx.QueryRow(ctx, st.OrderStatusLastOrder, w, d, cID).Scan(&oID, &entryD, &carrier); err != nil {
		return fmt.Errorf("read last order of customer %d: %w", cID, err)
	}
	// TPC-C 2.6.2.2: every order line of that order; OL_I_ID,
	// OL_SUPPLY_W_ID, OL_QUANTITY, OL_AMOUNT and OL_DELIVERY_D retrieved.
	rows, err := tx.Query(ctx, st.OrderStatusOrderLines, w, d, oID)
	if err != nil {
		return fmt.Errorf("read order lines of order %d: %w", oID, err)
	}
	var iID, supW, qty int64
	var amount float64
	var deliveryD any
	for rows.Next() {
		if err := rows.Scan(&iID, &supW, &qty, &amount, &deliveryD); err != nil {
			rows.Close()
			return fmt.Errorf("read order lines of order %d: %w", oID, err)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read order lines of order %d: %w", oID, err)
	}
	return nil
}
