package report

import (
	"cmp"
	"maps"
	"slices"
)

// waitClasses is the closed set of wait classes (internal/dialect's
// WaitClass names, idle excluded: it is not database time), in the order
// tables, charts and CSV columns list them.
var waitClasses = []string{"cpu", "data_io", "log_io", "lock", "latch", "client", "other"}

// waitClassColors gives every class one colour in every chart, so that
// the wait charts of different profiles read alike.
var waitClassColors = map[string]string{
	"cpu": "#009e73", "data_io": "#0072b2", "log_io": "#d55e00", "lock": "#cc79a7",
	"latch": "#e69f00", "client": "#56b4e9", "other": "#999999",
}

func waitClassColor(class string, i int) string {
	if c, ok := waitClassColors[class]; ok {
		return c
	}
	return color(i)
}

// orderWaitClasses sorts class names: the known classes in their order,
// then any other name alphabetically.
func orderWaitClasses(set map[string]bool) []string {
	rank := func(c string) int {
		if i := slices.Index(waitClasses, c); i >= 0 {
			return i
		}
		return len(waitClasses)
	}
	return slices.SortedFunc(maps.Keys(set), func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
	})
}

// topWaitClasses returns up to n classes of shares, largest share first
// (ties in class order).
func topWaitClasses(shares map[string]float64, n int) []string {
	set := map[string]bool{}
	for c := range shares {
		set[c] = true
	}
	classes := orderWaitClasses(set)
	slices.SortStableFunc(classes, func(a, b string) int { return cmp.Compare(shares[b], shares[a]) })
	return classes[:min(n, len(classes))]
}
