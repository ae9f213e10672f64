package tpch

import (
	"fmt"
)

// Generator produces the population of one scale factor (clause 4.2.3)
// exactly as dbgen does. It is safe for concurrent use: each Generate call
// draws from streams of its own, so chunks may be generated in parallel.
type Generator struct {
	scale Scale
	pool  *textPool
}

// NewGenerator returns a generator for scale s. The first generator of a
// process builds dbgen's text pool (300 MiB, about a second of one core);
// later ones share it while any generator is alive.
func NewGenerator(s Scale) *Generator {
	return &Generator{scale: s, pool: sharedTextPool()}
}

// Scale is the generator's scale factor.
func (g *Generator) Scale() Scale { return g.scale }

// Chunk is the part of one table that dbgen -C Children -S Step writes.
// Its rows equal the same rows of the whole table's generation.
type Chunk struct {
	// Table is Part (whose chunk also emits the four PARTSUPP rows of each
	// part), Supplier, Customer, Orders (whose chunk also emits the line
	// items of each order), Nation or Region.
	Table          Table
	Step, Children int
	// First is the number, from 1, of the chunk's first row of Table, and
	// Count its number of rows of Table.
	First, Count int64
}

func (c Chunk) String() string {
	return fmt.Sprintf("%s chunk %d of %d (rows %d..%d)", c.Table, c.Step, c.Children, c.First, c.First+c.Count-1)
}

// GeneratedTables are the tables a Chunk names: PARTSUPP comes with PART
// and LINEITEM with ORDERS, as dbgen generates them.
var GeneratedTables = []Table{Part, Supplier, Customer, Orders, Nation, Region}

// Chunks splits table t into children chunks as dbgen -C does: each of
// rows/children rows, the last one also taking the remainder. NATION and
// REGION are never split, as in dbgen: they come as one chunk.
func (s Scale) Chunks(t Table, children int) ([]Chunk, error) {
	if children < 1 {
		return nil, fmt.Errorf("split %s into %d chunks: want at least one", t, children)
	}
	switch t {
	case PartSupp, LineItem:
		parent := map[Table]Table{PartSupp: Part, LineItem: Orders}[t]
		return nil, fmt.Errorf("%s is generated with %s: split %s", t, parent, parent)
	case Nation, Region:
		n, _ := s.Rows(t)
		return []Chunk{{Table: t, Step: 1, Children: 1, First: 1, Count: n}}, nil
	case Part, Supplier, Customer, Orders:
	default:
		return nil, fmt.Errorf("split table %d: no such table", t)
	}
	rows, _ := s.Rows(t)
	if int64(children) > rows {
		return nil, fmt.Errorf("split %s (%d rows) into %d chunks: more chunks than rows", t, rows, children)
	}
	per := rows / int64(children)
	out := make([]Chunk, children)
	for k := range out {
		c := Chunk{Table: t, Step: k + 1, Children: children, First: int64(k)*per + 1, Count: per}
		if k == children-1 {
			c.Count += rows % int64(children)
		}
		out[k] = c
	}
	return out, nil
}

// Generate emits every row of chunk c in dbgen's order: for a Part chunk
// each PART row followed by its four PARTSUPP rows, for an Orders chunk
// each ORDERS row followed by its LINEITEM rows. It stops at the first
// error emit returns and returns it.
func (g *Generator) Generate(c Chunk, emit func(Row) error) error {
	rows, _ := g.scale.Rows(c.Table)
	if c.First < 1 || c.Count < 0 || c.First+c.Count-1 > rows {
		return fmt.Errorf("generate %s: rows %d..%d outside the table's 1..%d", c.Table, c.First, c.First+c.Count-1, rows)
	}
	switch c.Table {
	case Part:
		return newPartGen(g).run(c.First, c.Count, emit)
	case Supplier:
		return newSupplierGen(g).run(c.First, c.Count, emit)
	case Customer:
		return newCustomerGen(g).run(c.First, c.Count, emit)
	case Orders:
		og := newOrdersGen(g)
		og.skipOrders(c.First - 1)
		og.skipLines(c.First - 1)
		return og.run(c.First, c.Count, 0, emit)
	case Nation:
		return newNationGen(g).run(c.First, c.Count, emit)
	case Region:
		return newRegionGen(g).run(c.First, c.Count, emit)
	}
	return fmt.Errorf("generate %s: generated with its parent table", c.Table)
}

// alphaNum are the characters of dbgen's random strings (a_rnd).
const alphaNum = "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,"

// appendRandomString appends a random string of [lo, hi] characters from
// alphaNum, drawn from s as dbgen's a_rnd draws it (clause 4.2.2.7: a
// v-string): the length, then one draw per five characters.
func appendRandomString(dst []byte, s *stream, lo, hi int64) []byte {
	n := s.uniform(lo, hi)
	var bits int64
	for i := int64(0); i < n; i++ {
		if i%5 == 0 {
			bits = s.alnumBits()
		}
		dst = append(dst, alphaNum[bits&63])
		bits >>= 6
	}
	return dst
}

// addrLo and addrHi bound the lengths of S_ADDRESS and C_ADDRESS: a
// v-string of 25 characters on average (4.2.3).
var addrLo, addrHi = textBounds(25)

// phone is a phone number (clause 4.2.2.9): the country code 10 +
// nation key, then three, three and four random digits.
type phone [15]byte

func (p *phone) generate(s *stream, nation int64) {
	area := s.uniform(100, 999)
	exchange := s.uniform(100, 999)
	number := s.uniform(1000, 9999)
	cc := 10 + nation%90
	p[0], p[1], p[2] = byte('0'+cc/10), byte('0'+cc%10), '-'
	p[3], p[4], p[5], p[6] = byte('0'+area/100), byte('0'+area/10%10), byte('0'+area%10), '-'
	p[7], p[8], p[9], p[10] = byte('0'+exchange/100), byte('0'+exchange/10%10), byte('0'+exchange%10), '-'
	p[11], p[12], p[13], p[14] = byte('0'+number/1000), byte('0'+number/100%10), byte('0'+number/10%10), byte('0'+number%10)
}

// retailPrice is P_RETAILPRICE of part p in cents (4.2.3; dbgen's rpb_routine).
func retailPrice(p int64) int64 {
	return 90000 + (p/10)%20001 + (p%1000)*100
}

// partSupplier is the supplier of part p's i-th PARTSUPP row, i in 0..3
// (4.2.3: PS_SUPPKEY; dbgen's PART_SUPP_BRIDGE). S is the number of suppliers.
func partSupplier(p, i, suppliers int64) int64 {
	return (p+i*(suppliers/suppliersPerPart+(p-1)/suppliers))%suppliers + 1
}

// sparseKey is the orders key of order number i (4.2.3: O_ORDERKEY is
// sparse, eight keys used in each group of 32; dbgen's mk_sparse): the
// base population uses seq 0, update set u the slot 1 + u/1000.
func sparseKey(i, seq int64) int64 {
	return ((i>>3)<<2|seq)<<3 | i&7
}
