package tpch

import (
	"errors"
	"fmt"
	"math"
)

// The numerical quantities of clause 5.4, computed from the timing
// intervals of clause 5.3.7.

// Interval is a timing interval as clause 5.3.7.5 reports it: seconds
// rounded to the nearest 0.1 second (23.74 is 23.7, 23.75 is 23.8), and
// values below 0.05 second rounded up to 0.1 second, so that none is zero.
func Interval(seconds float64) float64 {
	if seconds < 0.05 {
		return 0.1
	}
	// Rounded half up on the tenth, in integers, so that 23.75 (binary
	// 23.7499...) goes up as the clause's example does.
	return math.Floor(seconds*10+0.5+1e-9) / 10
}

// RefreshFunctions is the number of refresh functions (RF1, RF2) of the
// power test (clause 5.3.3).
const RefreshFunctions = 2

// PowerInputs are the timing intervals of a power test: the 22 queries
// of stream 0 by query number (QI(i,0), index i−1) and the two refresh
// functions (RI(j,0), index j−1), in seconds as measured.
type PowerInputs struct {
	Queries [Queries]float64
	Refresh [RefreshFunctions]float64
}

// Power is TPC-H Power@Size (clause 5.4.1.1) at scale s:
//
//	3600 × SF / (Π QI(i,0) × Π RI(j,0))^(1/24)
//
// with each interval rounded as clause 5.3.7.5 says, and, when the
// longest query interval is more than 1000 times the shortest, every
// query interval below max/1000 raised to max/1000, itself rounded so
// (clause 5.4.1.4). It returns the figure and the query intervals used,
// and an error when an interval is not a positive finite number.
func Power(s Scale, in PowerInputs) (float64, [Queries]float64, error) {
	var qi [Queries]float64
	longest, shortest := 0.0, math.Inf(1)
	for i, v := range in.Queries {
		if !(v >= 0) || math.IsInf(v, 0) {
			return 0, qi, fmt.Errorf("Q%d: timing interval %v", i+1, v)
		}
		qi[i] = Interval(v)
		longest, shortest = max(longest, qi[i]), min(shortest, qi[i])
	}
	if longest/shortest > 1000 {
		floor := Interval(longest / 1000)
		for i := range qi {
			qi[i] = max(qi[i], floor)
		}
	}
	logSum := 0.0
	for _, v := range qi {
		logSum += math.Log(v)
	}
	for j, v := range in.Refresh {
		if !(v >= 0) || math.IsInf(v, 0) {
			return 0, qi, fmt.Errorf("RF%d: timing interval %v", j+1, v)
		}
		logSum += math.Log(Interval(v))
	}
	return 3600 * s.Float() / math.Exp(logSum/float64(Queries+RefreshFunctions)), qi, nil
}

// Throughput is TPC-H Throughput@Size (clause 5.4.2.1) at scale s for
// streams query streams that ran in a measurement interval of ts seconds
// (Ts of clause 5.3.7.4, rounded as clause 5.3.7.5 rounds intervals):
//
//	S × 22 × 3600 / Ts × SF
func Throughput(s Scale, streams int, ts float64) (float64, error) {
	if streams < 1 {
		return 0, fmt.Errorf("%d query streams: want at least 1", streams)
	}
	if !(ts >= 0) || math.IsInf(ts, 0) {
		return 0, fmt.Errorf("measurement interval %v", ts)
	}
	return float64(streams*Queries) * 3600 / Interval(ts) * s.Float(), nil
}

// QphH is the composite query-per-hour figure QphH@Size (clause 5.4.3.1):
// the geometric mean of Power@Size and Throughput@Size.
func QphH(power, throughput float64) float64 { return math.Sqrt(power * throughput) }

// GeoMean is the geometric mean of timing intervals, each rounded as
// clause 5.3.7.5 says (the figure HammerDB reports per query stream).
func GeoMean(seconds []float64) (float64, error) {
	if len(seconds) == 0 {
		return 0, errors.New("no timing interval")
	}
	sum := 0.0
	for _, v := range seconds {
		if !(v >= 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("timing interval %v", v)
		}
		sum += math.Log(Interval(v))
	}
	return math.Exp(sum / float64(len(seconds))), nil
}

// minStreams is the table of clause 5.3.4: the fewest query streams of a
// throughput test at each scale factor a result may be published at.
var minStreams = []struct {
	sf      int64
	streams int
}{{1, 2}, {10, 3}, {30, 4}, {100, 5}, {300, 6}, {1000, 7}, {3000, 8}, {10000, 9}, {30000, 10}, {100000, 11}}

// MinStreams is the fewest query streams clause 5.3.4 asks of a
// throughput test at scale s, and whether s is one of the scale factors
// of that table (clause 4.1.3.1); below SF 1 there is none (0, false).
func (s Scale) MinStreams() (streams int, listed bool) {
	for i := len(minStreams) - 1; i >= 0; i-- {
		if m := minStreams[i]; s.milli >= m.sf*1000 {
			return m.streams, s.milli == m.sf*1000
		}
	}
	return 0, false
}

// StreamSeed is the qgen seed of query stream st when the power test's
// stream 0 uses seed (qgen -r seed): each stream draws from the seed
// plus its stream number, so that no two streams draw the same
// parameters (clause 2.1.3.3). It stays within qgen's range.
func StreamSeed(seed int64, st int) int64 {
	return (seed-1+int64(st))%(rngM-1) + 1
}
