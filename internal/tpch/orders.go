package tpch

// ORDERS and LINEITEM (clause 4.2.3).
const (
	orderCommentAvg = 49
	lineCommentAvg  = 27
	linesMax        = 7 // O_LCNT_MAX: one to seven line items per order
	// custMortality: O_CUSTKEY is never a multiple of 3, so that a third of
	// the customers have no orders (dbgen's CUST_MORTALITY).
	custMortality = 3
)

// orderRow is one ORDERS row.
type orderRow struct {
	key, cust int64
	status    byte
	total     int64 // cents
	date      int   // day number
	priority  string
	clerk     int64
	comment   []byte
}

func (r *orderRow) Table() Table { return Orders }

func (r *orderRow) AppendTBL(dst []byte) []byte {
	dst = appendInt(dst, r.key)
	dst = appendInt(dst, r.cust)
	dst = append(dst, r.status, sep)
	dst = appendMoney(dst, r.total)
	dst = appendDate(dst, r.date)
	dst = appendString(dst, r.priority)
	dst = append(appendPadded(dst, "Clerk#", r.clerk, 9), sep)
	dst = append(dst, '0', sep) // O_SHIPPRIORITY
	dst = appendText(dst, r.comment)
	return endLine(dst)
}

func (r *orderRow) AppendArgs(dst []any) []any {
	return append(dst, r.key, r.cust, string(r.status), money(r.total), isoDate(r.date), r.priority,
		string(appendPadded(nil, "Clerk#", r.clerk, 9)), int64(0), string(r.comment))
}

// lineRow is one LINEITEM row.
type lineRow struct {
	order, part, supp, number int64
	qty                       int64
	price                     int64 // L_EXTENDEDPRICE, cents
	discount, tax             int64 // hundredths
	returnFlag, status        byte
	ship, commit, receipt     int // day numbers
	instruct, mode            string
	comment                   []byte
}

func (r *lineRow) Table() Table { return LineItem }

func (r *lineRow) AppendTBL(dst []byte) []byte {
	dst = appendInt(dst, r.order)
	dst = appendInt(dst, r.part)
	dst = appendInt(dst, r.supp)
	dst = appendInt(dst, r.number)
	dst = appendInt(dst, r.qty)
	dst = appendMoney(dst, r.price)
	dst = append(dst, '0', '.', byte('0'+r.discount/10), byte('0'+r.discount%10), sep,
		'0', '.', '0', byte('0'+r.tax), sep, r.returnFlag, sep, r.status, sep)
	dst = appendDate(dst, r.ship)
	dst = appendDate(dst, r.commit)
	dst = appendDate(dst, r.receipt)
	dst = appendString(dst, r.instruct)
	dst = appendString(dst, r.mode)
	dst = appendText(dst, r.comment)
	return endLine(dst)
}

func (r *lineRow) AppendArgs(dst []any) []any {
	return append(dst, r.order, r.part, r.supp, r.number, float64(r.qty), money(r.price),
		money(r.discount), money(r.tax), string(r.returnFlag), string(r.status),
		isoDate(r.ship), isoDate(r.commit), isoDate(r.receipt), r.instruct, r.mode, string(r.comment))
}

// ordersGen generates ORDERS rows with their LINEITEM rows (dbgen's mk_order).
type ordersGen struct {
	g                            *Generator
	customers, parts, suppliers  int64
	clerks                       int64
	cust, date, prio, clerk, cmt stream
	lines                        stream
	qty, discount, tax           stream
	instruct, mode, lcmt         stream
	part, supp                   stream
	shipDays, commitDays, rcpt   stream
	flag                         stream
	order                        orderRow
	line                         [linesMax]lineRow
	touched                      byte // see generate
}

func newOrdersGen(g *Generator) *ordersGen {
	s := g.scale
	og := &ordersGen{
		g:          g,
		customers:  s.customers(),
		parts:      s.parts(),
		suppliers:  s.suppliers(),
		clerks:     s.clerks(),
		cust:       newStream(seedOCkey, 1),
		date:       newStream(seedODate, 1),
		prio:       newStream(seedOPrio, 1),
		clerk:      newStream(seedOClrk, 1),
		cmt:        newStream(seedOCmnt, 2),
		lines:      newStream(seedOLcnt, 1),
		qty:        newStream(seedLQty, linesMax),
		discount:   newStream(seedLDcnt, linesMax),
		tax:        newStream(seedLTax, linesMax),
		instruct:   newStream(seedLShip, linesMax),
		mode:       newStream(seedLSmode, linesMax),
		lcmt:       newStream(seedLCmnt, 2*linesMax),
		part:       newStream(seedLPkey, linesMax),
		supp:       newStream(seedLSkey, linesMax),
		shipDays:   newStream(seedLSdte, linesMax),
		commitDays: newStream(seedLCdte, linesMax),
		rcpt:       newStream(seedLRdte, linesMax),
		flag:       newStream(seedLRflg, linesMax),
	}
	return og
}

func (og *ordersGen) orderStreams() []*stream {
	return []*stream{&og.cust, &og.date, &og.prio, &og.clerk, &og.cmt, &og.lines}
}

func (og *ordersGen) lineStreams() []*stream {
	return []*stream{&og.qty, &og.discount, &og.tax, &og.instruct, &og.mode, &og.lcmt, &og.part,
		&og.supp, &og.shipDays, &og.commitDays, &og.rcpt, &og.flag}
}

// skipOrders and skipLines move the streams of ORDERS and of LINEITEM
// n orders ahead (dbgen's sd_order and sd_line, which dbgen applies
// separately when it positions the update sets).
func (og *ordersGen) skipOrders(n int64) {
	for _, s := range og.orderStreams() {
		s.skipRows(n)
	}
}

func (og *ordersGen) skipLines(n int64) {
	for _, s := range og.lineStreams() {
		s.skipRows(n)
	}
}

// run generates orders first .. first+count−1 with key slot seq (0 for
// the population, update sets use their own).
func (og *ordersGen) run(first, count, seq int64, emit func(Row) error) error {
	ss := append(og.orderStreams(), og.lineStreams()...)
	for i := first; i < first+count; i++ {
		if err := og.generate(i, seq, emit); err != nil {
			return err
		}
		for _, s := range ss {
			s.endRow()
		}
	}
	return nil
}

// generate makes order i and its line items (clause 4.2.3) and emits them.
func (og *ordersGen) generate(i, seq int64, emit func(Row) error) error {
	o := &og.order
	o.key = sparseKey(i, seq)
	// O_CUSTKEY random [1 .. customers], never a multiple of 3: dbgen steps
	// to a neighbour, alternately up and down.
	c := og.cust.uniform(1, og.customers)
	for delta := int64(1); c%custMortality == 0; delta = -delta {
		c = min(c+delta, og.customers)
	}
	o.cust = c
	o.date = int(og.date.uniform(0, lastOrderDay)) // O_ORDERDATE uniform [STARTDATE .. ENDDATE − 151 days]
	o.priority = priorityDist.words[priorityDist.pick(&og.prio)]
	o.clerk = og.clerk.uniform(1, og.clerks)
	o.comment = og.g.pool.text(&og.cmt, orderCommentAvg)

	n := og.lines.uniform(1, linesMax)
	var total int64
	shipped := int64(0)
	for l := int64(0); l < n; l++ {
		r := &og.line[l]
		r.order = o.key
		r.number = l + 1
		r.qty = og.qty.uniform(1, 50)           // L_QUANTITY random [1 .. 50]
		r.discount = og.discount.uniform(0, 10) // L_DISCOUNT random [0.00 .. 0.10]
		r.tax = og.tax.uniform(0, 8)            // L_TAX random [0.00 .. 0.08]
		r.instruct = instructionDist.words[instructionDist.pick(&og.instruct)]
		r.mode = modeDist.words[modeDist.pick(&og.mode)]
		r.comment = og.g.pool.text(&og.lcmt, lineCommentAvg)
		r.part = og.part.uniform(1, og.parts)
		r.supp = partSupplier(r.part, og.supp.uniform(0, suppliersPerPart-1), og.suppliers)
		r.price = retailPrice(r.part) * r.qty
		// O_TOTALPRICE sums the lines' prices after discount and tax, each
		// step truncated to the cent as dbgen computes it.
		total += (r.price * (100 - r.discount) / 100) * (100 + r.tax) / 100

		r.ship = o.date + int(og.shipDays.uniform(1, shipDaysMax))
		r.commit = o.date + int(og.commitDays.uniform(commitDaysMin, commitDaysMax))
		r.receipt = r.ship + int(og.rcpt.uniform(1, receiptDaysMax))
		// L_RETURNFLAG is R or A if the line was received by CURRENTDATE,
		// else N; L_LINESTATUS is F if it shipped by CURRENTDATE, else O.
		if r.receipt <= currentDay {
			r.returnFlag = returnFlagWords[returnFlagDist.pick(&og.flag)][0]
		} else {
			r.returnFlag = 'N'
		}
		if r.ship <= currentDay {
			r.status = 'F'
			shipped++
		} else {
			r.status = 'O'
		}
	}
	o.total = total
	// O_ORDERSTATUS: F when every line is F, O when every line is O, else P.
	switch shipped {
	case n:
		o.status = 'F'
	case 0:
		o.status = 'O'
	default:
		o.status = 'P'
	}
	// The comments are cut from random places of the 300 MiB text pool:
	// each copy would wait for memory on its own. Reading one byte of each
	// first lets the processor fetch them all at once.
	touch := o.comment[0] + o.comment[len(o.comment)-1]
	for l := int64(0); l < n; l++ {
		c := og.line[l].comment
		touch += c[0] + c[len(c)-1]
	}
	og.touched += touch
	if err := emit(o); err != nil {
		return err
	}
	for l := int64(0); l < n; l++ {
		if err := emit(&og.line[l]); err != nil {
			return err
		}
	}
	return nil
}
