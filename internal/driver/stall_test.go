package driver

import (
	"fmt"
	"testing"
	"time"
)

// TestStalls: a stall is a stretch in which no virtual user completed
// anything, of at least StallThreshold; one user still completing
// transactions means there is none.
func TestStalls(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	user := func(done ...float64) gapLog {
		var g gapLog
		for _, s := range done {
			g.done(at(s))
		}
		return g
	}
	for _, tc := range []struct {
		users []gapLog
		want  []Stall // from, to in seconds
	}{
		// Both users stop completing at 3 s and resume at 6.5 s and 7 s.
		{[]gapLog{user(0.5, 1, 2, 3, 6.5, 8), user(0.2, 2.5, 7, 9)}, []Stall{{Start: at(3), End: at(6.5)}}},
		// The second user keeps completing through the first one's gap.
		{[]gapLog{user(0.5, 1, 2, 3, 6.5, 8), user(0.2, 2.5, 4, 5.5, 7, 9)}, nil},
		// Each silent for longer, but together for 1 s at most: below the threshold.
		{[]gapLog{user(0.5, 1, 4, 5, 9, 9.5), user(0.5, 2, 3.5, 6, 7, 8.5, 9.5)}, nil},
		// Only one completion (at 6 s) from 3 s to the window's end at 10 s.
		{[]gapLog{user(1, 2, 6), user(1, 3)}, []Stall{{Start: at(3), End: at(6)}, {Start: at(6), End: at(10)}}},
		// A user that never completed anything.
		{[]gapLog{user(), user(0.5, 9.9)}, []Stall{{Start: at(0.5), End: at(9.9)}}},
	} {
		var users [][]span
		for _, u := range tc.users {
			users = append(users, u.spans(t0, at(10)))
		}
		name := fmt.Sprintf("%d users, %d stalls", len(tc.users), len(tc.want))
		t.Run(name, func(t *testing.T) {
			got := stalls(users)
			if len(got) != len(tc.want) {
				t.Fatalf("stalls %+v, want %+v", got, tc.want)
			}
			for i, s := range got {
				w := tc.want[i]
				if !s.Start.Equal(w.Start) || !s.End.Equal(w.End) || s.Seconds != w.End.Sub(w.Start).Seconds() {
					t.Errorf("stall %d: %+v, want %v to %v", i, s, w.Start.Sub(t0), w.End.Sub(t0))
				}
			}
		})
	}
}
