package sysstat

import (
	"math"
	"strings"
	"testing"
)

// TestCoresBetween: used cores are busy less steal, over all online CPUs
// or over a set; a CPU missing from a reading is not counted.
func TestCoresBetween(t *testing.T) {
	read := func(s string) Stat {
		st, err := ParseStat(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// 100 ticks per CPU in the interval. cpu0: 90 user, 10 idle; cpu1: 20
	// system, 10 steal, 70 idle.
	prev := read("cpu  1000 0 1000 1000 0 0 0 0 0 0\ncpu0 500 0 500 500 0 0 0 0 0 0\ncpu1 500 0 500 500 0 0 0 0 0 0\n")
	cur := read("cpu  1090 0 1020 1080 0 0 0 10 0 0\ncpu0 590 0 500 510 0 0 0 0 0 0\ncpu1 500 0 520 570 0 0 0 10 0 0\n")
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tc := range []struct {
		name             string
		set              []int
		count, used, stl float64
		ok               bool
	}{
		{"all", nil, 2, 1.1, 0.1, true},
		{"cpu0", []int{0}, 1, 0.9, 0, true},
		{"cpu1", []int{1}, 1, 0.2, 0.1, true},
		{"both by number", []int{0, 1}, 2, 1.1, 0.1, true},
		{"offline cpu2", []int{1, 2}, 1, 0.2, 0.1, true},
		{"only offline", []int{3}, 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := CoresBetween(prev, cur, tc.set)
			if ok != tc.ok || !near(c.Count, tc.count) || !near(c.Used, tc.used) || !near(c.Steal, tc.stl) {
				t.Errorf("CoresBetween(%v) = %+v, %v; want count %g, used %g, steal %g, %v", tc.set, c, ok, tc.count, tc.used, tc.stl, tc.ok)
			}
		})
	}
}
