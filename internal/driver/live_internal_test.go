package driver

import (
	"testing"
	"time"
)

// TestLiveFromTheFirstSecond: the live gauges read 0 for the first 10 s
// of every run (the first live call came after LiveEvery, with the rates
// of that interval). Now Run calls live every second with the rates over
// the last LiveEvery, or over the run so far while it is younger, and
// marks a line every LiveEvery. The calls are made here one a second, a
// virtual user completing 3 transactions (1 New-Order) a second.
func TestLiveFromTheFirstSecond(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := &vu{stats: &vuStats{}}
	var lives []Live
	r := &runner{o: Options{LiveEvery: 4 * time.Second}, t0: t0, lastLine: t0, liveMarks: []liveMark{{at: t0}},
		vus: []*vu{v}, liveFn: func(l Live) { lives = append(lives, l) }}
	for s := 1; s <= 12; s++ {
		v.stats.live.done.Add(3)
		v.stats.live.newOrders.Add(1)
		r.live(t0.Add(time.Duration(s)*time.Second), PhaseMeasure)
	}
	var lines []time.Duration
	for _, l := range lives {
		if l.TPM != 180 || l.NOPM != 60 {
			t.Errorf("at %s: TPM %v, NOPM %v; want 180 and 60 from the first second on", l.Elapsed, l.TPM, l.NOPM)
		}
		if want := min(l.Elapsed, r.o.LiveEvery); l.Interval != want {
			t.Errorf("at %s: rates over %s, want %s", l.Elapsed, l.Interval, want)
		}
		if l.Line {
			lines = append(lines, l.Elapsed)
		}
	}
	if len(lines) != 3 || lines[0] != 4*time.Second || lines[1] != 8*time.Second || lines[2] != 12*time.Second {
		t.Errorf("lines at %v, want at 4, 8 and 12 s", lines)
	}
	if len(r.liveMarks) > 6 {
		t.Errorf("%d marks kept for a 4 s interval of 1 s calls", len(r.liveMarks))
	}
}
