package tpch

import (
	"fmt"
	"strconv"
)

// Queries is the number of queries of a query stream (clause 2.4).
const Queries = 22

// Params are the substitution parameters of one query, in the order of
// its parameters (:1, :2, ... of clause 2.4.N.3), written as qgen writes
// them into the query text.
type Params struct {
	Query  int
	Values []string
}

// ValidationParams returns the parameters of query q that clause 2.4.N.4
// gives for query validation (qgen -d); Q11's fraction is 0.0001/SF as
// clause 2.4.11.3 sets it.
func ValidationParams(q int, s Scale) (Params, error) {
	if q < 1 || q > Queries {
		return Params{}, fmt.Errorf("query %d: want 1..%d", q, Queries)
	}
	v := append([]string(nil), validationValues[q-1]...)
	if q == 11 {
		v[1] = q11Fraction(s)
	}
	return Params{Query: q, Values: v}, nil
}

// validationValues are the validation parameters of clause 2.4.N.4
// (qgen's defaults).
var validationValues = [Queries][]string{
	{"90"},
	{"15", "BRASS", "EUROPE"},
	{"BUILDING", "1995-03-15"},
	{"1993-07-01"},
	{"ASIA", "1994-01-01"},
	{"1994-01-01", "0.06", "24"},
	{"FRANCE", "GERMANY"},
	{"BRAZIL", "AMERICA", "ECONOMY ANODIZED STEEL"},
	{"green"},
	{"1993-10-01"},
	{"GERMANY", "0.0001"},
	{"MAIL", "SHIP", "1994-01-01"},
	{"special", "requests"},
	{"1995-09-01"},
	{"1996-01-01"},
	{"Brand#45", "MEDIUM POLISHED", "49", "14", "23", "45", "19", "3", "36", "9"},
	{"Brand#23", "MED BOX"},
	{"300"},
	{"Brand#12", "Brand#23", "Brand#34", "1", "10", "20"},
	{"forest", "1994-01-01", "CANADA"},
	{"SAUDI ARABIA"},
	{"13", "31", "23", "29", "30", "18", "17"},
}

// q11Fraction is Q11's FRACTION, 0.0001/SF with ten decimals (qgen's
// "%11.10f").
func q11Fraction(s Scale) string { return strconv.FormatFloat(0.0001/s.Float(), 'f', 10, 64) }

// QGen draws substitution parameters as qgen does (clause 2.1.3.3: qgen
// -r seed): the seed starts a chain of the population's generator whose
// first 22 values seed one stream per query, and each query draws its
// parameters from its own stream (clause 2.4.N.3 gives each parameter's
// domain). Drawing the parameters of the same query twice gives the next
// values of its stream, as a second qgen run in the same process would.
type QGen struct {
	scale   Scale
	seed    int64
	streams [Queries + 1]stream
}

// NewQGen returns a parameter generator seeded as qgen -r seed seeds it.
// seed must be in [1, 2³¹−2]; qgen's own default is the time of day.
func NewQGen(seed int64, s Scale) (*QGen, error) {
	if seed < 1 || seed >= rngM {
		return nil, fmt.Errorf("qgen seed %d: want 1..%d", seed, rngM-1)
	}
	q := &QGen{scale: s, seed: seed}
	x := seed
	for i := 1; i <= Queries; i++ {
		x = mulMod(x, rngA)
		q.streams[i] = stream{seed: x}
	}
	return q, nil
}

// Seed is the seed the generator started from.
func (g *QGen) Seed() int64 { return g.seed }

// Params draws the parameters of query q (clause 2.4.q.3; qgen's varsub).
func (g *QGen) Params(q int) (Params, error) {
	if q < 1 || q > Queries {
		return Params{}, fmt.Errorf("query %d: want 1..%d", q, Queries)
	}
	s := &g.streams[q]
	var v []string
	word := func(d *dist) string { return d.words[d.pick(s)] }
	num := func(lo, hi int64) string { return strconv.FormatInt(s.uniform(lo, hi), 10) }
	year := func() string { return fmt.Sprintf("19%02d-01-01", s.uniform(93, 97)) }
	// month draws a month number m from lo..hi, counted from January 1993.
	month := func(lo, hi int64) string {
		m := s.uniform(lo, hi)
		return fmt.Sprintf("19%02d-%02d-01", 93+m/12, m%12+1)
	}
	brand := func() string { return fmt.Sprintf("Brand#%d%d", s.uniform(1, 5), s.uniform(1, 5)) }
	switch q {
	case 1:
		v = []string{num(60, 120)} // DELTA [60 .. 120]
	case 2:
		size := num(1, 50)
		typ := word(typeDist)
		v = []string{size, typ[lastSpace(typ)+1:], word(regionDist)} // SIZE, TYPE (a syllable 3), REGION
	case 3:
		seg := word(segmentDist)
		v = []string{seg, isoDate(int(s.uniform(0, 30)) + marchFirst1995)} // SEGMENT, DATE in [1995-03-01 .. 1995-03-31]
	case 4:
		v = []string{month(0, 57)} // DATE: first of a month, 1993-01 .. 1997-10
	case 5:
		r := word(regionDist)
		v = []string{r, year()}
	case 6:
		d := year()
		discount := fmt.Sprintf("0.%02d", s.uniform(2, 9))
		v = []string{d, discount, num(24, 25)}
	case 7:
		i := nationDist.pick(s)
		j := nationDist.pick(s)
		for j == i {
			j = nationDist.pick(s)
		}
		v = []string{nationDist.words[i], nationDist.words[j]}
	case 8:
		i := nationDist.pick(s)
		v = []string{nations[i].name, regionWords[nations[i].region], word(typeDist)}
	case 9:
		v = []string{word(colorDist)}
	case 10:
		v = []string{month(1, 24)} // DATE: first of a month, 1993-02 .. 1995-01
	case 11:
		v = []string{word(nationDist), q11Fraction(g.scale)}
	case 12:
		i := modeDist.pick(s)
		j := modeDist.pick(s)
		for j == i {
			j = modeDist.pick(s)
		}
		v = []string{modeDist.words[i], modeDist.words[j], year()}
	case 13:
		w1 := word(q13Dist1)
		v = []string{w1, word(q13Dist2)}
	case 14:
		v = []string{month(0, 59)} // DATE: first of a month, 1993-01 .. 1997-12
	case 15:
		v = []string{month(0, 57)}
	case 16:
		b := brand()
		typ := word(typeDist)
		v = []string{b, typ[:lastSpace(typ)]} // TYPE: syllables 1 and 2
		for _, size := range permutation(s, 50)[:8] {
			v = append(v, strconv.Itoa(size+1)) // eight distinct SIZEs in [1 .. 50]
		}
	case 17:
		b := brand()
		v = []string{b, word(containerDist)}
	case 18:
		v = []string{num(312, 315)}
	case 19:
		v = []string{brand(), brand(), brand(), num(1, 10), num(10, 20), num(20, 30)}
	case 20:
		c := word(colorDist)
		d := year()
		v = []string{c, d, word(nationDist)}
	case 21:
		v = []string{word(nationDist)}
	case 22:
		for _, code := range permutation(s, 25)[:7] {
			v = append(v, strconv.Itoa(10+code)) // seven distinct country codes (I1 .. I7)
		}
	}
	return Params{Query: q, Values: v}, nil
}

// marchFirst1995 is 1995-03-01 as a day number (qgen's asc_date + 1155).
const marchFirst1995 = 1155

func lastSpace(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' {
			return i
		}
	}
	return -1
}

// permutation returns a permutation of 0..n−1 drawn as qgen's permute
// does: for each position i in turn, swap it with a position drawn from
// [i, n−1].
func permutation(s *stream, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := range p {
		j := s.uniform(int64(i), int64(n-1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}
