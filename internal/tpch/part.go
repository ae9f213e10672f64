package tpch

// Comment lengths of PART and PARTSUPP (clause 4.2.3: text of 14 and 124
// characters on average).
const (
	partCommentAvg     = 14
	partSuppCommentAvg = 124
	partNameColors     = 5 // P_NAME: five distinct colors
)

// partRow is one PART row.
type partRow struct {
	key       int64
	name      []byte
	mfgr      int64 // Manufacturer#M, M in [1 .. 5]
	brand     int64 // Brand#MN, N in [1 .. 5]
	typ       string
	size      int64
	container string
	price     int64 // cents
	comment   []byte
}

func (r *partRow) Table() Table { return Part }

func (r *partRow) AppendTBL(dst []byte) []byte {
	dst = appendInt(dst, r.key)
	dst = appendText(dst, r.name)
	dst = append(dst, "Manufacturer#"...)
	dst = appendInt(dst, r.mfgr)
	dst = append(dst, "Brand#"...)
	dst = append(dst, byte('0'+r.brand/10), byte('0'+r.brand%10), sep)
	dst = appendString(dst, r.typ)
	dst = appendInt(dst, r.size)
	dst = appendString(dst, r.container)
	dst = appendMoney(dst, r.price)
	dst = appendText(dst, r.comment)
	return endLine(dst)
}

func (r *partRow) AppendArgs(dst []any) []any {
	return append(dst, r.key, string(r.name), "Manufacturer#"+string(rune('0'+r.mfgr)),
		"Brand#"+string([]byte{byte('0' + r.brand/10), byte('0' + r.brand%10)}), r.typ, r.size,
		r.container, money(r.price), string(r.comment))
}

// partSuppRow is one PARTSUPP row.
type partSuppRow struct {
	part, supp int64
	qty        int64
	cost       int64 // cents
	comment    []byte
}

func (r *partSuppRow) Table() Table { return PartSupp }

func (r *partSuppRow) AppendTBL(dst []byte) []byte {
	dst = appendInt(dst, r.part)
	dst = appendInt(dst, r.supp)
	dst = appendInt(dst, r.qty)
	dst = appendMoney(dst, r.cost)
	dst = appendText(dst, r.comment)
	return endLine(dst)
}

func (r *partSuppRow) AppendArgs(dst []any) []any {
	return append(dst, r.part, r.supp, r.qty, money(r.cost), string(r.comment))
}

// partGen generates PART and PARTSUPP rows (dbgen's mk_part).
type partGen struct {
	g                                          *Generator
	suppliers                                  int64
	mfgr, brand, typ, size, container, comment stream
	name                                       stream
	psQty, psCost, psComment                   stream
	row                                        partRow
	ps                                         [suppliersPerPart]partSuppRow
	colors                                     [92]uint8
	touched                                    byte // see part
}

func newPartGen(g *Generator) *partGen {
	pg := &partGen{
		g:         g,
		suppliers: g.scale.suppliers(),
		mfgr:      newStream(seedPMfg, 1),
		brand:     newStream(seedPBrand, 1),
		typ:       newStream(seedPType, 1),
		size:      newStream(seedPSize, 1),
		container: newStream(seedPCntr, 1),
		comment:   newStream(seedPCmnt, 2),
		name:      newStream(seedPName, int64(len(colorWords))),
		psQty:     newStream(seedPSQty, suppliersPerPart),
		psCost:    newStream(seedPSScst, suppliersPerPart),
		psComment: newStream(seedPSCmnt, 2*suppliersPerPart),
	}
	pg.row.name = make([]byte, 0, 64)
	return pg
}

func (pg *partGen) streams() []*stream {
	return []*stream{&pg.mfgr, &pg.brand, &pg.typ, &pg.size, &pg.container, &pg.comment, &pg.name,
		&pg.psQty, &pg.psCost, &pg.psComment}
}

func (pg *partGen) run(first, count int64, emit func(Row) error) error {
	ss := pg.streams()
	for _, s := range ss {
		s.skipRows(first - 1)
	}
	for k := first; k < first+count; k++ {
		if err := pg.part(k, emit); err != nil {
			return err
		}
		for _, s := range ss {
			s.endRow()
		}
	}
	return nil
}

// part generates part k and its suppliers (clause 4.2.3).
func (pg *partGen) part(k int64, emit func(Row) error) error {
	r := &pg.row
	r.key = k
	// P_NAME: five colors, the first five of a permutation of all 92
	// (dbgen's agg_str over permute_dist: one draw per color).
	for i := range pg.colors {
		pg.colors[i] = uint8(i)
	}
	n := int64(len(pg.colors))
	for i := int64(0); i < n; i++ {
		j := pg.name.uniform(i, n-1)
		pg.colors[i], pg.colors[j] = pg.colors[j], pg.colors[i]
	}
	r.name = r.name[:0]
	for i := range partNameColors {
		if i > 0 {
			r.name = append(r.name, ' ')
		}
		r.name = append(r.name, colorWords[pg.colors[i]]...)
	}
	r.mfgr = pg.mfgr.uniform(1, 5)
	r.brand = r.mfgr*10 + pg.brand.uniform(1, 5)
	r.typ = typeDist.words[typeDist.pick(&pg.typ)]
	r.size = pg.size.uniform(1, 50)
	r.container = containerDist.words[containerDist.pick(&pg.container)]
	r.price = retailPrice(k)
	r.comment = pg.g.pool.text(&pg.comment, partCommentAvg)
	for i := range pg.ps {
		ps := &pg.ps[i]
		ps.part = k
		ps.supp = partSupplier(k, int64(i), pg.suppliers)
		ps.qty = pg.psQty.uniform(1, 9999)       // PS_AVAILQTY random [1 .. 9,999]
		ps.cost = pg.psCost.uniform(100, 100000) // PS_SUPPLYCOST random [1.00 .. 1,000.00]
		ps.comment = pg.g.pool.text(&pg.psComment, partSuppCommentAvg)
	}
	// Touch the comments, cut from random places of the text pool, before
	// copying them, so that their memory is fetched at once (see
	// ordersGen.generate).
	touch := r.comment[0] + r.comment[len(r.comment)-1]
	for i := range pg.ps {
		c := pg.ps[i].comment
		touch += c[0] + c[len(c)-1]
	}
	pg.touched += touch
	if err := emit(r); err != nil {
		return err
	}
	for i := range pg.ps {
		if err := emit(&pg.ps[i]); err != nil {
			return err
		}
	}
	return nil
}
