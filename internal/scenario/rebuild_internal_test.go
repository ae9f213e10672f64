package scenario

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/summary"
)

func TestCheckPhases(t *testing.T) {
	host := func(busy float64) sampler.StepSummary {
		return sampler.StepSummary{Seconds: 5, CPU: sampler.CPUSummary{BusyPct: busy}}
	}
	// foreign: the host's figures with the foreign CPU known.
	foreign := func(busy, pct float64) sampler.StepSummary {
		h := host(busy)
		cores := pct / 100 * 2
		h.CPUUse = &sampler.CPUUse{HostCores: 2, ForeignCores: &cores, ForeignPct: &pct}
		return h
	}
	counted := &sampler.IOCount{ReadIOs: 180, ReadBytes: 287e6}
	cases := []struct {
		name      string
		phases    []summary.RebuildPhase
		wantNotes []string // substrings, in order
		wantIO    bool     // the I/O figures are kept
	}{
		{"quiet host, counted I/O", []summary.RebuildPhase{{Cache: summary.CacheCold, ServerIO: counted, Host: host(40)},
			{Cache: summary.CacheWarm, ServerIO: &sampler.IOCount{}, Host: host(45)}}, nil, true},
		{"a cold rebuild that counted no I/O", []summary.RebuildPhase{{Cache: summary.CacheCold, ServerIO: &sampler.IOCount{}, Host: host(30)},
			{Cache: summary.CacheWarm, ServerIO: &sampler.IOCount{}, Host: host(30)}}, []string{"not counted"}, false},
		{"busy host", []summary.RebuildPhase{{Cache: summary.CacheWarm, Host: host(99)}, {Cache: summary.CacheWarm, Host: host(95)}}, []string{"97% busy"}, true},
		{"busy host, nothing counted", []summary.RebuildPhase{{Cache: summary.CacheCold, ServerIO: &sampler.IOCount{}, Host: host(100)}},
			[]string{"not counted", "100% busy"}, false},
		{"no samples", []summary.RebuildPhase{{Cache: summary.CacheWarm}}, nil, true},
		// The foreign CPU, where it is known, decides: a host busy with
		// the server's own work is no warning, one busy with others' is.
		{"busy with the server's own work", []summary.RebuildPhase{{Cache: summary.CacheWarm, Host: foreign(99, 3)},
			{Cache: summary.CacheWarm, Host: foreign(97, 5)}}, nil, true},
		{"busy with others' work", []summary.RebuildPhase{{Cache: summary.CacheWarm, Host: foreign(99, 45)},
			{Cache: summary.CacheWarm, Host: foreign(97, 35)}}, []string{"foreign CPU (what neither the database server nor oltplab used) was 40% of the host's cores"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			notes := checkPhases(tc.phases, 10)
			if len(notes) != len(tc.wantNotes) {
				t.Fatalf("notes %q, want %d like %q", notes, len(tc.wantNotes), tc.wantNotes)
			}
			for i, want := range tc.wantNotes {
				if !strings.Contains(notes[i], want) {
					t.Errorf("note %d = %q, want it to say %q", i, notes[i], want)
				}
			}
			for _, p := range tc.phases {
				if kept := p.ServerIO != nil; kept && !tc.wantIO {
					t.Errorf("phase %s kept I/O figures %+v, want them dropped", p.Cache, p.ServerIO)
				}
			}
		})
	}
}

// TestStillRunning: a long statement says it is still running every
// progressEvery, with the time since it started, and says nothing once
// stopped (on the synctest bubble's clock).
func TestStillRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var notes []string
		e := &Env{Observer: Observer{Note: func(m string) { notes = append(notes, m) }}}
		stop := e.stillRunning("cold: still rebuilding", time.Now())
		time.Sleep(2*progressEvery + progressEvery/2)
		stop()
		time.Sleep(3 * progressEvery)
		want := []string{"    cold: still rebuilding, 15 s", "    cold: still rebuilding, 30 s"}
		if strings.Join(notes, "|") != strings.Join(want, "|") {
			t.Errorf("notes: got %q, want %q", notes, want)
		}
	})
}
