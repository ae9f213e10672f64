package postgres

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TPC-C's money columns are NUMERIC, which the client-side transactions
// read into and write from float64 (tpcc.Querier). pgx converts between
// the two through math/big and decimal strings, a few allocations per
// value, and a New-Order moves thirty of them. numericCodec does the common
// case (finite binary values of at most 16 significant digits) with
// integer arithmetic and no allocation, exactly as pgx would, and hands
// everything else to pgx's own codec.
type numericCodec struct{ pgtype.NumericCodec }

// useFastNumeric makes c's binary NUMERIC <-> float64 conversions go
// through numericCodec.
func useFastNumeric(c *pgx.Conn) {
	c.TypeMap().RegisterType(&pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: numericCodec{}})
}

func (c numericCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(float64); ok && format == pgtype.BinaryFormatCode {
		return encodeFloat64Numeric{}
	}
	return c.NumericCodec.PlanEncode(m, oid, format, value)
}

func (c numericCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*float64); ok && format == pgtype.BinaryFormatCode {
		// pgx's own plan, for what the fast path does not take: found
		// through a map where NUMERIC has pgx's codec.
		return scanNumericFloat64{slow: pgtype.NewMap().PlanScan(oid, format, target)}
	}
	return c.NumericCodec.PlanScan(m, oid, format, target)
}

// The binary NUMERIC format (PostgreSQL's numeric_send): int16 ndigits,
// int16 weight, uint16 sign, int16 dscale, then ndigits base-10000 digits,
// most significant first; the value is sum(digit[i] * 10000^(weight-i)).
const (
	numericPositive = 0x0000
	numericNegative = 0x4000
	numericHeader   = 8
)

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// scanNumericFloat64 reads a binary NUMERIC into a *float64.
type scanNumericFloat64 struct{ slow pgtype.ScanPlan }

func (p scanNumericFloat64) Scan(src []byte, dst any) error {
	if f, ok := numericToFloat64(src); ok {
		*dst.(*float64) = f
		return nil
	}
	if p.slow == nil {
		return errors.New("cannot scan numeric into *float64")
	}
	return p.slow.Scan(src, dst)
}

// numericToFloat64 converts a binary NUMERIC of at most 2^53 in
// base-10000 digits times a power of ten within 1e±22 to the nearest
// float64: one exact integer multiplied or divided by one exact power of
// ten is correctly rounded, as strconv.ParseFloat (pgx's way) is. ok is
// false for anything else (NULL, NaN, infinities, more digits).
func numericToFloat64(src []byte) (f float64, ok bool) {
	if len(src) < numericHeader {
		return 0, false
	}
	ndigits := int(binary.BigEndian.Uint16(src))
	weight := int(int16(binary.BigEndian.Uint16(src[2:])))
	sign := binary.BigEndian.Uint16(src[4:])
	if (sign != numericPositive && sign != numericNegative) || ndigits > 4 || len(src) != numericHeader+2*ndigits {
		return 0, false
	}
	var mant uint64
	for i := range ndigits {
		d := binary.BigEndian.Uint16(src[numericHeader+2*i:])
		if d >= 10000 {
			return 0, false
		}
		mant = mant*10000 + uint64(d)
	}
	if mant > 1<<53 {
		return 0, false
	}
	f = float64(mant)
	if mant != 0 {
		switch exp := 4 * (weight - (ndigits - 1)); {
		case exp >= 0 && exp < len(pow10):
			f *= pow10[exp]
		case exp < 0 && -exp < len(pow10):
			f /= pow10[-exp]
		default:
			return 0, false
		}
	}
	if sign == numericNegative {
		f = -f
	}
	return f, true
}

// slowFloat64Numeric is pgx's own plan (stateless once made), for the
// values encodeFloat64Numeric does not take.
var slowFloat64Numeric = pgtype.NewMap().PlanEncode(pgtype.NumericOID, pgtype.BinaryFormatCode, float64(0))

// encodeFloat64Numeric writes a float64 as a binary NUMERIC, from its
// shortest decimal form (strconv 'f', -1), as pgx does, with the same
// digits, weight and scale.
type encodeFloat64Numeric struct{}

func (encodeFloat64Numeric) Encode(value any, buf []byte) ([]byte, error) {
	f := value.(float64)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return slowFloat64Numeric.Encode(f, buf)
	}
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'f', -1, 64)
	if len(s) > len(tmp) { // a huge value: pgx's way
		return slowFloat64Numeric.Encode(f, buf)
	}
	sign := uint16(numericPositive)
	if s[0] == '-' {
		s = s[1:]
		if f != 0 {
			sign = numericNegative
		}
	}
	intPart, frac := s, s[:0]
	for i, c := range s {
		if c == '.' {
			intPart, frac = s[:i], s[i+1:]
			break
		}
	}
	if len(intPart) == 1 && intPart[0] == '0' {
		intPart = intPart[:0]
	}
	var digits [16]uint16
	n := 0
	// The integer part in groups of four from the decimal point leftwards
	// (the first group shorter), then the fraction's, right-padded.
	first := len(intPart) % 4
	if first == 0 {
		first = 4
	}
	for start, end := 0, first; start < len(intPart); start, end = end, end+4 {
		digits[n] = group(intPart[start:end])
		n++
	}
	weight := n - 1
	if n == 0 {
		// |f| < 1: leading zero groups of the fraction only lower the weight.
		for len(frac) >= 4 && string(frac[:4]) == "0000" {
			frac = frac[4:]
			weight--
		}
		if len(frac) == 0 { // zero
			buf = binary.BigEndian.AppendUint16(buf, 0)
			buf = binary.BigEndian.AppendUint16(buf, uint16(0xffff)) // weight -1, as pgx writes it
			buf = binary.BigEndian.AppendUint16(buf, numericPositive)
			return binary.BigEndian.AppendUint16(buf, 0), nil
		}
	}
	dscale := 0 // digits after the point, counting the zero groups dropped above
	if i := bytes.IndexByte(s, '.'); i >= 0 {
		dscale = len(s) - i - 1
	}
	for start := 0; start < len(frac); start += 4 {
		end := min(start+4, len(frac))
		g := group(frac[start:end])
		for k := end - start; k < 4; k++ {
			g *= 10
		}
		if n == len(digits) {
			return slowFloat64Numeric.Encode(f, buf)
		}
		digits[n] = g
		n++
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(n))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(dscale))
	for _, d := range digits[:n] {
		buf = binary.BigEndian.AppendUint16(buf, d)
	}
	return buf, nil
}

// group is the value of up to four decimal digits.
func group(s []byte) uint16 {
	var g uint16
	for _, c := range s {
		g = g*10 + uint16(c-'0')
	}
	return g
}
