package tpch

// dbgen's random number generator (TPC-H 4.2.1: DBGEN; dbgen rnd.c): Park and
// Miller's minimal standard generator x' = 16807·x mod (2³¹−1), with one
// stream per column. Every stream is advanced to a fixed boundary at the
// end of each row whether the row used all its draws or not (dbgen's
// row_stop), so the state at row n is the seed times 16807^((n−1)·boundary):
// a chunk skips to its first row in O(log n) multiplications, exactly as
// dbgen -C/-S does (speed_seed.c).
const (
	rngA = 16807
	rngM = 2147483647 // 2³¹−1
	dM   = 2147483647.0
)

// mulMod returns a·b mod 2³¹−1 for a, b < 2³¹.
func mulMod(a, b int64) int64 {
	x := a * b
	r := (x & rngM) + (x >> 31)
	if r >= rngM {
		r -= rngM
	}
	return r
}

// powMod returns 16807ⁿ mod 2³¹−1 (dbgen's NthElement multiplier).
func powMod(n int64) int64 {
	z, m := int64(1), int64(rngA)
	for n > 0 {
		if n&1 != 0 {
			z = mulMod(z, m)
		}
		n >>= 1
		m = mulMod(m, m)
	}
	return z
}

// stream is one column's random stream.
type stream struct {
	seed  int64 // current value
	start int64 // value at the start of the current row
	per   int64 // the row boundary: draws per row, used or not
	step  int64 // 16807^per: moves start to the next row
}

func newStream(seed, per int64) stream {
	return stream{seed: seed, start: seed, per: per, step: powMod(per)}
}

// next advances the stream one draw (dbgen's NextRand).
func (s *stream) next() int64 {
	s.seed = mulMod(s.seed, rngA)
	return s.seed
}

// uniform returns a value in [lo, hi], computed as dbgen's UnifInt does,
// in double precision: lo + trunc(x/(2³¹−1) · (hi−lo+1)).
func (s *stream) uniform(lo, hi int64) int64 {
	return lo + int64(float64(s.next())/dM*float64(hi-lo+1))
}

// alnumBits is the draw dbgen's a_rnd makes for five characters:
// UnifInt(0, MAX_LONG), whose range hi−lo+1 overflows 32-bit arithmetic to
// −2³¹, so the value is zero or negative and its low bits, six at a time,
// pick the characters.
func (s *stream) alnumBits() int64 {
	return int64(float64(s.next()) / dM * -2147483648.0)
}

// endRow moves the stream to the start of the next row (dbgen's row_stop).
func (s *stream) endRow() {
	s.start = mulMod(s.start, s.step)
	s.seed = s.start
}

// skipRows moves the stream n rows ahead of the current row's start
// (dbgen's sd_* functions).
func (s *stream) skipRows(n int64) {
	if n <= 0 {
		return
	}
	s.start = mulMod(s.start, powMod(n*s.per))
	s.seed = s.start
}

// The initial value of each stream dbgen uses, with its per-row boundary
// (dbgen rnd.h, Seed[]; dss.h names the streams).
const (
	seedPMfg     = 1          // P_MFG_SD
	seedPBrand   = 46831694   // P_BRND_SD
	seedPType    = 1841581359 // P_TYPE_SD
	seedPSize    = 1193163244 // P_SIZE_SD
	seedPCntr    = 727633698  // P_CNTR_SD
	seedTextPool = 933588178  // stream 5: the text pool
	seedPCmnt    = 804159733  // P_CMNT_SD, 2 per part
	seedPSQty    = 1671059989 // PS_QTY_SD, 4 per part
	seedPSScst   = 1051288424 // PS_SCST_SD, 4 per part
	seedPSCmnt   = 1961692154 // PS_CMNT_SD, 8 per part
	seedOClrk    = 1171034773 // O_CLRK_SD
	seedOCmnt    = 276090261  // O_CMNT_SD, 2 per order
	seedODate    = 1066728069 // O_ODATE_SD
	seedLQty     = 209208115  // L_QTY_SD, 7 per order (O_LCNT_MAX lines)
	seedLDcnt    = 554590007  // L_DCNT_SD
	seedLTax     = 721958466  // L_TAX_SD
	seedLShip    = 1371272478 // L_SHIP_SD
	seedLSmode   = 675466456  // L_SMODE_SD
	seedLPkey    = 1808217256 // L_PKEY_SD
	seedLSkey    = 2095021727 // L_SKEY_SD
	seedLSdte    = 1769349045 // L_SDTE_SD
	seedLCdte    = 904914315  // L_CDTE_SD
	seedLRdte    = 373135028  // L_RDTE_SD
	seedLRflg    = 717419739  // L_RFLG_SD
	seedLCmnt    = 1095462486 // L_CMNT_SD, 14 per order
	seedCAddr    = 881155353  // C_ADDR_SD, 9 per customer
	seedCNtrg    = 1489529863 // C_NTRG_SD
	seedCPhne    = 1521138112 // C_PHNE_SD, 3 per customer
	seedCAbal    = 298370230  // C_ABAL_SD
	seedCMseg    = 1140279430 // C_MSEG_SD
	seedCCmnt    = 1335826707 // C_CMNT_SD, 2 per customer
	seedSAddr    = 706178559  // S_ADDR_SD, 9 per supplier
	seedSNtrg    = 110356601  // S_NTRG_SD
	seedSPhne    = 884434366  // S_PHNE_SD, 3 per supplier
	seedSAbal    = 962338209  // S_ABAL_SD
	seedSCmnt    = 1341315363 // S_CMNT_SD, 2 per supplier
	seedPName    = 709314158  // P_NAME_SD, 92 per part
	seedOPrio    = 591449447  // O_PRIO_SD
	seedOCkey    = 851767375  // O_CKEY_SD
	seedNCmnt    = 606179079  // N_CMNT_SD, 2 per nation
	seedRCmnt    = 1500869201 // R_CMNT_SD, 2 per region
	seedOLcnt    = 1434868289 // O_LCNT_SD
	seedBBBJunk  = 263032577  // BBB_JNK_SD
	seedBBBType  = 753643799  // BBB_TYPE_SD
	seedBBBCmnt  = 202794285  // BBB_CMNT_SD
	seedBBBOff   = 715851524  // BBB_OFFSET_SD
)
