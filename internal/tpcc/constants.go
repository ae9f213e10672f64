package tpcc

import "fmt"

// The A values of NURand(A, x, y) (TPC-C 2.1.6).
const (
	ACLast = 255  // C_LAST: NURand(255, 0, 999)
	ACID   = 1023 // C_ID: NURand(1023, 1, 3000)
	AOLIID = 8191 // OL_I_ID: NURand(8191, 1, 100000)
)

// TPC-C 2.1.6.1: C_LAST run-time constant must differ from the load-time
// one by a delta in [65..119], excluding 96 and 112.
const (
	cLastDeltaMin = 65
	cLastDeltaMax = 119
)

func validCLastDelta(d int) bool {
	if d < 0 {
		d = -d
	}
	return d >= cLastDeltaMin && d <= cLastDeltaMax && d != 96 && d != 112
}

// NewLoadConstants draws the C constants used to generate the initial
// population (TPC-C 2.1.6: C is a run-time constant randomly chosen within
// [0 .. A]). Build records them so that run can satisfy 2.1.6.1.
func NewLoadConstants(r *Rand) Constants {
	return Constants{
		CLast: r.Uniform(0, ACLast),
		CID:   r.Uniform(0, ACID),
		OLIID: r.Uniform(0, AOLIID),
	}
}

// NewRunConstants draws the C constants of a measurement run against a
// database loaded with load (TPC-C 2.1.6.1): C_LAST is drawn uniformly among
// the values in [0..255] whose distance to load.CLast is in [65..119] and is
// neither 96 nor 112 (such a value exists for every load value in [0..255]);
// C_ID and OL_I_ID are drawn afresh in [0..A].
func NewRunConstants(r *Rand, load Constants) Constants {
	var candidates [2 * (cLastDeltaMax - cLastDeltaMin + 1)]int
	n := 0
	for c := 0; c <= ACLast; c++ {
		if validCLastDelta(c - load.CLast) {
			candidates[n] = c
			n++
		}
	}
	run := Constants{
		CID:   r.Uniform(0, ACID),
		OLIID: r.Uniform(0, AOLIID),
	}
	if n == 0 {
		// Only when load.CLast is outside [0..255]; ValidRunConstants rejects it.
		run.CLast = r.Uniform(0, ACLast)
		return run
	}
	run.CLast = candidates[r.Uniform(0, n-1)]
	return run
}

// ValidRunConstants reports whether run may be used against a database
// loaded with load: every constant within [0 .. A] (TPC-C 2.1.6) and the
// C_LAST delta rule of TPC-C 2.1.6.1. Run refuses an invalid combination.
func ValidRunConstants(load, run Constants) error {
	for _, c := range []struct {
		name      string
		load, run int
		a         int
	}{
		{"C_LAST", load.CLast, run.CLast, ACLast},
		{"C_ID", load.CID, run.CID, ACID},
		{"OL_I_ID", load.OLIID, run.OLIID, AOLIID},
	} {
		if c.load < 0 || c.load > c.a {
			return fmt.Errorf("load-time NURand constant for %s is %d, outside [0..%d] (TPC-C 2.1.6)", c.name, c.load, c.a)
		}
		if c.run < 0 || c.run > c.a {
			return fmt.Errorf("run-time NURand constant for %s is %d, outside [0..%d] (TPC-C 2.1.6)", c.name, c.run, c.a)
		}
	}
	if d := run.CLast - load.CLast; !validCLastDelta(d) {
		if d < 0 {
			d = -d
		}
		return fmt.Errorf("run-time C_LAST constant %d differs from the load-time constant %d by %d; TPC-C 2.1.6.1 requires a difference in [65..119] other than 96 and 112",
			run.CLast, load.CLast, d)
	}
	return nil
}
