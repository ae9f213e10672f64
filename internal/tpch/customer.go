package tpch

const customerCommentAvg = 73 // C_COMMENT: text of 73 characters on average (4.2.3)

// customerRow is one CUSTOMER row.
type customerRow struct {
	key     int64
	address []byte
	nation  int64
	phone   phone
	acctbal int64 // cents
	segment string
	comment []byte
}

func (r *customerRow) Table() Table { return Customer }

func (r *customerRow) AppendTBL(dst []byte) []byte {
	dst = appendInt(dst, r.key)
	dst = append(appendPadded(dst, "Customer#", r.key, 9), sep)
	dst = appendText(dst, r.address)
	dst = appendInt(dst, r.nation)
	dst = appendText(dst, r.phone[:])
	dst = appendMoney(dst, r.acctbal)
	dst = appendString(dst, r.segment)
	dst = appendText(dst, r.comment)
	return endLine(dst)
}

func (r *customerRow) AppendArgs(dst []any) []any {
	return append(dst, r.key, string(appendPadded(nil, "Customer#", r.key, 9)), string(r.address),
		r.nation, string(r.phone[:]), money(r.acctbal), r.segment, string(r.comment))
}

// customerGen generates CUSTOMER rows (dbgen's mk_cust).
type customerGen struct {
	g                                             *Generator
	address, nation, phone, acctbal, segment, cmt stream
	row                                           customerRow
}

func newCustomerGen(g *Generator) *customerGen {
	cg := &customerGen{
		g:       g,
		address: newStream(seedCAddr, 9),
		nation:  newStream(seedCNtrg, 1),
		phone:   newStream(seedCPhne, 3),
		acctbal: newStream(seedCAbal, 1),
		segment: newStream(seedCMseg, 1),
		cmt:     newStream(seedCCmnt, 2),
	}
	cg.row.address = make([]byte, 0, 40)
	return cg
}

func (cg *customerGen) run(first, count int64, emit func(Row) error) error {
	ss := []*stream{&cg.address, &cg.nation, &cg.phone, &cg.acctbal, &cg.segment, &cg.cmt}
	for _, s := range ss {
		s.skipRows(first - 1)
	}
	r := &cg.row
	for k := first; k < first+count; k++ {
		r.key = k
		r.address = appendRandomString(r.address[:0], &cg.address, addrLo, addrHi)
		r.nation = cg.nation.uniform(0, int64(len(nations))-1)
		r.phone.generate(&cg.phone, r.nation)
		r.acctbal = cg.acctbal.uniform(-99999, 999999) // C_ACCTBAL random [-999.99 .. 9,999.99]
		r.segment = segmentDist.words[segmentDist.pick(&cg.segment)]
		r.comment = cg.g.pool.text(&cg.cmt, customerCommentAvg)
		if err := emit(r); err != nil {
			return err
		}
		for _, s := range ss {
			s.endRow()
		}
	}
	return nil
}
