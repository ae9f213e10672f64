package tpcc

import (
	"context"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// maxCData is the width of C_DATA (clause 1.3.1): the Payment of a bad-credit
// customer never makes it longer (2.5.2.2).
const maxCData = 500

// paymentCustomer is the customer as Payment reads it (clause 2.5.2.2).
type paymentCustomer struct {
	first, middle, last                string
	street1, street2, city, state, zip string
	phone, credit                      string
	since                              time.Time
	creditLim, discount, balance       float64
	data                               string
}

// payment is the body of one Payment transaction (clause 2.5.2.2).
func (s *ClientSession) payment(ctx context.Context, tx Tx, in *Payment) error {
	st := s.st
	w, d := int64(in.WID), int64(in.DID)
	cw, cd := int64(in.CWID), int64(in.CDID)
	amount := in.Amount.Float()

	// TPC-C 2.5.2.2: the warehouse row is selected, W_NAME and the address
	// retrieved, and W_YTD increased by H_AMOUNT. The update goes first so
	// the row lock is taken before the read.
	if err := execDeferred(ctx, tx, st.PaymentWarehouseYTD, amount, w); err != nil {
		return fmt.Errorf("update w_ytd: %w", err)
	}
	// A Prefetcher sends the reads whose arguments are known with the
	// updates above and below, in this order, in one round trip: the
	// warehouse, the district, and the customer (by number) or the
	// customers of the last name.
	prefetch(tx, st.PaymentWarehouse, w)
	if err := execDeferred(ctx, tx, st.PaymentDistrictYTD, amount, w, d); err != nil {
		return fmt.Errorf("update d_ytd: %w", err)
	}
	prefetch(tx, st.PaymentDistrict, w, d)
	if in.ByName {
		prefetch(tx, st.CustomerIDsByLast, cw, cd, in.CLast)
	} else {
		prefetch(tx, st.PaymentCustomer, cw, cd, int64(in.CID))
	}
	var wName, wStreet1, wStreet2, wCity, wState, wZip string
	if err := tx.QueryRow(ctx, st.PaymentWarehouse, w).Scan(&wName, &wStreet1, &wStreet2, &wCity, &wState, &wZip); err != nil {
		return fmt.Errorf("read warehouse: %w", err)
	}
	// TPC-C 2.5.2.2: the same for the district and D_YTD (updated above).
	var dName, dStreet1, dStreet2, dCity, dState, dZip string
	if err := tx.QueryRow(ctx, st.PaymentDistrict, w, d).Scan(&dName, &dStreet1, &dStreet2, &dCity, &dState, &dZip); err != nil {
		return fmt.Errorf("read district: %w", err)
	}

	// TPC-C 2.5.2.2: the customer, by number or by last name (the row at
	// position ceil(n/2) of those sorted by C_FIRST).
	cID, err := s.customerID(ctx, tx, cw, cd, in.ByName, in.CLast, in.CID)
	if err != nil {
		return err
	}
	cu := &s.cust
	if err := tx.QueryRow(ctx, st.PaymentCustomer, cw, cd, cID).Scan(
		&cu.first, &cu.middle, &cu.last, &cu.street1, &cu.street2, &cu.city, &cu.state, &cu.zip,
		&cu.phone, &cu.since, &cu.credit, &cu.creditLim, &cu.discount, &cu.balance); err != nil {
		return fmt.Errorf("read customer %d: %w", cID, err)
	}
	// TPC-C 2.5.2.2: C_BALANCE -= H_AMOUNT, C_YTD_PAYMENT += H_AMOUNT,
	// C_PAYMENT_CNT += 1.
	if cu.credit == "BC" {
		// TPC-C 2.5.2.2: for a bad-credit customer C_DATA is retrieved and
		// C_ID, C_D_ID, C_W_ID, D_ID, W_ID and H_AMOUNT are inserted at its
		// left; what is shifted past 500 characters is discarded.
		if err := tx.QueryRow(ctx, st.PaymentCustomerData, cw, cd, cID).Scan(&cu.data); err != nil {
			return fmt.Errorf("read c_data of customer %d: %w", cID, err)
		}
		s.buf = appendCData(s.buf[:0], cID, cd, cw, d, w, in.Amount, cu.data)
		if err := execDeferred(ctx, tx, st.PaymentUpdateCustData, amount, amount, string(s.buf), cw, cd, cID); err != nil {
			return fmt.Errorf("update customer %d: %w", cID, err)
		}
	} else {
		if err := execDeferred(ctx, tx, st.PaymentUpdateCustomer, amount, amount, cw, cd, cID); err != nil {
			return fmt.Errorf("update customer %d: %w", cID, err)
		}
	}

	// TPC-C 2.5.2.2: a history row is inserted; H_DATA is W_NAME and
	// D_NAME separated by 4 spaces.
	s.buf = append(append(append(s.buf[:0], wName...), "    "...), dName...)
	if err := execDeferred(ctx, tx, st.PaymentInsertHistory, cID, cd, cw, d, w, in.HDate, amount, string(s.buf)); err != nil {
		return fmt.Errorf("insert history: %w", err)
	}
	return nil
}

// appendCData appends the new C_DATA of a bad-credit customer to dst: the
// payment's history information, then the old C_DATA, cut at maxCData
// bytes (on a character boundary).
func appendCData(dst []byte, cID, cDID, cWID, dID, wID int64, amount Money, old string) []byte {
	dst = strconv.AppendInt(dst, cID, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, cDID, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, cWID, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, dID, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, wID, 10)
	dst = append(dst, ' ')
	dst = appendAmount(dst, amount)
	dst = append(dst, ' ')
	dst = append(dst, old...)
	if len(dst) > maxCData {
		n := maxCData
		for n > 0 && !utf8.RuneStart(dst[n]) {
			n--
		}
		dst = dst[:n]
	}
	return dst
}

// appendAmount appends m as units with two decimals ("12.05").
func appendAmount(dst []byte, m Money) []byte {
	if m < 0 {
		dst = append(dst, '-')
		m = -m
	}
	dst = strconv.AppendInt(dst, int64(m/100), 10)
	c := int64(m % 100)
	return append(dst, '.', byte('0'+c/10), byte('0'+c%10))
}
