package postgres

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// numericValues are amounts as TPC-C has them and edge cases around them.
func numericValues() []float64 {
	vs := []float64{0, 1, -1, 0.01, -0.01, 0.05, 0.5, 1.5, 10, 100, 1000, 9999, 10000, 20000, 1e6, 12.05,
		-12.05, 5000.99, 0.0001, 0.00005, 123456789.12, 300000, -10, 0.1, 0.2, 0.3, 1e15, 1e-8, 4999.5,
		math.MaxInt32, 1.0 / 3, math.Pi, 1e21, 1e22, 1e23, 1e-20, math.SmallestNonzeroFloat64, math.MaxFloat64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vs = append(vs, float64(r.IntN(1_000_000_00)-500_000_00)/100) // cents
		vs = append(vs, float64(r.IntN(10_000))/10_000)               // taxes, discounts
		vs = append(vs, r.NormFloat64()*1e6)
	}
	return vs
}

// decimal is the exact value of a binary NUMERIC, decoded by pgx.
func decimal(t *testing.T, b []byte) *big.Rat {
	t.Helper()
	var n pgtype.Numeric
	if err := pgtype.NewMap().Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, b, &n); err != nil {
		t.Fatalf("decode %x: %v", b, err)
	}
	r := new(big.Rat).SetInt(n.Int)
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(n.Exp, -n.Exp))), nil))
	if n.Exp >= 0 {
		return r.Mul(r, p)
	}
	return r.Quo(r, p)
}

// TestNumericEncode holds the fast float64 -> NUMERIC encoding to pgx's: the
// same exact value and scale for every value.
func TestNumericEncode(t *testing.T) {
	pgxPlan := slowFloat64Numeric
	for _, v := range numericValues() {
		want, err := pgxPlan.Encode(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeFloat64Numeric{}.Encode(v, nil)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		if g, w := decimal(t, got), decimal(t, want); g.Cmp(w) != 0 {
			t.Errorf("%s: got %s, want %s", strconv.FormatFloat(v, 'g', -1, 64), g.FloatString(20), w.FloatString(20))
		}
		if g, w := got[6:8], want[6:8]; string(g) != string(w) {
			t.Errorf("%v: scale got %x, want %x", v, g, w)
		}
	}
}

// TestNumericScan holds the fast NUMERIC -> float64 decoding to pgx's: the
// same float64, bit for bit, for every value pgx encodes.
func TestNumericScan(t *testing.T) {
	pgxPlan := slowFloat64Numeric
	m := pgtype.NewMap()
	fast := numericCodec{}.PlanScan(m, pgtype.NumericOID, pgtype.BinaryFormatCode, new(float64))
	fastPath := 0
	for _, v := range numericValues() {
		b, err := pgxPlan.Encode(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want, got float64
		if err := m.Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, b, &want); err != nil {
			t.Fatal(err)
		}
		if err := fast.Scan(b, &got); err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%x: got %v, want %v", b, got, want)
		}
		if _, ok := numericToFloat64(b); ok {
			fastPath++
		}
	}
	if fastPath < 4000 {
		t.Errorf("fast path taken %d times: want most of the values", fastPath)
	}
	var f float64
	if err := fast.Scan(nil, &f); err == nil {
		t.Error("NULL into *float64: no error")
	}
}

func BenchmarkNumeric(b *testing.B) {
	pgxEnc := slowFloat64Numeric
	m := pgtype.NewMap()
	pgxScan := m.PlanScan(pgtype.NumericOID, pgtype.BinaryFormatCode, new(float64))
	fastScan := numericCodec{}.PlanScan(m, pgtype.NumericOID, pgtype.BinaryFormatCode, new(float64))
	buf := make([]byte, 0, 64)
	var f float64
	for _, c := range []struct {
		name string
		enc  pgtype.EncodePlan
		scan pgtype.ScanPlan
	}{{"pgx", pgxEnc, pgxScan}, {"fast", encodeFloat64Numeric{}, fastScan}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				var err error
				buf, err = c.enc.Encode(float64(i%100000)/100, buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				if err := c.scan.Scan(buf, &f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
