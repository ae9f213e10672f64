package tpch

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Base cardinalities at SF 1 (clause 4.2.5): dbgen's tdefs[].base.
const (
	basePart     = 200000
	baseSupplier = 10000
	baseCustomer = 150000
	baseOrders   = 1500000 // customers × ORDERS_PER_CUST (10)
	// suppliersPerPart is the number of PARTSUPP rows of each part.
	suppliersPerPart = 4
	// maxScaleMilli: from SF 30,000 dbgen draws O_CUSTKEY and L_PARTKEY
	// from a 64-bit generator, which this package does not reproduce.
	maxScaleMilli = 30000*1000 - 1
)

// Scale is a scale factor as dbgen takes it (dbgen -s; clause 4.1.3.1
// lists those of published results): at least 0.01, in thousandths below
// 1 and in whole numbers from 1 up.
// Below SF 1 dbgen scales each base cardinality by the thousandths
// (rounding down, at least one row) and keeps the per-SF constants of SF 1
// (O_CLERK is drawn from 1,000 clerks); from SF 1 up it multiplies.
type Scale struct {
	milli int64 // the scale factor in thousandths
}

// ParseScale reads a scale factor written as a decimal number ("0.01",
// "1", "10").
func ParseScale(s string) (Scale, error) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" {
		whole = "0"
	}
	if len(frac) > 3 || strings.ContainsAny(whole+frac, "+-") {
		return Scale{}, fmt.Errorf("scale factor %q: want a number such as 0.01, 0.1, 1 or 10 (at most three decimals)", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return Scale{}, fmt.Errorf("scale factor %q: want a number such as 0.01, 0.1, 1 or 10", s)
	}
	f := int64(0)
	if frac != "" {
		f, err = strconv.ParseInt((frac + "00")[:3], 10, 64)
		if err != nil {
			return Scale{}, fmt.Errorf("scale factor %q: want a number such as 0.01, 0.1, 1 or 10", s)
		}
	}
	if w > maxScaleMilli/1000 {
		return Scale{}, fmt.Errorf("scale factor %s: at most %d (dbgen changes its generator from SF 30000)", s, maxScaleMilli/1000)
	}
	return newScale(w*1000 + f)
}

// ScaleOf returns the scale factor sf, rounded to thousandths.
func ScaleOf(sf float64) (Scale, error) {
	if math.IsNaN(sf) || sf > maxScaleMilli/1000 {
		return Scale{}, fmt.Errorf("scale factor %g: at most %d", sf, maxScaleMilli/1000)
	}
	return newScale(int64(math.Round(sf * 1000)))
}

func newScale(milli int64) (Scale, error) {
	switch {
	case milli < 10:
		return Scale{}, fmt.Errorf("scale factor %s: at least 0.01", formatMilli(milli))
	case milli > maxScaleMilli:
		return Scale{}, fmt.Errorf("scale factor %s: at most %d (dbgen changes its generator from SF 30000)", formatMilli(milli), maxScaleMilli/1000)
	case milli >= 1000 && milli%1000 != 0:
		// dbgen truncates a fractional scale factor above 1 (scale = (long)sf).
		return Scale{}, fmt.Errorf("scale factor %s: from 1 up, dbgen takes whole numbers only", formatMilli(milli))
	}
	return Scale{milli: milli}, nil
}

func formatMilli(m int64) string {
	s := strconv.FormatFloat(float64(m)/1000, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// String is the scale factor as a decimal number ("0.01", "1").
func (s Scale) String() string { return formatMilli(s.milli) }

// MarshalText writes the scale factor as String does.
func (s Scale) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a scale factor as ParseScale does.
func (s *Scale) UnmarshalText(b []byte) error {
	v, err := ParseScale(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Float is the scale factor as a number (qgen's flt_scale, Q11's fraction).
func (s Scale) Float() float64 { return float64(s.milli) / 1000 }

// IsZero reports whether s is the zero value, not a scale factor.
func (s Scale) IsZero() bool { return s.milli == 0 }

// factor is dbgen's integer scale: 1 below SF 1.
func (s Scale) factor() int64 {
	if s.milli < 1000 {
		return 1
	}
	return s.milli / 1000
}

// base is dbgen's tdefs[].base after -s: scaled by the thousandths below SF 1.
func (s Scale) base(b int64) int64 {
	if s.milli >= 1000 {
		return b
	}
	n := s.milli * b / 1000
	return max(n, 1)
}

// parts, suppliers, customers and orders are the cardinalities of PART,
// SUPPLIER, CUSTOMER and ORDERS (clause 4.2.5).
func (s Scale) parts() int64     { return s.base(basePart) * s.factor() }
func (s Scale) suppliers() int64 { return s.base(baseSupplier) * s.factor() }
func (s Scale) customers() int64 { return s.base(baseCustomer) * s.factor() }
func (s Scale) orders() int64    { return s.base(baseOrders) * s.factor() }

// Rows returns the cardinality of table t at this scale (clause 4.2.5).
// It is exact for every table but LINEITEM, whose rows are drawn (one to
// seven per order); for LINEITEM it returns four per order, the mean, and
// exact is false.
func (s Scale) Rows(t Table) (n int64, exact bool) {
	switch t {
	case Part:
		return s.parts(), true
	case PartSupp:
		return s.parts() * suppliersPerPart, true
	case Supplier:
		return s.suppliers(), true
	case Customer:
		return s.customers(), true
	case Orders:
		return s.orders(), true
	case LineItem:
		return s.orders() * 4, false
	case Nation:
		return int64(len(nations)), true
	case Region:
		return int64(len(regionWords)), true
	}
	return 0, false
}

// clerks is the number of clerks O_CLERK is drawn from: SF × 1,000, and
// 1,000 below SF 1 (dbgen's MAX(scale × O_CLRK_SCL, O_CLRK_SCL)).
func (s Scale) clerks() int64 { return max(s.factor()*1000, 1000) }
