package tpcc

import (
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Rand is the random source of the specification's generators (clause
// 2.1.5, 2.1.6, 4.3.2). It wraps a PCG generator used by value, so calls
// are not dispatched through an interface and never allocate. A Rand is
// owned by one goroutine.
//
// Streams make generation reproducible regardless of scheduling: the
// population of warehouse w is drawn from NewRand(seed, WarehouseStream(w))
// whichever worker generates it, and each virtual user draws from its own
// NewRand(seed, TerminalStream(i)).
type Rand struct {
	src rand.PCG
}

// Stream identifiers: a domain in the high 32 bits, an index in the low 32.
const (
	// ItemsStream is the stream from which the ITEM table is generated.
	ItemsStream uint64 = 1 << 32
	// ConstantsStream draws the NURand C constants (NewLoadConstants,
	// NewRunConstants).
	ConstantsStream uint64 = 4 << 32

	streamWarehouse uint64 = 2 << 32
	streamTerminal  uint64 = 3 << 32
)

// WarehouseStream is the stream from which everything of warehouse w is
// generated (WAREHOUSE, STOCK, DISTRICT, CUSTOMER, HISTORY, ORDERS,
// NEW_ORDER, ORDER_LINE rows with that w_id).
func WarehouseStream(w int) uint64 { return streamWarehouse | uint64(uint32(w)) }

// TerminalStream is the stream of the i-th virtual user (terminal).
func TerminalStream(i int) uint64 { return streamTerminal | uint64(uint32(i)) }

// NewRand returns a generator for one stream of a seed. Different
// (seed, stream) pairs give independent sequences; the same pair always
// gives the same sequence.
func NewRand(seed, stream uint64) *Rand {
	r := &Rand{}
	r.Seed(seed, stream)
	return r
}

// Seed resets r to the start of stream of seed, without allocating.
func (r *Rand) Seed(seed, stream uint64) {
	// Mix both words through splitmix64 so that neighbouring seeds and
	// streams land far apart in PCG's 2^128 state space.
	hi := splitmix64(seed ^ splitmix64(stream))
	lo := splitmix64(hi ^ stream ^ 0x6a09e667f3bcc909)
	r.src.Seed(hi, lo)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Uint64 returns 64 random bits.
func (r *Rand) Uint64() uint64 { return r.src.Uint64() }

// uint64n returns a uniform value in [0, n), n > 0, without modulo bias
// (Lemire's multiply-and-reject).
func (r *Rand) uint64n(n uint64) uint64 {
	hi, lo := bits.Mul64(r.src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.src.Uint64(), n)
		}
	}
	return hi
}

// Uniform returns a value uniformly distributed in [lo, hi], both included
// (TPC-C 2.1.5: random(x..y)). It returns lo when hi <= lo.
func (r *Rand) Uniform(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + int(r.uint64n(uint64(hi-lo)+1))
}

// NURand is the non-uniform random function of TPC-C 2.1.6:
// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x,
// where C is the run-time (or load-time) constant for A.
func (r *Rand) NURand(a, x, y, c int) int {
	return (((r.Uniform(0, a) | r.Uniform(x, y)) + c) % (y - x + 1)) + x
}

// Money returns an amount uniformly distributed in [lo, hi], to the cent.
func (r *Rand) Money(lo, hi Money) Money {
	return Money(r.Uniform(int(lo), int(hi)))
}

// alnum is the character set of generated a-strings: letters and digits
// only, so that no generated string ever contains a tab, a newline, a
// backslash or a quote (safe for COPY text format and LOAD DATA).
const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Characters drawn from one 64-bit word: each character consumes about
// 5.95 bits (alnum) or 3.32 bits (digits) of the word's fraction; the
// leftover precision (> 2^-28 relative bias) is far below any sampling error.
const (
	alnumPerWord = 6
	digitPerWord = 12
)

// AppendAString appends a random a-string of length random(min..max)
// (TPC-C 4.3.2.2). The characters are the 62 letters and digits.
func (r *Rand) AppendAString(dst []byte, min, max int) []byte {
	n := r.Uniform(min, max)
	dst = slices.Grow(dst, n)
	start := len(dst)
	dst = dst[:start+n]
	r.fill(dst[start:], alnum, alnumPerWord)
	return dst
}

// AppendNString appends a random n-string (digits) of length
// random(min..max) (TPC-C 4.3.2.2).
func (r *Rand) AppendNString(dst []byte, min, max int) []byte {
	n := r.Uniform(min, max)
	dst = slices.Grow(dst, n)
	start := len(dst)
	dst = dst[:start+n]
	r.fill(dst[start:], "0123456789", digitPerWord)
	return dst
}

// fill writes random characters of set into b, per characters per word.
func (r *Rand) fill(b []byte, set string, per int) {
	n := uint64(len(set))
	for len(b) > 0 {
		v := r.src.Uint64()
		k := min(per, len(b))
		for i := 0; i < k; i++ {
			var c uint64
			c, v = bits.Mul64(v, n)
			b[i] = set[c]
		}
		b = b[k:]
	}
}

// AppendLetters appends n random upper-case letters (W_STATE, D_STATE,
// C_STATE: "random a-string of 2 letters", TPC-C 4.3.3.1).
func (r *Rand) AppendLetters(dst []byte, n int) []byte {
	dst = slices.Grow(dst, n)
	start := len(dst)
	dst = dst[:start+n]
	r.fill(dst[start:], alnum[10:36], alnumPerWord)
	return dst
}

// AppendZip appends a zip code: a random n-string of 4 digits followed by
// the constant "11111" (TPC-C 4.3.2.7).
func (r *Rand) AppendZip(dst []byte) []byte {
	dst = r.AppendNString(dst, 4, 4)
	return append(dst, "11111"...)
}

// Original is the marker that 10% of I_DATA and S_DATA values carry
// (TPC-C 4.3.3.1); New-Order reports brand-generic "B" when both contain it.
const Original = "ORIGINAL"

// AppendData appends a random a-string of length random(min..max); for 10%
// of the values, selected at random, the string "ORIGINAL" is placed at a
// random position within it (TPC-C 4.3.3.1, I_DATA and S_DATA, 26..50).
// min must be at least len(Original).
func (r *Rand) AppendData(dst []byte, min, max int) []byte {
	start := len(dst)
	dst = r.AppendAString(dst, min, max)
	if r.Uniform(1, 10) == 1 {
		pos := r.Uniform(0, len(dst)-start-len(Original))
		copy(dst[start+pos:], Original)
	}
	return dst
}
