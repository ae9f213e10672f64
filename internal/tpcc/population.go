package tpcc

import (
	"strconv"
	"time"
)

// Cardinalities of the initial population (TPC-C 1.2.1, 4.3.3.1).
const (
	ItemCount             = 100000 // ITEM rows; also STOCK rows per warehouse
	DistrictsPerWarehouse = 10
	CustomersPerDistrict  = 3000
	OrdersPerDistrict     = 3000
	// FirstNewOrderID is the first O_ID of each district that is still
	// undelivered after the load: orders 2101..3000 have a NEW_ORDER row, no
	// carrier and undelivered order lines (TPC-C 4.3.3.1).
	FirstNewOrderID = 2101
	// NewOrdersPerDistrict is the number of NEW_ORDER rows per district.
	NewOrdersPerDistrict = OrdersPerDistrict - FirstNewOrderID + 1
)

// RowsPerWarehouse returns the number of rows of t generated per warehouse:
// exact for every table but ORDER_LINE, whose count is random (5..15 lines
// per order) and 300,000 on average. ITEM is not per warehouse: 0 (see
// ItemCount).
func RowsPerWarehouse(t Table) int {
	switch t {
	case Warehouse:
		return 1
	case Stock:
		return ItemCount
	case District:
		return DistrictsPerWarehouse
	case Customer, History, Orders:
		return DistrictsPerWarehouse * CustomersPerDistrict
	case NewOrderTable:
		return DistrictsPerWarehouse * NewOrdersPerDistrict
	case OrderLine:
		return DistrictsPerWarehouse * OrdersPerDistrict * 10
	}
	return 0
}

// Fixed values of the initial population (TPC-C 4.3.3.1).
const (
	loadWYTD          Money = 30000000 // W_YTD 300,000.00
	loadDYTD          Money = 3000000  // D_YTD 30,000.00
	loadCCreditLim    Money = 5000000  // C_CREDIT_LIM 50,000.00
	loadCBalance      Money = -1000    // C_BALANCE -10.00
	loadCYTDPayment   Money = 1000     // C_YTD_PAYMENT 10.00
	loadHAmount       Money = 1000     // H_AMOUNT 10.00
	loadOLQuantity          = 5        // OL_QUANTITY
	loadSQuantityMin        = 10       // S_QUANTITY random within [10..100]
	loadSQuantityMax        = 100      //
	fourDecimalsScale       = 10000    // W_TAX, D_TAX, C_DISCOUNT held in 1/10,000
)

// tsTSV is the TSV and SQL text form of timestamps.
const tsTSV = "2006-01-02 15:04:05"

// Generator produces the initial population (TPC-C 4.3.3.1) as Row values.
// Each warehouse is drawn from its own stream (WarehouseStream), so the
// bytes of warehouse w depend only on (seed, w): workers may generate
// warehouses in any order and in parallel, each with its own Generator.
// A Generator is owned by one goroutine and reuses its rows: emit must
// encode a row before returning and must not retain it.
type Generator struct {
	seed     uint64
	load     Constants
	loadTime time.Time
	loadTS   []byte // loadTime formatted as tsTSV

	r Rand

	item  itemRow
	wh    warehouseRow
	stock stockRow
	dist  districtRow
	cust  customerRow
	hist  historyRow
	ord   orderRow
	no    newOrderRow
	ol    orderLineRow

	olCnt [OrdersPerDistrict]uint8 // O_OL_CNT of each order of the current district
}

// NewGenerator returns a generator for seed, using the load-time NURand
// constants load (C_LAST of customers 1001..3000) and loadTime for
// C_SINCE, H_DATE and O_ENTRY_D. loadTime is truncated to the second, the
// resolution of the TSV form.
func NewGenerator(seed uint64, load Constants, loadTime time.Time) *Generator {
	loadTime = loadTime.Truncate(time.Second)
	g := &Generator{
		seed:     seed,
		load:     load,
		loadTime: loadTime,
		loadTS:   loadTime.AppendFormat(nil, tsTSV),
	}
	g.item.init()
	g.wh.init()
	g.stock.init()
	g.dist.init()
	g.cust.init(g)
	g.hist.init(g)
	g.ord.g = g
	g.ol.init(g)
	return g
}

// Items emits the 100,000 ITEM rows (TPC-C 4.3.3.1), in I_ID order.
func (g *Generator) Items(emit func(Row) error) error {
	g.r.Seed(g.seed, ItemsStream)
	it := &g.item
	for id := 1; id <= ItemCount; id++ {
		it.id = id
		it.imID = g.r.Uniform(1, 10000)                  // I_IM_ID random within [1 .. 10,000]
		it.name = g.r.AppendAString(it.name[:0], 14, 24) // I_NAME random a-string [14 .. 24]
		it.price = g.r.Money(100, 10000)                 // I_PRICE random within [1.00 .. 100.00]
		it.data = g.r.AppendData(it.data[:0], 26, 50)    // I_DATA [26 .. 50], 10% ORIGINAL
		if err := emit(it); err != nil {
			return err
		}
	}
	return nil
}

// Warehouse emits every row of warehouse w (TPC-C 4.3.3.1), grouped by
// table so that bulk loaders see long runs of one table:
//
//	WAREHOUSE (1), STOCK (100,000), then for each district 1..10:
//	DISTRICT (1), CUSTOMER (3,000), HISTORY (3,000), ORDERS (3,000),
//	NEW_ORDER (900), ORDER_LINE (5..15 per order).
//
// The rows depend only on (seed, w) and the load constants.
func (g *Generator) Warehouse(w int, emit func(Row) error) error {
	g.r.Seed(g.seed, WarehouseStream(w))
	r := &g.r

	wh := &g.wh
	wh.id = w
	wh.name = r.AppendAString(wh.name[:0], 6, 10) // W_NAME random a-string [6 .. 10]
	wh.addr.generate(r)
	wh.tax = r.Uniform(0, 2000) // W_TAX random within [0.0000 .. 0.2000]
	wh.ytd = loadWYTD
	if err := emit(wh); err != nil {
		return err
	}

	st := &g.stock
	st.wID = w
	for i := 1; i <= ItemCount; i++ {
		st.iID = i
		st.quantity = r.Uniform(loadSQuantityMin, loadSQuantityMax)
		for d := range st.dist {
			r.fill(st.dist[d][:], alnum, alnumPerWord) // S_DIST_xx random a-string of 24 letters
		}
		st.data = r.AppendData(st.data[:0], 26, 50) // S_DATA [26 .. 50], 10% ORIGINAL
		if err := emit(st); err != nil {
			return err
		}
	}

	for d := 1; d <= DistrictsPerWarehouse; d++ {
		if err := g.district(w, d, emit); err != nil {
			return err
		}
	}
	return nil
}

func (g *Generator) district(w, d int, emit func(Row) error) error {
	r := &g.r

	dr := &g.dist
	dr.id, dr.wID = d, w
	dr.name = r.AppendAString(dr.name[:0], 6, 10) // D_NAME random a-string [6 .. 10]
	dr.addr.generate(r)
	dr.tax = r.Uniform(0, 2000) // D_TAX random within [0.0000 .. 0.2000]
	dr.ytd = loadDYTD
	dr.nextOID = OrdersPerDistrict + 1 // D_NEXT_O_ID = 3,001
	if err := emit(dr); err != nil {
		return err
	}

	c := &g.cust
	c.dID, c.wID = d, w
	for id := 1; id <= CustomersPerDistrict; id++ {
		c.id = id
		c.first = r.AppendAString(c.first[:0], 8, 16) // C_FIRST random a-string [8 .. 16]
		// C_LAST: the syllables of C_ID-1 for the first 1,000 customers,
		// then of NURand(255, 0, 999) with the load-time constant.
		if id <= 1000 {
			c.last = AppendLastName(c.last[:0], id-1)
		} else {
			c.last = AppendLastName(c.last[:0], r.NURand(ACLast, 0, 999, g.load.CLast))
		}
		c.addr.generate(r)
		c.phone = r.AppendNString(c.phone[:0], 16, 16) // C_PHONE random n-string of 16 numbers
		c.badCredit = r.Uniform(1, 10) == 1            // C_CREDIT "BC" for 10%, else "GC"
		c.discount = r.Uniform(0, 5000)                // C_DISCOUNT random within [0.0000 .. 0.5000]
		c.data = r.AppendAString(c.data[:0], 300, 500) // C_DATA random a-string [300 .. 500]
		if err := emit(c); err != nil {
			return err
		}
	}

	h := &g.hist
	h.dID, h.wID = d, w
	for id := 1; id <= CustomersPerDistrict; id++ {
		h.cID = id
		h.data = r.AppendAString(h.data[:0], 12, 24) // H_DATA random a-string [12 .. 24]
		if err := emit(h); err != nil {
			return err
		}
	}

	// O_C_ID is selected sequentially from a random permutation of
	// [1 .. 3,000] (TPC-C 4.3.3.1).
	o := &g.ord
	o.dID, o.wID = d, w
	perm := &o.perm
	for i := range perm {
		perm[i] = int32(i + 1)
	}
	for i := len(perm) - 1; i > 0; i-- {
		j := r.Uniform(0, i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for id := 1; id <= OrdersPerDistrict; id++ {
		o.id = id
		o.cID = int(perm[id-1])
		if id < FirstNewOrderID {
			o.carrierID = r.Uniform(1, 10) // O_CARRIER_ID random within [1 .. 10] if O_ID < 2,101
		} else {
			o.carrierID = 0 // else null
		}
		o.olCnt = r.Uniform(5, 15) // O_OL_CNT random within [5 .. 15]
		g.olCnt[id-1] = uint8(o.olCnt)
		if err := emit(o); err != nil {
			return err
		}
	}

	no := &g.no
	no.dID, no.wID = d, w
	for id := FirstNewOrderID; id <= OrdersPerDistrict; id++ {
		no.oID = id
		if err := emit(no); err != nil {
			return err
		}
	}

	ol := &g.ol
	ol.dID, ol.wID = d, w
	for id := 1; id <= OrdersPerDistrict; id++ {
		ol.oID = id
		ol.delivered = id < FirstNewOrderID // OL_DELIVERY_D = O_ENTRY_D if OL_O_ID < 2,101, null otherwise
		for n := 1; n <= int(g.olCnt[id-1]); n++ {
			ol.number = n
			ol.iID = r.Uniform(1, ItemCount) // OL_I_ID random within [1 .. 100,000]
			if ol.delivered {
				ol.amount = 0 // OL_AMOUNT = 0.00 if OL_O_ID < 2,101
			} else {
				ol.amount = r.Money(1, 999999) // random within [0.01 .. 9,999.99] otherwise
			}
			r.fill(ol.distInfo[:], alnum, alnumPerWord) // OL_DIST_INFO random a-string of 24 letters
			if err := emit(ol); err != nil {
				return err
			}
		}
	}
	return nil
}

// address is the street, city, state and zip of warehouses, districts and
// customers (TPC-C 4.3.3.1).
type address struct {
	street1, street2, city, state, zip []byte
}

func (a *address) init() {
	a.street1 = make([]byte, 0, 20)
	a.street2 = make([]byte, 0, 20)
	a.city = make([]byte, 0, 20)
	a.state = make([]byte, 0, 2)
	a.zip = make([]byte, 0, 9)
}

func (a *address) generate(r *Rand) {
	a.street1 = r.AppendAString(a.street1[:0], 10, 20) // STREET_1 random a-string [10 .. 20]
	a.street2 = r.AppendAString(a.street2[:0], 10, 20) // STREET_2 random a-string [10 .. 20]
	a.city = r.AppendAString(a.city[:0], 10, 20)       // CITY random a-string [10 .. 20]
	a.state = r.AppendLetters(a.state[:0], 2)          // STATE random a-string of 2 letters
	a.zip = r.AppendZip(a.zip[:0])                     // ZIP generated according to 4.3.2.7
}

func (a *address) appendTSV(dst []byte) []byte {
	dst = tsvBytes(dst, a.street1)
	dst = tsvBytes(dst, a.street2)
	dst = tsvBytes(dst, a.city)
	dst = tsvBytes(dst, a.state)
	return tsvBytes(dst, a.zip)
}

func (a *address) appendArgs(dst []any) []any {
	return append(dst, string(a.street1), string(a.street2), string(a.city), string(a.state), string(a.zip))
}

// TSV field encoders: each appends one value followed by a tab; the caller
// replaces the last tab of a row by a newline (endTSV).

func tsvInt(dst []byte, v int) []byte {
	return append(strconv.AppendInt(dst, int64(v), 10), '\t')
}

func tsvBytes(dst, v []byte) []byte {
	return append(append(dst, v...), '\t')
}

func tsvNull(dst []byte) []byte { return append(dst, '\\', 'N', '\t') }

// tsvMoney appends an amount in cents with two decimals.
func tsvMoney(dst []byte, m Money) []byte {
	return append(appendFixed(dst, int64(m), 100), '\t')
}

// tsvFour appends v/10,000 with four decimals (taxes and discounts).
func tsvFour(dst []byte, v int) []byte {
	return append(appendFixed(dst, int64(v), fourDecimalsScale), '\t')
}

// appendFixed appends v/scale with as many decimals as scale (a power of
// ten) has zeros.
func appendFixed(dst []byte, v, scale int64) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	dst = strconv.AppendInt(dst, v/scale, 10)
	dst = append(dst, '.')
	frac := v % scale
	for s := scale / 10; s > 0; s /= 10 {
		dst = append(dst, byte('0'+frac/s))
		frac %= s
	}
	return dst
}

// endTSV turns the trailing tab of a row into the line's newline.
func endTSV(dst []byte) []byte {
	dst[len(dst)-1] = '\n'
	return dst
}

func fourDecimals(v int) float64 { return float64(v) / fourDecimalsScale }

// itemRow is one ITEM row.
type itemRow struct {
	id, imID   int
	name, data []byte
	price      Money
}

func (it *itemRow) init() {
	it.name = make([]byte, 0, 24)
	it.data = make([]byte, 0, 50)
}

func (it *itemRow) Table() Table { return Item }

func (it *itemRow) AppendTSV(dst []byte) []byte {
	dst = tsvInt(dst, it.id)
	dst = tsvInt(dst, it.imID)
	dst = tsvBytes(dst, it.name)
	dst = tsvMoney(dst, it.price)
	dst = tsvBytes(dst, it.data)
	return endTSV(dst)
}

func (it *itemRow) AppendArgs(dst []any) []any {
	return append(dst, int64(it.id), int64(it.imID), string(it.name), it.price.Float(), string(it.data))
}

// warehouseRow is one WAREHOUSE row.
type warehouseRow struct {
	id   int
	name []byte
	addr address
	tax  int // 1/10,000
	ytd  Money
}

func (w *warehouseRow) init() {
	w.name = make([]byte, 0, 10)
	w.addr.init()
}

func (w *warehouseRow) Table() Table { return Warehouse }

func (w *warehouseRow) AppendTSV(dst []byte) []byte {
	dst = tsvInt(dst, w.id)
	dst = tsvBytes(dst, w.name)
	dst = w.addr.appendTSV(dst)
	dst = tsvFour(dst, w.tax)
	dst = tsvMoney(dst, w.ytd)
	return endTSV(dst)
}

func (w *warehouseRow) AppendArgs(dst []any) []any {
	dst = append(dst, int64(w.id), string(w.name))
	dst = w.addr.appendArgs(dst)
	return append(dst, fourDecimals(w.tax), w.ytd.Float())
}

// stockRow is one STOCK row. S_YTD, S_ORDER_CNT and S_REMOTE_CNT are 0.
type stockRow struct {
	iID, wID int
	quantity int
	dist     [10][24]byte
	data     []byte
}

func (s *stockRow) init() { s.data = make([]byte, 0, 50) }

func (s *stockRow) Table() Table { return Stock }

func (s *stockRow) AppendTSV(dst []byte) []byte {
	dst = tsvInt(dst, s.iID)
	dst = tsvInt(dst, s.wID)
	dst = tsvInt(dst, s.quantity)
	for i := range s.dist {
		dst = tsvBytes(dst, s.dist[i][:])
	}
	dst = append(dst, "0\t0\t0\t"...) // S_YTD, S_ORDER_CNT, S_REMOTE_CNT
	dst = tsvBytes(dst, s.data)
	return endTSV(dst)
}

func (s *stockRow) AppendArgs(dst []any) []any {
	dst = append(dst, int64(s.iID), int64(s.wID), int64(s.quantity))
	for i := range s.dist {
		dst = append(dst, string(s.dist[i][:]))
	}
	return append(dst, int64(0), int64(0), int64(0), string(s.data))
}

// districtRow is one DISTRICT row.
type districtRow struct {
	id, wID int
	name    []byte
	addr    address
	tax     int // 1/10,000
	ytd     Money
	nextOID int
}

func (d *districtRow) init() {
	d.name = make([]byte, 0, 10)
	d.addr.init()
}

func (d *districtRow) Table() Table { return District }

func (d *districtRow) AppendTSV(dst []byte) []byte {
	dst = tsvInt(dst, d.id)
	dst = tsvInt(dst, d.wID)
	dst = tsvBytes(dst, d.name)
	dst = d.addr.appendTSV(dst)
	dst = tsvFour(dst, d.tax)
	dst = tsvMoney(dst, d.ytd)
	dst = tsvInt(dst, d.nextOID)
	return endTSV(dst)
}

func (d *districtRow) AppendArgs(dst []any) []any {
	dst = append(dst, int64(d.id), int64(d.wID), string(d.name))
	dst = d.addr.appendArgs(dst)
	return append(dst, fourDecimals(d.tax), d.ytd.Float(), int64(d.nextOID))
}

// customerRow is one CUSTOMER row. C_MIDDLE is "OE", C_SINCE the load
// time, C_CREDIT_LIM 50,000.00, C_BALANCE -10.00, C_YTD_PAYMENT 10.00,
// C_PAYMENT_CNT 1, C_DELIVERY_CNT 0 (TPC-C 4.3.3.1).
type customerRow struct {
	g                  *Generator
	id, dID, wID       int
	first, last, phone []byte
	addr               address
	badCredit          bool
	discount           int // 1/10,000
	data               []byte
}

func (c *customerRow) init(g *Generator) {
	c.g = g
	c.first = make([]byte, 0, 16)
	c.last = make([]byte, 0, 16)
	c.phone = make([]byte, 0, 16)
	c.addr.init()
	c.data = make([]byte, 0, 500)
}

func (c *customerRow) Table() Table { return Customer }

func (c *customerRow) credit() string {
	if c.badCredit {
		return "BC"
	}
	return "GC"
}

func (c *customerRow) AppendTSV(dst []byte) []byte {
	dst = tsvInt(dst, c.id)
	dst = tsvInt(dst, c.dID)
	dst = tsvInt(dst, c.wID)
	dst = tsvBytes(dst, c.first)
	dst = append(dst, "OE\t"...)
	dst = tsvBytes(dst, c.last)
	dst = c.addr.appendTSV(dst)
	dst = tsvBytes(dst, c.phone)
	dst = tsvBytes(dst, c.g.loadTS)
	dst = append(append(dst, c.credit()...), '\t')
	dst = tsvMoney(dst, loadCCreditLim)
	dst = tsvFour(dst, c.discount)
	dst = tsvMoney(dst, loadCBalance)
	dst = tsvMoney(dst, loadCYTDPayment)
	dst = append(dst, "1\t0\t"...) // C_PAYMENT_CNT, C_DELIVERY_CNT
	dst = tsvBytes(dst, c.data)
	return endTSV(dst)
}

func (c *customerRow) AppendArgs(dst []any) []any {
	dst = append(dst, int64(c.id), int64(c.dID), int64(c.wID), string(c.first), "OE", string(c.last))
	dst = c.addr.appendArgs(dst)
	return append(dst, string(c.phone), c.g.loadTime, c.credit(), loadCCreditLim.Float(),
		fourDecimals(c.discount), loadCBalance.Float(), loadCYTDPayment.Float(), int64(1), int64(0), string(c.data))
}

// historyRow is one HISTORY row: the customer's own district and
// warehouse, H_DATE the load time, H_AMOUNT 10.00 (TPC-C 4.3.3.1).
type historyRow struct {
	g             *Generator
	cID, dID, wID int
	data          []byte
}

func (h *historyRow) init(g *Generator) {
	h.g = g
	h.data = make([]byte, 0, 24)
}

func (h *historyRow) Table() Table { return History }

func (h *historyRow) AppendTSV(dst []byte) []byte {
	dst = tsvInt(dst, h.cID)
	dst = tsvInt(dst, h.dID) // H_C_D_ID
	dst = tsvInt(dst, h.wID) // H_C_W_ID
	dst = tsvInt(dst, h.dID) // H_D_ID
	dst = tsvInt(dst, h.wID) // H_W_ID
	dst = tsvBytes(dst, h.g.loadTS)
	dst = tsvMoney(dst, loadHAmount)
	dst = tsvBytes(dst, h.data)
	return endTSV(dst)
}

func (h *historyRow) AppendArgs(dst []any) []any {
	return append(dst, int64(h.cID), int64(h.dID), int64(h.wID), int64(h.dID), int64(h.wID),
		h.g.loadTime, loadHAmount.Float(), string(h.data))
}

// orderRow is one ORDERS row: O_ENTRY_D the load time, O_ALL_LOCAL 1.
type orderRow struct {
	g                 *Generator
	id, dID, wID, cID int
	carrierID         int // 0: NULL
	olCnt             int
	perm              [CustomersPerDistrict]int32
}

func (o *orderRow) Table() Table { return Orders }

func (o *orderRow) AppendTSV(dst []byte) []byte {
	dst = tsvInt(dst, o.id)
	dst = tsvInt(dst, o.dID)
	dst = tsvInt(dst, o.wID)
	dst = tsvInt(dst, o.cID)
	dst = tsvBytes(dst, o.g.loadTS)
	if o.carrierID == 0 {
		dst = tsvNull(dst)
	} else {
		dst = tsvInt(dst, o.carrierID)
	}
	dst = tsvInt(dst, o.olCnt)
	dst = append(dst, "1\t"...) // O_ALL_LOCAL
	return endTSV(dst)
}

func (o *orderRow) AppendArgs(dst []any) []any {
	var carrier any
	if o.carrierID != 0 {
		carrier = int64(o.carrierID)
	}
	return append(dst, int64(o.id), int64(o.dID), int64(o.wID), int64(o.cID), o.g.loadTime,
		carrier, int64(o.olCnt), int64(1))
}

// newOrderRow is one NEW_ORDER row.
type newOrderRow struct {
	oID, dID, wID int
}

func (n *newOrderRow) Table() Table { return NewOrderTable }

func (n *newOrderRow) AppendTSV(dst []byte) []byte {
	dst = tsvInt(dst, n.oID)
	dst = tsvInt(dst, n.dID)
	dst = tsvInt(dst, n.wID)
	return endTSV(dst)
}

func (n *newOrderRow) AppendArgs(dst []any) []any {
	return append(dst, int64(n.oID), int64(n.dID), int64(n.wID))
}

// orderLineRow is one ORDER_LINE row: OL_SUPPLY_W_ID = OL_W_ID,
// OL_QUANTITY 5 (TPC-C 4.3.3.1).
type orderLineRow struct {
	g                     *Generator
	oID, dID, wID, number int
	iID                   int
	delivered             bool // OL_DELIVERY_D = load time, else NULL
	amount                Money
	distInfo              [24]byte
}

func (ol *orderLineRow) init(g *Generator) { ol.g = g }

func (ol *orderLineRow) Table() Table { return OrderLine }

func (ol *orderLineRow) AppendTSV(dst []byte) []byte {
	dst = tsvInt(dst, ol.oID)
	dst = tsvInt(dst, ol.dID)
	dst = tsvInt(dst, ol.wID)
	dst = tsvInt(dst, ol.number)
	dst = tsvInt(dst, ol.iID)
	dst = tsvInt(dst, ol.wID) // OL_SUPPLY_W_ID
	if ol.delivered {
		dst = tsvBytes(dst, ol.g.loadTS)
	} else {
		dst = tsvNull(dst)
	}
	dst = tsvInt(dst, loadOLQuantity)
	dst = tsvMoney(dst, ol.amount)
	dst = tsvBytes(dst, ol.distInfo[:])
	return endTSV(dst)
}

func (ol *orderLineRow) AppendArgs(dst []any) []any {
	var deliveryD any
	if ol.delivered {
		deliveryD = ol.g.loadTime
	}
	return append(dst, int64(ol.oID), int64(ol.dID), int64(ol.wID), int64(ol.number), int64(ol.iID),
		int64(ol.wID), deliveryD, int64(loadOLQuantity), ol.amount.Float(), string(ol.distInfo[:]))
}
