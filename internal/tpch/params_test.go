package tpch

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestValidationParams(t *testing.T) {
	sf01, _ := ParseScale("0.1")
	p, err := ValidationParams(11, sf01)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"GERMANY", "0.0010000000"}; !slices.Equal(p.Values, want) {
		t.Errorf("Q11 at SF 0.1: %q, want %q (FRACTION = 0.0001/SF)", p.Values, want)
	}
	for q := 1; q <= Queries; q++ {
		p, err := ValidationParams(q, sf01)
		if err != nil {
			t.Fatal(err)
		}
		if q == 18 {
			continue // its validation value, 300 (2.4.18.4), lies below qgen's range
		}
		if err := checkDomain(p); err != nil {
			t.Errorf("validation parameters of Q%d %q: %v", q, p.Values, err)
		}
	}
	if _, err := ValidationParams(23, sf01); err == nil {
		t.Error("ValidationParams(23) has no error")
	}
}

// TestQGenDomains draws each query's parameters from many seeds and
// checks each value against its domain in clause 2.4.N.3.
func TestQGenDomains(t *testing.T) {
	s, _ := ParseScale("1")
	seen := map[string]bool{}
	for seed := int64(1); seed < 2000000000; seed += 7919 * 1237 {
		g, err := NewQGen(seed, s)
		if err != nil {
			t.Fatal(err)
		}
		for q := 1; q <= Queries; q++ {
			p, err := g.Params(q)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkDomain(p); err != nil {
				t.Fatalf("seed %d: Q%d %q: %v", seed, q, p.Values, err)
			}
			seen[strconv.Itoa(q)+"/"+strings.Join(p.Values, ",")] = true
		}
	}
	if len(seen) < Queries*50 {
		t.Errorf("only %d distinct parameter sets from the seeds", len(seen))
	}
}

func TestQGenSeed(t *testing.T) {
	s, _ := ParseScale("1")
	for _, seed := range []int64{0, -1, rngM} {
		if _, err := NewQGen(seed, s); err == nil {
			t.Errorf("NewQGen(%d) has no error", seed)
		}
	}
	// Each query draws from its own stream: the order of the draws does
	// not matter, the seed does.
	a, _ := NewQGen(20240101, s)
	b, _ := NewQGen(20240101, s)
	c, _ := NewQGen(20240102, s)
	var forward, backward, other [Queries + 1][]string
	for q := 1; q <= Queries; q++ {
		pa, _ := a.Params(q)
		pb, _ := b.Params(Queries + 1 - q)
		pc, _ := c.Params(q)
		forward[q], backward[Queries+1-q], other[q] = pa.Values, pb.Values, pc.Values
	}
	same := 0
	for q := 1; q <= Queries; q++ {
		if !slices.Equal(forward[q], backward[q]) {
			t.Errorf("Q%d: %q drawn first, %q drawn last", q, forward[q], backward[q])
		}
		if slices.Equal(forward[q], other[q]) {
			same++
		}
	}
	if same > Queries/2 {
		t.Errorf("seeds 20240101 and 20240102 agree on %d of 22 queries", same)
	}
}

// checkDomain checks parameters against the domains of clause 2.4.N.3.
func checkDomain(p Params) error {
	v := p.Values
	want := map[int]int{1: 1, 2: 3, 3: 2, 4: 1, 5: 2, 6: 3, 7: 2, 8: 3, 9: 1, 10: 1, 11: 2, 12: 3, 13: 2,
		14: 1, 15: 1, 16: 10, 17: 2, 18: 1, 19: 6, 20: 3, 21: 1, 22: 7}[p.Query]
	if len(v) != want {
		return errorf("%d values, want %d", len(v), want)
	}
	in := func(s string, lo, hi int) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return errorf("%q not in [%d, %d]", s, lo, hi)
		}
		return nil
	}
	date := func(s, lo, hi string, firstOfMonth bool) error {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil || s < lo || s > hi || (firstOfMonth && d.Day() != 1) {
			return errorf("date %q not in [%s, %s]", s, lo, hi)
		}
		return nil
	}
	oneOf := func(s string, list []string) error {
		if !slices.Contains(list, s) {
			return errorf("%q is not one of %d values", s, len(list))
		}
		return nil
	}
	brand := func(s string) error {
		if len(s) != 8 || !strings.HasPrefix(s, "Brand#") || s[6] < '1' || s[6] > '5' || s[7] < '1' || s[7] > '5' {
			return errorf("brand %q", s)
		}
		return nil
	}
	year := func(s string) error {
		return oneOf(s, []string{"1993-01-01", "1994-01-01", "1995-01-01", "1996-01-01", "1997-01-01"})
	}
	distinct := func(vs []string) error {
		if len(slices.Compact(slices.Sorted(slices.Values(vs)))) != len(vs) {
			return errorf("values %q not distinct", vs)
		}
		return nil
	}
	nationNames := nationDist.words
	switch p.Query {
	case 1:
		return in(v[0], 60, 120)
	case 2:
		return first(in(v[0], 1, 50), oneOf(v[1], typeSyllable3), oneOf(v[2], regionWords))
	case 3:
		return first(oneOf(v[0], segmentWords), date(v[1], "1995-03-01", "1995-03-31", false))
	case 4, 15:
		return date(v[0], "1993-01-01", "1997-10-01", true)
	case 5:
		return first(oneOf(v[0], regionWords), year(v[1]))
	case 6:
		return first(year(v[0]), oneOf(v[1], []string{"0.02", "0.03", "0.04", "0.05", "0.06", "0.07", "0.08", "0.09"}), in(v[2], 24, 25))
	case 7:
		return first(oneOf(v[0], nationNames), oneOf(v[1], nationNames), distinct(v))
	case 8:
		i := slices.Index(nationNames, v[0])
		if i < 0 || regionWords[nations[i].region] != v[1] {
			return errorf("nation %q is not in region %q", v[0], v[1])
		}
		return oneOf(v[2], typeDist.words)
	case 9:
		return oneOf(v[0], colorWords)
	case 10:
		return date(v[0], "1993-02-01", "1995-01-01", true)
	case 11:
		return oneOf(v[0], nationNames)
	case 12:
		return first(oneOf(v[0], modeWords), oneOf(v[1], modeWords), distinct(v[:2]), year(v[2]))
	case 13:
		return first(oneOf(v[0], []string{"special", "pending", "unusual", "express"}),
			oneOf(v[1], []string{"packages", "requests", "accounts", "deposits"}))
	case 14:
		return date(v[0], "1993-01-01", "1997-12-01", true)
	case 16:
		prefixes := product(typeSyllable1, typeSyllable2)
		err := first(brand(v[0]), oneOf(v[1], prefixes), distinct(v[2:]))
		for _, s := range v[2:] {
			err = first(err, in(s, 1, 50))
		}
		return err
	case 17:
		return first(brand(v[0]), oneOf(v[1], containerDist.words))
	case 18:
		return in(v[0], 312, 315)
	case 19:
		return first(brand(v[0]), brand(v[1]), brand(v[2]), in(v[3], 1, 10), in(v[4], 10, 20), in(v[5], 20, 30))
	case 20:
		return first(oneOf(v[0], colorWords), year(v[1]), oneOf(v[2], nationNames))
	case 21:
		return oneOf(v[0], nationNames)
	case 22:
		err := distinct(v)
		for _, s := range v {
			err = first(err, in(s, 10, 34))
		}
		return err
	}
	return errorf("no such query")
}
