package scenario

import (
	"math"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// seconds returns a per-second series with the given new orders (and
// twice as many transactions) in each second.
func seconds(newOrders ...int64) []driver.SecondSample {
	out := make([]driver.SecondSample, len(newOrders))
	for i, n := range newOrders {
		out[i] = driver.SecondSample{T: time.Duration(i+1) * time.Second, IntervalSeconds: 1, NewOrders: n, Transactions: 2 * n}
	}
	return out
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

func TestBatchSummaries(t *testing.T) {
	for _, c := range []struct {
		name      string
		series    []int64
		batches   int
		db        float64 // the counter's NOPM
		wantN     int
		wantMean  float64
		wantMin   float64
		wantMax   float64
		wantBatch float64
	}{
		{name: "two equal batches scaled to the counter", series: []int64{1, 1, 3, 3}, batches: 2, db: 240,
			wantN: 2, wantMean: 240, wantMin: 120, wantMax: 360, wantBatch: 2},
		{name: "an odd second goes to the batch its middle falls in", series: []int64{2, 2, 2, 4, 4}, batches: 2, db: 0,
			wantN: 2, wantMean: (120 + 200) / 2.0, wantMin: 120, wantMax: 200, wantBatch: 2.5}, // 4 in 2 s, then 10 in 3 s
		{name: "too short to cut: the counter alone", series: []int64{5}, batches: 3, db: 300,
			wantN: 1, wantMean: 300, wantMin: 300, wantMax: 300, wantBatch: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &driver.Result{Series: seconds(c.series...), NOPM: c.db, TPM: 2 * c.db}
			nopm, tpm, batch := batchSummaries(r, c.batches)
			if nopm.N != c.wantN || !near(nopm.Mean, c.wantMean) || !near(nopm.Min, c.wantMin) || !near(nopm.Max, c.wantMax) || !near(batch, c.wantBatch) {
				t.Errorf("got n %d mean %v min %v max %v over %v s batches; want %d, %v, %v, %v over %v s",
					nopm.N, nopm.Mean, nopm.Min, nopm.Max, batch, c.wantN, c.wantMean, c.wantMin, c.wantMax, c.wantBatch)
			}
			if !near(tpm.Mean, 2*nopm.Mean) {
				t.Errorf("TPM mean %v, want twice NOPM's %v", tpm.Mean, nopm.Mean)
			}
		})
	}
}

// TestWhileNoisy: seconds whose middle falls in a cycle count as during
// it, those after it and before the next cycle (or the window's end) as
// between; a cycle with no second between is left out.
func TestWhileNoisy(t *testing.T) {
	// Window from t=10 s: 18 seconds; cycles [10, 13], [16, 19] and
	// [22, 25]; the victim does 1 new order a second during cycles, 3
	// between.
	series := seconds(1, 1, 1, 3, 3, 3, 1, 1, 1, 3, 3, 3, 1, 1, 1, 3, 3, 3)
	w := whileNoisy("v", series, 10, [][2]float64{{10, 13}, {16, 19}, {22, 25}}, 28)
	if w.NOPMDuring.N != 3 || !near(w.NOPMDuring.Mean, 60) || !near(w.NOPMBetween.Mean, 180) {
		t.Fatalf("during %+v, between %+v; want 3 cycles at 60 and 180 NOPM", w.NOPMDuring, w.NOPMBetween)
	}
	if !near(w.NOPMLossPct, 100*(1-60.0/180)) || !near(w.TPMLossPct, w.NOPMLossPct) {
		t.Errorf("loss: NOPM %v%%, TPM %v%%; want %v%% both", w.NOPMLossPct, w.TPMLossPct, 100*(1-60.0/180))
	}
	if !w.HasCI || !w.Significant || !near(w.NOPMLo, w.NOPMLossPct) {
		t.Errorf("identical cycles: interval %v–%v (has %v, significant %v), want the point, significant", w.NOPMLo, w.NOPMHi, w.HasCI, w.Significant)
	}

	// Two cycles are too few for an interval.
	w = whileNoisy("v", series[:12], 10, [][2]float64{{10, 13}, {16, 19}}, 22)
	if w.NOPMDuring.N != 2 || w.HasCI || !w.TooFew || w.Significant {
		t.Errorf("two cycles: got %d, has CI %v, too few %v, significant %v; want 2, no interval, too few, not significant",
			w.NOPMDuring.N, w.HasCI, w.TooFew, w.Significant)
	}

	// The second cycle fills the rest of the window: nothing to compare.
	w = whileNoisy("v", series[:12], 10, [][2]float64{{10, 13}, {16, 22}}, 22)
	if w.NOPMDuring.N != 1 || w.HasCI {
		t.Errorf("one comparable cycle: got %d, has CI %v; want 1 without an interval", w.NOPMDuring.N, w.HasCI)
	}
}

func TestSharedDevice(t *testing.T) {
	roles := map[string][]string{"vda": {"data:n1", "data:n2", "noise:n2"}, "vdb": {"data:n3"}}
	if dev, shared := sharedDevice(roles, 3); dev != "vda" || shared {
		t.Errorf("got %s (shared %v), want vda, not shared by all three", dev, shared)
	}
	if dev, shared := sharedDevice(map[string][]string{"vda": {"data:n1", "data:n2"}}, 2); dev != "vda" || !shared {
		t.Errorf("got %s (shared %v), want vda shared", dev, shared)
	}
}

// TestWindowSettle: the skew is the spread of the targets' starts or
// ends, whichever is larger; only complete targets count in the totals.
func TestWindowSettle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := summary.ParallelWindow{SkewToleranceMillis: 5, Targets: []summary.WindowTarget{
		{Name: "a", Status: store.StatusOK, Start: t0, End: t0.Add(time.Minute), NOPM: 100, TPM: 200},
		{Name: "b", Status: store.StatusOK, Start: t0.Add(3 * time.Millisecond), End: t0.Add(time.Minute + 7*time.Millisecond), NOPM: 300, TPM: 600},
		{Name: "c", Status: store.StatusPartial, Start: t0.Add(time.Millisecond), End: t0.Add(30 * time.Second), NOPM: 50, TPM: 90},
	}}
	settleWindow(&w)
	if !near(w.StartSkewMillis, 3) || !near(w.EndSkewMillis, 30007) || !near(w.MaxSkewMillis, 30007) || !w.SkewExceeded {
		t.Errorf("skew: start %v, end %v, max %v, exceeded %v", w.StartSkewMillis, w.EndSkewMillis, w.MaxSkewMillis, w.SkewExceeded)
	}
	if w.Complete || w.TotalNOPM != 400 || w.TotalTPM != 800 || w.NOPM.N != 2 || w.NOPM.Min != 100 || w.NOPM.Max != 300 {
		t.Errorf("totals: complete %v, NOPM %v, TPM %v, spread %+v", w.Complete, w.TotalNOPM, w.TotalTPM, w.NOPM)
	}
}

// TestSuspectWindows: a window with a suspect target is complete and
// marked suspect; it counts in the statistics only when suspect runs are
// included.
func TestSuspectWindows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	window := func(repeat int, bStatus store.Status, bNOPM float64) summary.ParallelWindow {
		w := summary.ParallelWindow{Repeat: repeat, Targets: []summary.WindowTarget{
			{Name: "a", RunID: int64(2 * repeat), Status: store.StatusOK, Start: t0, End: t0.Add(time.Minute), NOPM: 100, TPM: 200},
			{Name: "b", RunID: int64(2*repeat + 1), Status: bStatus, Start: t0, End: t0.Add(time.Minute), NOPM: bNOPM, TPM: 2 * bNOPM},
		}}
		settleWindow(&w)
		return w
	}
	clean, suspect := window(1, store.StatusOK, 300), window(2, store.StatusSuspect, 900)
	if !suspect.Complete || !suspect.Suspect || clean.Suspect {
		t.Fatalf("suspect window: complete %v, suspect %v; clean window suspect %v", suspect.Complete, suspect.Suspect, clean.Suspect)
	}
	for _, c := range []struct {
		include  bool
		wantN    int
		wantMean float64
	}{{false, 1, 400}, {true, 2, (400 + 1000) / 2.0}} {
		st := summary.SummarizeWindows([]summary.ParallelWindow{clean, suspect}, c.include)
		if st.Complete != 2 || st.Suspect != 1 || st.TotalNOPM.N != c.wantN || !near(st.TotalNOPM.Mean, c.wantMean) {
			t.Errorf("include suspect %v: complete %d, suspect %d, total NOPM n %d mean %v; want 2, 1, %d, %v",
				c.include, st.Complete, st.Suspect, st.TotalNOPM.N, st.TotalNOPM.Mean, c.wantN, c.wantMean)
		}
	}
	var e SuspectError
	e.add(clean, 2)
	e.add(suspect, 2)
	if e.Total != 4 || len(e.Runs) != 1 || e.orNil() == nil {
		t.Errorf("suspect error: %d of %d runs, want 1 of 4", len(e.Runs), e.Total)
	}
}

// TestWindowTargetStatus: a target's status in its window is the status
// its run was stored with (summary.RunStatus), failures included: a
// target whose run failed too often does not count in the window's
// totals, as its run does not count in a profile.
func TestWindowTargetStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := &Env{}
	res := func(failures string) *driver.Result {
		r := &driver.Result{NOPM: 100, TPM: 200, TooManyFailures: failures}
		r.Window.Start, r.Window.End = t0, t0.Add(time.Minute)
		return r
	}
	w := summary.ParallelWindow{PlannedStart: t0, PlannedEnd: t0.Add(time.Minute)}
	w.Targets = []summary.WindowTarget{e.windowTarget(w, "a", 1, res(""), nil),
		e.windowTarget(w, "b", 2, res("90 of 100 transactions failed"), nil)}
	if got := w.Targets[1].Status; got != store.StatusFailures {
		t.Errorf("target with too many failures: status %s, want %s (its run's)", got, store.StatusFailures)
	}
	settleWindow(&w)
	if w.Complete || w.TotalNOPM != 100 {
		t.Errorf("window: complete %v, total NOPM %v; want incomplete, only a's 100", w.Complete, w.TotalNOPM)
	}
}
