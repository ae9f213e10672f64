package tpcc

import (
	"context"
	"fmt"
)

// stockLevelOrders is how many of the district's most recent orders
// Stock-Level examines (clause 2.8.2.2).
const stockLevelOrders = 20

// stockLevel is the body of one Stock-Level transaction (clause 2.8.2.2).
func (s *ClientSession) stockLevel(ctx context.Context, tx Tx, in *StockLevel) error {
	st := s.st
	w, d := int64(in.WID), int64(in.DID)
	// TPC-C 2.8.2.2: D_NEXT_O_ID of the district is retrieved.
	var next int64
	if err := tx.QueryRow(ctx, st.StockLevelNextOID, w, d).Scan(&next); err != nil {
		return fmt.Errorf("read district: %w", err)
	}
	// TPC-C 2.8.2.2: the order lines of the last 20 orders of the district
	// (OL_O_ID < D_NEXT_O_ID and >= D_NEXT_O_ID - 20), joined with the
	// stock of the home warehouse; the distinct items whose S_QUANTITY is
	// below the threshold are counted.
	var low int64
	if err := tx.QueryRow(ctx, st.StockLevelLowStock, w, d, next, next-stockLevelOrders, w, int64(in.Threshold)).Scan(&low); err != nil {
		return fmt.Errorf("count low stock: %w", err)
	}
	in.LowStock = int(low)
	return nil
}
