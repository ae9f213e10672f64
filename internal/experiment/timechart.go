package experiment

import (
	"maps"
	"math"
	"slices"
)

// point is one sample of a per-second series: seconds on the chart's
// axis and its value.
type point struct {
	T, V float64
}

// alignSeries puts per-second series sampled at slightly different
// instants (each target's or sampler's own ticks) on one axis of whole
// seconds: each point goes to its nearest second; a second a series has
// no point in is nil for it.
func alignSeries(series [][]point) (x []float64, values [][]*float64) {
	secs := map[int64]bool{}
	for _, s := range series {
		for _, p := range s {
			secs[int64(math.Round(p.T))] = true
		}
	}
	keys := slices.Sorted(maps.Keys(secs))
	at := make(map[int64]int, len(keys))
	for i, k := range keys {
		at[k] = i
		x = append(x, float64(k))
	}
	for _, s := range series {
		vs := make([]*float64, len(keys))
		for _, p := range s {
			v := p.V
			vs[at[int64(math.Round(p.T))]] = &v
		}
		values = append(values, vs)
	}
	return x, values
}

// sumWhereAll is, at each x, the sum of the series that all have a
// value there (nil where one lacks it).
func sumWhereAll(values [][]*float64, n int) []*float64 {
	out := make([]*float64, n)
	for i := range n {
		sum, ok := 0.0, len(values) > 0
		for _, vs := range values {
			if vs[i] == nil {
				ok = false
				break
			}
			sum += *vs[i]
		}
		if ok {
			out[i] = &sum
		}
	}
	return out
}
