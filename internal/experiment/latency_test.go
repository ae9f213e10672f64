package experiment

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestLatencyTier runs a plan whose managed PostgreSQL sits on a latency
// layer with a fixed 5 ms read delay and a 2 ms fsync delay: the storage
// step's fio runs inside the layer, so its read latency includes the
// delay (its median is at least 5 ms), and the layer's figures over each
// fio profile and over each timed run's window are stored with them, the
// delays observed (lower bounds: a delay injected must be seen).
func TestLatencyTier(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres, testenv.Fio, testenv.Root)
	if err := latency.Check(); err != nil {
		testenv.Unavailable(t, testenv.Root, err)
	}
	dir := reachableDir(t)
	p := decodeIn(t, t.TempDir(), `name: tier
warehouses: 1
build: {workers: 1}
storage: {profile: [oltp-4k-qd8], runtime: 2s, size: 16M, fio_options: [rw=randread]}
targets:
  - name: pg
    engine: postgres
    data_dir: `+filepath.Join(dir, "pg")+`
    memory: 32MB
    latency: {read: 5ms, fsync: 2ms}
steps: [storage, build, {profile: {vus: [1], rampup: 500ms, duration: 2s, grace: 1s}}]
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	st := openStore(t, t.TempDir())
	id, err := (&Runner{Store: st, ToolVersion: "test"}).Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}

	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindStorage, Counting: true})
	if err != nil || len(runs) != 1 {
		t.Fatalf("storage runs: got %d (%v), want 1", len(runs), err)
	}
	sto, err := summary.DecodeStorage(runs[0].Summary)
	if err != nil || len(sto.Profiles) != 1 {
		t.Fatalf("storage summary: %v, %d profiles", err, len(sto.Profiles))
	}
	pr := sto.Profiles[0]
	if len(pr.Directions) == 0 || pr.Directions[0].Direction != "read" || pr.Directions[0].CompletionLatency.P50Millis < 5 {
		t.Errorf("fio through a 5 ms read delay: got %+v, want reads with a median of at least 5 ms", pr.Directions)
	}
	read, ok := pr.LatencyLayer.Kind("read")
	if !ok || read.P50Millis < 5 || read.DelayMeanMillis != 5 {
		t.Errorf("the layer's reads during fio: got %+v (seen %v), want a median of at least 5 ms, 5 ms drawn", read, ok)
	}
	t.Logf("fio randread qd8 through read=5ms: fio %+v; layer reads %+v", pr.Directions[0].CompletionLatency, read)
	if pr.LatencyLayer == nil || pr.LatencyLayer.Settings.Text != "read=5ms,fsync=2ms" {
		t.Errorf("the layer's settings with fio's figures: got %+v", pr.LatencyLayer)
	}
	if sto.Monitor.LatencyLayer == nil {
		t.Errorf("the storage run's monitor has no layer figures")
	}

	runs, err = st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun, Counting: true})
	if err != nil || len(runs) != 1 {
		t.Fatalf("timed runs: got %d (%v), want 1", len(runs), err)
	}
	run, err := summary.DecodeRun(runs[0].Summary)
	if err != nil || run.Monitor == nil {
		t.Fatalf("run summary: %v", err)
	}
	l := run.Monitor.LatencyLayer
	if l == nil {
		t.Fatalf("the run's monitor has no layer figures (warnings %q)", run.Monitor.Warnings)
	}
	// Every commit of the window fsyncs the WAL through the layer.
	fsync, ok := l.Kind("fsync")
	if !ok || fsync.P50Millis < 2 || fsync.DelayMeanMillis != 2 {
		t.Errorf("the run's fsyncs: got %+v (seen %v), want a median of at least 2 ms, 2 ms drawn", fsync, ok)
	}
	t.Logf("run window %.1f s: layer fsync %+v", l.Seconds, fsync)
	if l.Seconds <= 0 || l.CPUSeconds <= 0 {
		t.Errorf("the run's layer window: %v s, layer CPU %v s; want both measured", l.Seconds, l.CPUSeconds)
	}
	// The layer's CPU is oltplab's, not foreign: a busy layer made the
	// runs on a tier contaminated.
	if u := run.Monitor.CPUUse; u == nil || !strings.Contains(u.ServerSource, "latency layer") {
		t.Errorf("the run's CPU account does not count the layer with oltplab: %+v", u)
	}

	// The report names the tier's latency beside fio's figures, and has
	// the layer's figures of the profile's step.
	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	var storageRow []string
	var layer *report.LayerFigures
	for _, sec := range in.Experiment.Sections {
		if sec.Kind == "storage" && len(sec.Tables) > 0 && len(sec.Tables[0].Rows) > 0 {
			storageRow = sec.Tables[0].Rows[0]
		}
		for _, p := range sec.Profiles {
			for _, s := range p.Steps {
				if s.Host != nil && s.Host.Layer != nil {
					layer = s.Host.Layer
				}
			}
		}
	}
	if len(storageRow) < 2 || storageRow[1] != "latency read=5ms,fsync=2ms" {
		t.Errorf("the storage table's row: got %q, want the tier's latency in its second column", storageRow)
	}
	if layer == nil || layer.Settings != "read=5ms,fsync=2ms" || layer.Kinds["fsync"].DelayMeanMillis != 2 {
		t.Errorf("the report's layer figures of the profile: got %+v", layer)
	}
}
