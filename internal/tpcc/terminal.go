package tpcc

import "time"

// Terminal is one virtual user's input generator (TPC-C 2.4.1, 2.5.1,
// 2.6.1, 2.7.1, 2.8.1, 5.2.4.2): it chooses the next transaction type from
// its own deck and fills the transaction inputs. It does no I/O and keeps
// no clock: callers pass the time used for O_ENTRY_D, H_DATE and
// OL_DELIVERY_D. A Terminal is owned by one goroutine; filling an input
// reuses its Lines capacity and never allocates once that is large enough.
type Terminal struct {
	r          *Rand
	run        Constants
	warehouses int
	wID        int // warehouse of the next transactions (home unless SetWarehouse)
	dID        int // the terminal's fixed district for Stock-Level (2.8.1.1)
	deck       Deck

	// TPC-C 2.4.1.4: a fixed 1% of New-Order transactions roll back. Each
	// run of rollbackRun New-Orders has exactly one rollback, at rollbackAt.
	rollbackAt int
	newOrders  int // New-Orders drawn in the current run
}

// rollbackRun is the number of New-Orders among which exactly one rolls
// back: 1% (TPC-C 2.4.1.4).
const rollbackRun = 100

// NewTerminal returns the terminal of a virtual user bound to warehouse
// homeWID (of warehouses) and district districtID, drawing from r with the
// run-time NURand constants run.
func NewTerminal(r *Rand, run Constants, warehouses, homeWID, districtID int) *Terminal {
	t := &Terminal{
		r:          r,
		run:        run,
		warehouses: max(warehouses, 1),
		wID:        homeWID,
		dID:        districtID,
		deck:       NewDeck(r),
	}
	t.rollbackAt = r.Uniform(0, rollbackRun-1)
	return t
}

// SetWarehouse makes w the warehouse of the following transactions, for
// drivers that move a virtual user across warehouses (HammerDB's "use all
// warehouses"). Remote choices are relative to w.
func (t *Terminal) SetWarehouse(w int) { t.wID = w }

// WarehouseID returns the warehouse of the next transactions.
func (t *Terminal) WarehouseID() int { return t.wID }

// DistrictID returns the terminal's fixed district.
func (t *Terminal) DistrictID() int { return t.dID }

// NextKind draws the next transaction type from the terminal's deck (5.2.4.2).
func (t *Terminal) NextKind() TxKind { return t.deck.Next() }

// otherWarehouse returns a warehouse uniformly chosen among all but t.wID;
// warehouses must be > 1.
func (t *Terminal) otherWarehouse() int {
	w := t.r.Uniform(1, t.warehouses-1)
	if w >= t.wID {
		w++
	}
	return w
}

// nextRollback reports whether this New-Order is the rolled-back one of
// its run of 100 (TPC-C 2.4.1.4).
func (t *Terminal) nextRollback() bool {
	rbk := t.newOrders == t.rollbackAt
	t.newOrders++
	if t.newOrders == rollbackRun {
		t.newOrders = 0
		t.rollbackAt = t.r.Uniform(0, rollbackRun-1)
	}
	return rbk
}

// NewOrder fills in with the input of a New-Order transaction (TPC-C 2.4.1).
func (t *Terminal) NewOrder(in *NewOrder, now time.Time) {
	r := t.r
	in.WID = t.wID
	in.DID = r.Uniform(1, DistrictsPerWarehouse)                // 2.4.1.2: D_ID random within [1 .. 10]
	in.CID = r.NURand(ACID, 1, CustomersPerDistrict, t.run.CID) // C_ID NURand(1023, 1, 3000)
	n := r.Uniform(5, 15)                                       // 2.4.1.3: ol_cnt random within [5 .. 15]
	in.Rollback = t.nextRollback()                              // 2.4.1.4
	in.AllLocal = true
	lines := in.Lines[:0]
	for range n {
		// 2.4.1.5: OL_I_ID NURand(8191, 1, 100000); OL_SUPPLY_W_ID the home
		// warehouse 99% of the time, otherwise a random other warehouse
		// (always home when there is a single warehouse); OL_QUANTITY
		// random within [1 .. 10].
		l := OrderLineInput{
			IID:       r.NURand(AOLIID, 1, ItemCount, t.run.OLIID),
			SupplyWID: t.wID,
		}
		if t.warehouses > 1 && r.Uniform(1, 100) == 1 {
			l.SupplyWID = t.otherWarehouse()
			in.AllLocal = false
		}
		l.Quantity = r.Uniform(1, 10)
		lines = append(lines, l)
	}
	if in.Rollback {
		// 2.4.1.5: the last item of a rolled-back order is an unused item number.
		lines[n-1].IID = ItemCount + 1
	}
	in.Lines = lines
	in.EntryD = now // 2.4.1.6: O_ENTRY_D is the system's current date and time
}

// customer decides whether a Payment or Order-Status selects its
// customer by last name: y = random(1..100) <= 60 (2.5.1.2, 2.6.1.2). It
// returns the last name from NURand(255, 0, 999) or the C_ID from
// NURand(1023, 1, 3000), with the run-time constants.
func (t *Terminal) customer() (byName bool, last string, cID int) {
	if t.r.Uniform(1, 100) <= 60 {
		return true, LastName(t.r.NURand(ACLast, 0, 999, t.run.CLast)), 0
	}
	return false, "", t.r.NURand(ACID, 1, CustomersPerDistrict, t.run.CID)
}

// Payment fills in with the input of a Payment transaction (TPC-C 2.5.1).
func (t *Terminal) Payment(in *Payment, now time.Time) {
	r := t.r
	in.WID = t.wID
	in.DID = r.Uniform(1, DistrictsPerWarehouse) // 2.5.1.2: D_ID random within [1 .. 10]
	// 2.5.1.2: x = random(1..100); 85% the customer is of the home warehouse
	// and district, 15% of a random district of a random other warehouse.
	// With a single warehouse the "remote" 15% stay in the home warehouse
	// with a random district.
	if r.Uniform(1, 100) <= 85 {
		in.CWID, in.CDID = in.WID, in.DID
	} else {
		in.CWID = in.WID
		if t.warehouses > 1 {
			in.CWID = t.otherWarehouse()
		}
		in.CDID = r.Uniform(1, DistrictsPerWarehouse)
	}
	in.ByName, in.CLast, in.CID = t.customer()
	in.Amount = r.Money(100, 500000) // 2.5.1.3: H_AMOUNT random within [1.00 .. 5,000.00]
	in.HDate = now                   // 2.5.1.4
}

// OrderStatus fills in with the input of an Order-Status transaction
// (TPC-C 2.6.1): home warehouse, D_ID random within [1 .. 10], 60% by name.
func (t *Terminal) OrderStatus(in *OrderStatus) {
	in.WID = t.wID
	in.DID = t.r.Uniform(1, DistrictsPerWarehouse)
	in.ByName, in.CLast, in.CID = t.customer()
}

// Delivery fills in with the input of a Delivery transaction (TPC-C
// 2.7.1): O_CARRIER_ID random within [1 .. 10]; Skipped is reset.
func (t *Terminal) Delivery(in *Delivery, now time.Time) {
	in.WID = t.wID
	in.CarrierID = t.r.Uniform(1, 10)
	in.DeliveryD = now
	in.Skipped = 0
}

// StockLevel fills in with the input of a Stock-Level transaction (TPC-C
// 2.8.1): the terminal's own warehouse and fixed district, threshold random
// within [10 .. 20]; LowStock is reset.
func (t *Terminal) StockLevel(in *StockLevel) {
	in.WID = t.wID
	in.DID = t.dID
	in.Threshold = t.r.Uniform(10, 20)
	in.LowStock = 0
}
