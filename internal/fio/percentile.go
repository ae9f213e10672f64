package fio

import (
	"fmt"
	"sort"
	"strconv"
)

// mergedPercentiles adds up latency histograms (fio's json+ "bins": the
// value of each bucket in ns -> the number of I/Os in it) and reads the
// wanted percentiles (ascending) off the sum the way fio reads its own
// (calc_clat_percentiles in fio's stat.c): the value of the first bucket
// at which the running count reaches p% of all I/Os.
func mergedPercentiles(hists []map[string]int64, want []float64) ([]float64, error) {
	sum := map[float64]int64{}
	var total int64
	for _, h := range hists {
		for k, n := range h {
			v, err := strconv.ParseFloat(k, 64)
			if err != nil {
				return nil, fmt.Errorf("latency bucket %q: %w", k, err)
			}
			sum[v] += n
			total += n
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("no latencies in the histograms")
	}
	values := make([]float64, 0, len(sum))
	for v := range sum {
		values = append(values, v)
	}
	sort.Float64s(values)
	out := make([]float64, len(want))
	var run int64
	j := 0
	for _, v := range values {
		run += sum[v]
		for j < len(want) && float64(run) >= want[j]/100*float64(total) {
			out[j] = v
			j++
		}
		if j == len(want) {
			break
		}
	}
	return out, nil
}
