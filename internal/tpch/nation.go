package tpch

// N_COMMENT and R_COMMENT: text of 72 characters on average (4.2.3).
const codeCommentAvg = 72

// nationRow is one NATION row.
type nationRow struct {
	key     int64
	comment []byte
}

func (r *nationRow) Table() Table { return Nation }

func (r *nationRow) AppendTBL(dst []byte) []byte {
	n := &nations[r.key]
	dst = appendInt(dst, r.key)
	dst = appendString(dst, n.name)
	dst = appendInt(dst, int64(n.region))
	dst = appendText(dst, r.comment)
	return endLine(dst)
}

func (r *nationRow) AppendArgs(dst []any) []any {
	n := &nations[r.key]
	return append(dst, r.key, n.name, int64(n.region), string(r.comment))
}

// regionRow is one REGION row.
type regionRow struct {
	key     int64
	comment []byte
}

func (r *regionRow) Table() Table { return Region }

func (r *regionRow) AppendTBL(dst []byte) []byte {
	dst = appendInt(dst, r.key)
	dst = appendString(dst, regionWords[r.key])
	dst = appendText(dst, r.comment)
	return endLine(dst)
}

func (r *regionRow) AppendArgs(dst []any) []any {
	return append(dst, r.key, regionWords[r.key], string(r.comment))
}

// codeGen generates NATION or REGION rows (dbgen's mk_nation, mk_region):
// row k has key k−1 and a comment from its table's stream.
type codeGen struct {
	g   *Generator
	cmt stream
	row func(key int64, comment []byte) Row
}

func newNationGen(g *Generator) *codeGen {
	var r nationRow
	return &codeGen{g: g, cmt: newStream(seedNCmnt, 2), row: func(key int64, c []byte) Row {
		r.key, r.comment = key, c
		return &r
	}}
}

func newRegionGen(g *Generator) *codeGen {
	var r regionRow
	return &codeGen{g: g, cmt: newStream(seedRCmnt, 2), row: func(key int64, c []byte) Row {
		r.key, r.comment = key, c
		return &r
	}}
}

func (cg *codeGen) run(first, count int64, emit func(Row) error) error {
	cg.cmt.skipRows(first - 1)
	for k := first; k < first+count; k++ {
		if err := emit(cg.row(k-1, cg.g.pool.text(&cg.cmt, codeCommentAvg))); err != nil {
			return err
		}
		cg.cmt.endRow()
	}
	return nil
}
