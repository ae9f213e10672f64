package results

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/oltplab/oltplab/internal/store"
)

// TestStepSeriesAlignsSources: workload seconds end near whole seconds of
// the window, host intervals wherever the sampler's ticker fired; both must
// land on the same points, so no point lacks half of its figures.
func TestStepSeriesAlignsSources(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.CreateRun(ctx, store.Run{Kind: store.KindRun, Target: "sqlite:x.db", Dialect: "sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	var samples []store.Sample
	for i, tw := range []int64{1003, 2001, 2998, 4002} {
		th := int64(i+1)*1000 + 430 // the host ticker, 430 ms off the window's seconds
		samples = append(samples,
			store.Sample{TMillis: tw, Source: store.SourceWorkload, Metric: "tpm", Value: 100},
			store.Sample{TMillis: th, Source: store.SourceHost, Metric: "cpu_busy_pct", Value: 50},
			store.Sample{TMillis: th, Source: store.SourceHost, Metric: "disk_read_iops", Device: "vda", Value: 3},
			store.Sample{TMillis: th, Source: store.SourceHost, Metric: "disk_write_iops", Device: "vda", Value: 4},
			store.Sample{TMillis: th, Source: store.SourceHost, Metric: "disk_write_iops", Device: "vdb", Value: 99},
		)
	}
	if err := st.AddSamples(ctx, id, samples); err != nil {
		t.Fatal(err)
	}
	got, err := stepSeries(ctx, st, id, 8, "vda", store.SourceHost)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Points) != 4 {
		t.Fatalf("points: got %d, want 4: %+v", len(got.Points), got.Points)
	}
	for i, p := range got.Points {
		if p.TSeconds != float64(i+1) || p.TPM != 100 || p.CPUBusyPct != 50 || p.DiskIOPS != 7 {
			t.Errorf("point %d: got %+v, want t=%d s with TPM 100, CPU 50%%, IOPS 7 (vda only)", i, p, i+1)
		}
	}
}
