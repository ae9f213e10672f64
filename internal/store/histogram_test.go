package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// newLatencyHistogram is the shape the driver records: 1 us to 1 min, 3
// significant digits, values in microseconds.
func newLatencyHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(1, 60_000_000, 3) }

func testHistogramsMergeExactly(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	rng := rand.New(rand.NewPCG(1, 2))
	all := map[string]*hdrhistogram.Histogram{"new_order": newLatencyHistogram(), "payment": newLatencyHistogram()}
	var runIDs []int64
	for r := range 2 {
		id, err := s.CreateRun(ctx, Run{Kind: KindRun, Label: fmt.Sprint("repeat ", r)})
		if err != nil {
			t.Fatal(err)
		}
		runIDs = append(runIDs, id)
		hs := map[string]*hdrhistogram.Histogram{}
		for name := range all {
			h := newLatencyHistogram()
			for range 5000 + 3000*r { // different counts and shapes per repeat
				v := int64(rng.ExpFloat64()*float64(800*(r+1))) + 50
				if err := h.RecordValue(v); err != nil {
					t.Fatal(err)
				}
				if err := all[name].RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
			hs[name] = h
		}
		if err := s.PutHistograms(ctx, id, hs); err != nil {
			t.Fatal(err)
		}
	}

	one, err := s.LoadHistograms(ctx, runIDs[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(one), 2; got != want {
		t.Fatalf("run %d: got %d histograms, want %d", runIDs[0], got, want)
	}
	if got, want := one["payment"].TotalCount(), int64(5000); got != want {
		t.Errorf("run %d payment: got %d values, want %d", runIDs[0], got, want)
	}

	merged, err := s.MergeHistograms(ctx, runIDs...)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range all {
		got := merged[name]
		if got == nil {
			t.Fatalf("%s: no merged histogram", name)
		}
		if got.TotalCount() != want.TotalCount() {
			t.Errorf("%s: got %d values, want %d", name, got.TotalCount(), want.TotalCount())
		}
		for _, q := range []float64{50, 90, 95, 99, 99.9, 100} {
			if g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q); g != w {
				t.Errorf("%s p%v: got %d us, want %d us", name, q, g, w)
			}
		}
		if g, w := got.Mean(), want.Mean(); g != w {
			t.Errorf("%s mean: got %v, want %v", name, g, w)
		}
	}
}

func testPutHistogramsReplacesAndChecksRun(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	id, err := s.CreateRun(ctx, Run{Kind: KindRun})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, 25} { // a checkpoint, then the final histogram
		h := newLatencyHistogram()
		for i := range n {
			h.RecordValue(int64(100 + i))
		}
		if err := s.PutHistograms(ctx, id, map[string]*hdrhistogram.Histogram{"delivery": h}); err != nil {
			t.Fatal(err)
		}
	}
	hs, err := s.LoadHistograms(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hs["delivery"].TotalCount(), int64(25); got != want {
		t.Errorf("got %d values, want the final histogram's %d", got, want)
	}
	if err := s.PutHistograms(ctx, id+1, map[string]*hdrhistogram.Histogram{"delivery": newLatencyHistogram()}); err == nil {
		t.Errorf("histogram of a run that does not exist: got no error")
	}
}

func testMergeHistogramsRefusesDroppedValues(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	narrow, wide := hdrhistogram.New(1, 1000, 3), hdrhistogram.New(1, 1_000_000, 3)
	narrow.RecordValue(500)
	wide.RecordValue(900_000)
	var ids []int64
	for _, h := range []*hdrhistogram.Histogram{narrow, wide} {
		id, err := s.CreateRun(ctx, Run{Kind: KindRun})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutHistograms(ctx, id, map[string]*hdrhistogram.Histogram{"stock_level": h}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := s.MergeHistograms(ctx, ids...); err == nil {
		t.Errorf("merging a value beyond the first histogram's range: got no error")
	}
}
