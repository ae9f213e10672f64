package driver

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// shardParts makes count shards' results of a window starting at start
// (each shard's offset by offsets[i]), each with known New-Order
// latencies, and returns them with one histogram fed every sample.
func shardParts(t *testing.T, count int, start time.Time, offsets []time.Duration) ([]ShardPart, *hdrhistogram.Histogram) {
	t.Helper()
	all := newLatencyHistogram()
	rnd := rand.New(rand.NewPCG(1, 2))
	var parts []ShardPart
	for i := range count {
		h := newLatencyHistogram()
		n := 1000 + 500*i // shards of different sizes and spreads
		for range n {
			v := int64(200 + rnd.ExpFloat64()*float64(2000*(i+1)))
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			if err := all.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		r := &Result{Options: Options{VUs: 2}, Warehouses: count, Window: Window{
			Start: start.Add(offsets[i]), End: start.Add(offsets[i] + 60*time.Second), Seconds: 60}}
		r.Kinds = make([]KindResult, tpcc.NumTxKinds)
		for k := range r.Kinds {
			r.Kinds[k] = KindResult{Kind: tpcc.TxKind(k).String(), Failed: map[string]int64{}}
		}
		r.Kinds[tpcc.NewOrderTx].Completed = int64(n)
		r.DBNewOrders = int64(n) // each shard's own warehouses
		r.Series = []SecondSample{{T: time.Second, IntervalSeconds: 1, Transactions: int64(n), NewOrders: int64(n)}}
		if i == 0 {
			r.Group = &GroupCounters{DBNewOrders: 5000}
		}
		parts = append(parts, ShardPart{Index: i, RunID: int64(10 + i), Result: r,
			Histograms: map[tpcc.TxKind]*hdrhistogram.Histogram{tpcc.NewOrderTx: h}})
	}
	return parts, all
}

// TestMergeShardsIsExact: the merged histogram of four shards gives, at
// every percentile, the value one histogram fed every sample gives; NOPM
// is the database-wide figure, not the shards' sum.
func TestMergeShardsIsExact(t *testing.T) {
	start := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	parts, all := shardParts(t, 4, start, make([]time.Duration, 4))
	got, err := MergeShards("g", 4, parts)
	if err != nil {
		t.Fatal(err)
	}
	merged := got.Histograms()[tpcc.NewOrderTx]
	if merged.TotalCount() != all.TotalCount() {
		t.Fatalf("merged count: got %d, want %d", merged.TotalCount(), all.TotalCount())
	}
	for q := 0.0; q <= 100; q += 0.5 {
		if g, w := merged.ValueAtQuantile(q), all.ValueAtQuantile(q); g != w {
			t.Errorf("p%g: got %d, want %d", q, g, w)
		}
	}
	for _, q := range []float64{99.9, 99.99, 100} {
		if g, w := merged.ValueAtQuantile(q), all.ValueAtQuantile(q); g != w {
			t.Errorf("p%g: got %d, want %d", q, g, w)
		}
	}
	if g, w := got.Kinds[tpcc.NewOrderTx].LatencyMicros, summarise(all); g != w {
		t.Errorf("New-Order latency: got %+v, want %+v", g, w)
	}
	if got.DBNewOrders != 5000 || got.NOPM != 5000 {
		t.Errorf("NOPM: got %v (%d New-Orders), want the database-wide 5000", got.NOPM, got.DBNewOrders)
	}
	if got.Shards.ShardNewOrders != all.TotalCount() {
		t.Errorf("shards' own New-Orders: got %d, want %d", got.Shards.ShardNewOrders, all.TotalCount())
	}
	if got.Options.VUs != 8 || got.Series[0].Transactions != all.TotalCount() {
		t.Errorf("virtual users %d, first second's transactions %d: want 8 and %d", got.Options.VUs, got.Series[0].Transactions, all.TotalCount())
	}
	if got.Partial || len(got.Suspect) > 0 || !got.Shards.WithinTolerance {
		t.Errorf("partial %v, suspect %v, within tolerance %v: want a complete, coinciding merge", got.Partial, got.Suspect, got.Shards.WithinTolerance)
	}
}

func TestMergeShardsMarks(t *testing.T) {
	start := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		offset      time.Duration // of shard 2's window
		drop        int           // shard without a result; -1 none
		wantPartial bool
		wantSuspect bool
		wantWarning string
	}{
		{offset: 0, drop: -1},
		{offset: 900 * time.Millisecond, drop: -1},
		{offset: 1500 * time.Millisecond, drop: -1, wantSuspect: true},
		{offset: 0, drop: 3, wantPartial: true, wantWarning: "shard 3/4 is missing from the merge: its process died"},
		{offset: 0, drop: 0, wantPartial: true, wantWarning: "shard 0/4 is missing"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("offset %v drop %d", c.offset, c.drop), func(t *testing.T) {
			offsets := make([]time.Duration, 4)
			offsets[2] = c.offset
			parts, _ := shardParts(t, 4, start, offsets)
			if c.drop >= 0 {
				parts[c.drop].Result, parts[c.drop].Why = nil, "its process died"
			}
			got, err := MergeShards("g", 4, parts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Partial != c.wantPartial || (len(got.Suspect) > 0) != c.wantSuspect {
				t.Errorf("partial %v, suspect %v: want partial %v, suspect %v", got.Partial, got.Suspect, c.wantPartial, c.wantSuspect)
			}
			if c.wantWarning != "" && !strings.Contains(strings.Join(got.Warnings, "\n"), c.wantWarning) {
				t.Errorf("warnings %q: want one saying %q", got.Warnings, c.wantWarning)
			}
			if c.drop == 0 && !strings.Contains(got.NOPMSource, "sum of the shards") {
				t.Errorf("NOPM source %q without shard 0: want the shards' sum, labelled", got.NOPMSource)
			}
		})
	}
	if _, err := MergeShards("g", 2, []ShardPart{{Index: 0, Why: "died"}}); err == nil {
		t.Error("merging no result: want an error")
	}
}

// TestMergeShardsStalls: the merged run stalled only where every shard
// did (no shard completed anything), for at least StallThreshold.
func TestMergeShardsStalls(t *testing.T) {
	start := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	parts, _ := shardParts(t, 3, start, make([]time.Duration, 3))
	parts[0].Result.Stalls = []Stall{{Start: at(10), End: at(20), Seconds: 10}, {Start: at(40), End: at(45), Seconds: 5}}
	parts[1].Result.Stalls = []Stall{{Start: at(12), End: at(22), Seconds: 10}, {Start: at(44), End: at(50), Seconds: 6}}
	parts[2].Result.Stalls = []Stall{{Start: at(11), End: at(30), Seconds: 19}}
	got, err := MergeShards("g", 3, parts)
	if err != nil {
		t.Fatal(err)
	}
	// 12-20 s is stalled everywhere; 44-45 s is too short and shard 2 ran then.
	if len(got.Stalls) != 1 || !got.Stalls[0].Start.Equal(at(12)) || !got.Stalls[0].End.Equal(at(20)) || got.Stalls[0].Seconds != 8 {
		t.Errorf("merged stalls %+v, want one from 12 s to 20 s", got.Stalls)
	}
	parts[2].Result.Stalls = nil
	if got, err := MergeShards("g", 3, parts); err != nil || len(got.Stalls) != 0 {
		t.Errorf("a shard without a stall: merged stalls %+v (%v), want none", got.Stalls, err)
	}
}
