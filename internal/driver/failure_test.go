package driver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestJudgeServer: a run whose server was down when its window ended, or
// stood still for more than MaxStallPct of the window, failed; an outage
// over before the end, one after the window, and stalls within the
// share do not fail it.
func TestJudgeServer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	window := Window{Start: at(10), End: at(30), Seconds: 20}
	stall := func(from, to float64) Stall { return Stall{Start: at(from), End: at(to), Seconds: to - from} }
	for _, tc := range []struct {
		name    string
		outages []Outage
		stalls  []Stall
		maxPct  float64
		want    []string // prefixes of the reasons, in order
	}{
		{name: "quiet", maxPct: 10},
		{name: "outage over inside the window", maxPct: 10,
			outages: []Outage{{Start: at(12), End: at(13), Seconds: 1, VUs: 2}}},
		{name: "outage open at the end of the run", maxPct: 10,
			outages: []Outage{{Start: at(17.8), Seconds: 22, Ongoing: true, VUs: 2}},
			want:    []string{"the server was down when the measured window ended (outage 1, from 7.8 s into the measured window, 2 connection(s)"}},
		{name: "outage over in the grace period", maxPct: 10,
			outages: []Outage{{Start: at(29), End: at(31), Seconds: 2, VUs: 1}},
			want:    []string{"the server was down when the measured window ended (outage 1, from 19.0 s"}},
		{name: "outage open since the ramp-up", maxPct: 10,
			outages: []Outage{{Start: at(5), Seconds: 30, Ongoing: true, VUs: 4}},
			want:    []string{"the server was down when the measured window ended (outage 1, from before the measured window"}},
		{name: "outage after the window", maxPct: 10,
			outages: []Outage{{Start: at(31), Seconds: 1, Ongoing: true, VUs: 1}}},
		{name: "stalls within the share", maxPct: 10, stalls: []Stall{stall(12, 14)}},
		{name: "stalls over the share together", maxPct: 10, stalls: []Stall{stall(12, 14), stall(20, 22.5)},
			want: []string{"no transaction completed for 4.5 s of the 20.0 s measured window (22%), more than the 10% allowed"}},
		{name: "stalls allowed", maxPct: 100, stalls: []Stall{stall(11, 29)}},
		{name: "both", maxPct: 0, stalls: []Stall{stall(20, 22)},
			outages: []Outage{{Start: at(20), Seconds: 12, Ongoing: true, VUs: 1}},
			want:    []string{"the server was down", "no transaction completed for 2.0 s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Window: window, Outages: tc.outages, Stalls: tc.stalls}
			r.Options.MaxStallPct = tc.maxPct
			r.judgeServer()
			if len(r.ServerFailure) != len(tc.want) {
				t.Fatalf("ServerFailure %q, want %d reason(s) %q", r.ServerFailure, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(r.ServerFailure[i], w) {
					t.Errorf("reason %d: %q, want it to begin %q", i+1, r.ServerFailure[i], w)
				}
			}
			if r.ServerFailed() != (len(tc.want) > 0) {
				t.Errorf("ServerFailed %v with reasons %q", r.ServerFailed(), r.ServerFailure)
			}
		})
	}
}

// TestMaxStallStored: the share is stored with the options; a result
// stored before it existed reads as one whose stalls were never judged,
// and Recheck does not judge its server either.
func TestMaxStallStored(t *testing.T) {
	o := Defaults()
	o.MaxStallPct = 25
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var back Options
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.MaxStallPct != 25 || back.legacy {
		t.Errorf("read back max stall %g (legacy %v), want 25 as stored", back.MaxStallPct, back.legacy)
	}
	var old Options
	if err := json.Unmarshal([]byte(`{"mode":"tproc-c","vus":2,"duration_seconds":20}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.MaxStallPct != noStallLimit || !old.legacy {
		t.Errorf("an old result's max stall %g (legacy %v), want %d, never judged", old.MaxStallPct, old.legacy, noStallLimit)
	}

	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	down := []Outage{{Start: t0.Add(5 * time.Second), Seconds: 20, Ongoing: true, VUs: 1}}
	r := Result{Options: old, Window: Window{Start: t0, End: t0.Add(20 * time.Second), Seconds: 20}, Outages: down}
	if err := r.Recheck(); err != nil {
		t.Errorf("Recheck of a result stored before the rule: %v", err)
	}
	r.Options = Defaults()
	if err := r.Recheck(); err == nil || !strings.Contains(err.Error(), "server failed") {
		t.Errorf("Recheck of a result whose open outage is not said: %v, want the server's failure named", err)
	}
	r.judgeServer()
	if err := r.Recheck(); err != nil {
		t.Errorf("Recheck of a result that says its server failed: %v", err)
	}
}
