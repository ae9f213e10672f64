package tpcc

import "time"

// TxKind is one of the five TPC-C transactions.
type TxKind int

const (
	NewOrderTx TxKind = iota
	PaymentTx
	OrderStatusTx
	DeliveryTx
	StockLevelTx
	NumTxKinds = 5
)

var txNames = [NumTxKinds]string{"new_order", "payment", "order_status", "delivery", "stock_level"}

func (k TxKind) String() string {
	if k < 0 || int(k) >= NumTxKinds {
		return "unknown"
	}
	return txNames[k]
}

// Money is an amount in cents; the schema stores it as NUMERIC(12,2) or
// DECIMAL(12,2) (SQLite: REAL, compared with a tolerance of half a cent per term).
type Money int64

// Float returns the amount in currency units, for drivers.
func (m Money) Float() float64 { return float64(m) / 100 }

// OrderLineInput is one item of a New-Order (clause 2.4.1.5).
type OrderLineInput struct {
	IID       int // OL_I_ID, NURand(8191,1,100000); an unused id on the rollback line
	SupplyWID int // OL_SUPPLY_W_ID: home warehouse 99%, remote 1%
	Quantity  int // OL_QUANTITY in [1..10]
}

// NewOrder is the input of one New-Order transaction (clause 2.4.1).
type NewOrder struct {
	WID, DID, CID int
	Lines         []OrderLineInput // 5..15 lines (2.4.1.3)
	AllLocal      bool             // O_ALL_LOCAL: every line from the home warehouse
	Rollback      bool             // the last line carries an unused item id (2.4.1.4)
	EntryD        time.Time        // O_ENTRY_D, the terminal's clock (2.4.1.6)
}

// Payment is the input of one Payment transaction (clause 2.5.1).
type Payment struct {
	WID, DID   int
	CWID, CDID int    // customer's warehouse and district; remote 15% (2.5.1.2)
	ByName     bool   // 60% select the customer by last name (2.5.1.2)
	CLast      string // when ByName
	CID        int    // when !ByName
	Amount     Money  // H_AMOUNT in [1.00..5,000.00] (2.5.1.3)
	HDate      time.Time
}

// OrderStatus is the input of one Order-Status transaction (clause 2.6.1).
type OrderStatus struct {
	WID, DID int
	ByName   bool
	CLast    string
	CID      int
}

// Delivery is the input of one Delivery transaction (clause 2.7.1). Skipped
// is an output: districts with no undelivered order (2.7.4.2).
type Delivery struct {
	WID       int
	CarrierID int // O_CARRIER_ID in [1..10]
	DeliveryD time.Time
	Skipped   int
}

// StockLevel is the input of one Stock-Level transaction (clause 2.8.1).
// LowStock is an output.
type StockLevel struct {
	WID, DID  int // a terminal has a fixed district (2.8.1.1)
	Threshold int // [10..20]
	LowStock  int
}

// Constants are the C values of NURand(A, x, y) (clause 2.1.6): one per A.
// Build draws load constants and records them; run draws run constants
// that satisfy the delta rule of clause 2.1.6.1 against them.
type Constants struct {
	CLast int // C for A=255 (C_LAST)
	CID   int // C for A=1023 (C_ID)
	OLIID int // C for A=8191 (OL_I_ID)
}
