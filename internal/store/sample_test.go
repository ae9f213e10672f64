package store

import (
	"context"
	"fmt"
	"math"
	"testing"
)

func testSamplesRoundTrip(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	id, err := s.CreateRun(ctx, Run{Kind: KindRun})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.CreateRun(ctx, Run{Kind: KindRun})
	if err != nil {
		t.Fatal(err)
	}
	var batch []Sample
	// Inserted newest first and interleaved, to show Samples orders them.
	for sec := 59; sec >= 0; sec-- {
		batch = append(batch,
			Sample{TMillis: int64(sec) * 1000, Source: SourceHost, Metric: "disk_read_iops", Device: "nvme0n1", Value: float64(sec)},
			Sample{TMillis: int64(sec) * 1000, Source: SourceHost, Metric: "disk_read_iops", Device: "sda", Value: float64(2 * sec)},
			Sample{TMillis: int64(sec) * 1000, Source: SourceHost, Metric: "cpu_idle_pct", Value: 50.5},
			Sample{TMillis: int64(sec) * 1000, Source: SourceDB, Metric: "commits_per_s", Value: 1e3},
		)
	}
	if err := s.AddSamples(ctx, id, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSamples(ctx, other, batch[:4]); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		f         SampleFilter
		wantCount int
	}{
		{SampleFilter{}, 240},
		{SampleFilter{Source: SourceHost}, 180},
		{SampleFilter{Source: SourceHost, Metric: "disk_read_iops"}, 120},
		{SampleFilter{Metric: "disk_read_iops", Device: "sda"}, 60},
		{SampleFilter{Source: SourceWorkload}, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c.f), func(t *testing.T) {
			got, err := s.Samples(ctx, id, c.f)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != c.wantCount {
				t.Fatalf("got %d samples, want %d", len(got), c.wantCount)
			}
			for i := 1; i < len(got); i++ {
				a, b := got[i-1], got[i]
				if a.Source == b.Source && a.Metric == b.Metric && a.Device == b.Device && a.TMillis >= b.TMillis {
					t.Fatalf("series %s/%s/%s out of time order at %d: %d then %d", b.Source, b.Metric, b.Device, i, a.TMillis, b.TMillis)
				}
			}
		})
	}

	sda, err := s.Samples(ctx, id, SampleFilter{Metric: "disk_read_iops", Device: "sda"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sda[30], (Sample{TMillis: 30000, Source: SourceHost, Metric: "disk_read_iops", Device: "sda", Value: 60}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	idle, err := s.Samples(ctx, id, SampleFilter{Metric: "cpu_idle_pct"})
	if err != nil {
		t.Fatal(err)
	}
	if idle[0].Device != "" {
		t.Errorf("a sample without device: got device %q, want empty", idle[0].Device)
	}
}

func testAddSamplesRefusesBadBatches(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	id, err := s.CreateRun(ctx, Run{Kind: KindMonitor})
	if err != nil {
		t.Fatal(err)
	}
	good := Sample{Source: SourceHost, Metric: "mem_free_bytes", Value: 1}
	cases := []struct {
		name  string
		runID int64
		bad   Sample
	}{
		{"NaN value", id, Sample{Source: SourceHost, Metric: "x", Value: math.NaN()}},
		{"infinite value", id, Sample{Source: SourceHost, Metric: "x", Value: math.Inf(1)}},
		{"unknown source", id, Sample{Source: "disk", Metric: "x"}},
		{"no metric", id, Sample{Source: SourceHost}},
		{"missing run", id + 1, good},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := s.AddSamples(ctx, c.runID, []Sample{good, c.bad}); err == nil {
				t.Fatalf("got no error")
			}
		})
	}
	got, err := s.Samples(ctx, id, SampleFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("a refused batch left %d samples behind, want 0 (one transaction)", len(got))
	}
}
