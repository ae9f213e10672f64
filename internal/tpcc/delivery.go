package tpcc

import (
	"context"
	"fmt"
)

// deliveryDistricts is the number of districts of a warehouse (clause 1.2.1)
// that one Delivery processes (2.7.4.2).
const deliveryDistricts = 10

// delivery is the body of one Delivery transaction (clause 2.7.4.2): the
// ten districts of the warehouse are processed in one database
// transaction, district after district. A Prefetcher sends the ten
// districts' oldest-new-order reads together (each locks its row, in
// district order, as one district at a time would), then the deletes and
// reads that follow from their order ids together, then the updates with
// COMMIT: three round trips instead of forty.
func (s *ClientSession) delivery(ctx context.Context, tx Tx, in *Delivery) error {
	st := s.st
	w := int64(in.WID)
	carrier := int64(in.CarrierID)
	in.Skipped = 0
	for di := 1; di <= deliveryDistricts; di++ {
		prefetch(tx, st.DeliveryOldestNewOrder, w, int64(di))
	}
	// TPC-C 2.7.4.2: in each district the new_order row with the lowest
	// NO_O_ID is selected. If there is none, delivery for this district
	// is skipped (2.7.4.2, recorded as in 2.7.4.3).
	var oIDs [deliveryDistricts]int64 // 0: none
	for di := 1; di <= deliveryDistricts; di++ {
		d := int64(di)
		if err := tx.QueryRow(ctx, st.DeliveryOldestNewOrder, w, d).Scan(&oIDs[di-1]); err != nil {
			if isNoRows(err) {
				oIDs[di-1] = 0
				in.Skipped++
				continue
			}
			return fmt.Errorf("district %d: find oldest new_order: %w", d, err)
		}
		oID := oIDs[di-1]
		prefetch(tx, st.DeliveryDeleteNewOrder, w, d, oID)
		prefetch(tx, st.DeliveryOrderCustomer, w, d, oID)
		prefetch(tx, st.DeliverySumAmount, w, d, oID)
	}
	for di := 1; di <= deliveryDistricts; di++ {
		d, oID := int64(di), oIDs[di-1]
		if oID == 0 {
			continue
		}
		// TPC-C 2.7.4.2: the selected new_order row is deleted. A row a
		// concurrent Delivery deleted first counts as skipped.
		n, err := tx.Exec(ctx, st.DeliveryDeleteNewOrder, w, d, oID)
		if err != nil {
			return fmt.Errorf("district %d: delete new_order %d: %w", d, oID, err)
		}
		// TPC-C 2.7.4.2: the order row is selected, O_C_ID retrieved and
		// O_CARRIER_ID updated.
		var cID int64
		if err := tx.QueryRow(ctx, st.DeliveryOrderCustomer, w, d, oID).Scan(&cID); err != nil {
			return fmt.Errorf("district %d: read order %d: %w", d, oID, err)
		}
		// TPC-C 2.7.4.2: the sum of the order lines' OL_AMOUNT is retrieved.
		var sum float64
		if err := tx.QueryRow(ctx, st.DeliverySumAmount, w, d, oID).Scan(&sum); err != nil {
			return fmt.Errorf("district %d: sum ol_amount of order %d: %w", d, oID, err)
		}
		if n == 0 {
			in.Skipped++
			continue
		}
		if err := execDeferred(ctx, tx, st.DeliverySetCarrier, carrier, w, d, oID); err != nil {
			return fmt.Errorf("district %d: set carrier of order %d: %w", d, oID, err)
		}
		// TPC-C 2.7.4.2: every order line of the order gets OL_DELIVERY_D.
		if err := execDeferred(ctx, tx, st.DeliverySetDeliveryD, in.DeliveryD, w, d, oID); err != nil {
			return fmt.Errorf("district %d: set ol_delivery_d of order %d: %w", d, oID, err)
		}
		// TPC-C 2.7.4.2: C_BALANCE += sum(OL_AMOUNT), C_DELIVERY_CNT += 1.
		if err := execDeferred(ctx, tx, st.DeliveryUpdateCustomer, moneyFromDB(sum).Float(), w, d, cID); err != nil {
			return fmt.Errorf("district %d: update customer %d: %w", d, cID, err)
		}
	}
	return nil
}
