package tpch

// SUPPLIER comments (clause 4.2.3): text of 63 characters on average;
// S_COMMENT of 10 suppliers in 10,000 (SF·5 each) hides "Customer" ...
// "Complaints" or "Customer" ... "Recommends" at a random place.
const (
	supplierCommentAvg = 63
	bbbPer10000        = 10 // dbgen's S_CMNT_BBB
	bbbComplaintsPct   = 50 // dbgen's BBB_DEADBEATS
	bbbBase            = "Customer "
	bbbComplaints      = "Complaints"
	bbbRecommends      = "Recommends"
	bbbLen             = 19 // "Customer " + 10 letters
)

// supplierRow is one SUPPLIER row.
type supplierRow struct {
	key     int64
	address []byte
	nation  int64
	phone   phone
	acctbal int64  // cents
	comment []byte // a copy: the Better Business Bureau text is written into it
}

func (r *supplierRow) Table() Table { return Supplier }

func (r *supplierRow) AppendTBL(dst []byte) []byte {
	dst = appendInt(dst, r.key)
	dst = append(appendPadded(dst, "Supplier#", r.key, 9), sep)
	dst = appendText(dst, r.address)
	dst = appendInt(dst, r.nation)
	dst = appendText(dst, r.phone[:])
	dst = appendMoney(dst, r.acctbal)
	dst = appendText(dst, r.comment)
	return endLine(dst)
}

func (r *supplierRow) AppendArgs(dst []any) []any {
	return append(dst, r.key, string(appendPadded(nil, "Supplier#", r.key, 9)), string(r.address),
		r.nation, string(r.phone[:]), money(r.acctbal), string(r.comment))
}

// supplierGen generates SUPPLIER rows (dbgen's mk_supp).
type supplierGen struct {
	g                                    *Generator
	address, nation, phone, acctbal, cmt stream
	bbbCmnt, bbbJunk, bbbOff, bbbType    stream
	row                                  supplierRow
}

func newSupplierGen(g *Generator) *supplierGen {
	sg := &supplierGen{
		g:       g,
		address: newStream(seedSAddr, 9),
		nation:  newStream(seedSNtrg, 1),
		phone:   newStream(seedSPhne, 3),
		acctbal: newStream(seedSAbal, 1),
		cmt:     newStream(seedSCmnt, 2),
		bbbCmnt: newStream(seedBBBCmnt, 1),
		bbbJunk: newStream(seedBBBJunk, 1),
		bbbOff:  newStream(seedBBBOff, 1),
		bbbType: newStream(seedBBBType, 1),
	}
	sg.row.address = make([]byte, 0, 40)
	sg.row.comment = make([]byte, 0, 128)
	return sg
}

func (sg *supplierGen) run(first, count int64, emit func(Row) error) error {
	ss := []*stream{&sg.address, &sg.nation, &sg.phone, &sg.acctbal, &sg.cmt,
		&sg.bbbCmnt, &sg.bbbJunk, &sg.bbbOff, &sg.bbbType}
	for _, s := range ss {
		s.skipRows(first - 1)
	}
	r := &sg.row
	for k := first; k < first+count; k++ {
		r.key = k
		r.address = appendRandomString(r.address[:0], &sg.address, addrLo, addrHi)
		r.nation = sg.nation.uniform(0, int64(len(nations))-1)
		r.phone.generate(&sg.phone, r.nation)
		r.acctbal = sg.acctbal.uniform(-99999, 999999) // S_ACCTBAL random [-999.99 .. 9,999.99]
		r.comment = append(r.comment[:0], sg.g.pool.text(&sg.cmt, supplierCommentAvg)...)
		// dbgen draws these four for every supplier ("to simplify seedless
		// parallel load") and uses them for one in a thousand.
		clen := int64(len(r.comment))
		bad := sg.bbbCmnt.uniform(1, 10000)
		kind := sg.bbbType.uniform(0, 100)
		noise := sg.bbbJunk.uniform(0, clen-bbbLen)
		off := sg.bbbOff.uniform(0, clen-(bbbLen+noise))
		if bad <= bbbPer10000 {
			copy(r.comment[off:], bbbBase)
			word := bbbRecommends
			if kind < bbbComplaintsPct {
				word = bbbComplaints
			}
			copy(r.comment[off+int64(len(bbbBase))+noise:], word)
		}
		if err := emit(r); err != nil {
			return err
		}
		for _, s := range ss {
			s.endRow()
		}
	}
	return nil
}
