package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestOverTargetsManaged runs both steps over targets on two managed
// PostgreSQL instances whose data share one directory's device: the
// parallel step's window is stored and aligned; the noisy-neighbour
// scenario stores its two phases (each a synchronised window), every
// instance's figures per phase, the victim's loss, each backup with its
// start and end on the samples' axis inside the noisy phase, and the
// shared device's samples; the report draws its tables and charts with
// the phases and backups marked; the backups are removed and no server
// is left running.
func TestOverTargetsManaged(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	dir := reachableDir(t)
	st := openStore(t, t.TempDir())
	p := decodeIn(t, t.TempDir(), `name: over
warehouses: 1
build: {workers: 1, drop: true}
parallel: {vus: 1, rampup: 300ms, duration: 2s, grace: 1s}
neighbours:
  noisy: [b]
  vus: 1
  rampup: 300ms
  baseline: 3s
  cycles: 2
  interval: 3s
  grace: 1s
targets:
  - name: a
    engine: postgres
    data_dir: `+filepath.Join(dir, "a")+`
    memory: 32MB
    settings: {fsync: "off", full_page_writes: "off", synchronous_commit: "off"}
  - name: b
    engine: postgres
    data_dir: `+filepath.Join(dir, "b")+`
    memory: 32MB
    settings: {fsync: "off", full_page_writes: "off", synchronous_commit: "off"}
steps: [build, parallel, neighbours]
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true}
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if pids := serversUsing(t, dir); len(pids) > 0 {
		t.Errorf("processes still use the instances' directory: %v", pids)
	}
	steps, _ := st.ExperimentSteps(ctx, id)
	if len(steps) != 4 {
		t.Fatalf("schedule: got %d entries, want 2 builds, parallel, neighbours", len(steps))
	}
	checkWindows(t, st, id, 3, 2)

	// The noisy-neighbour scenario.
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindNeighbours, Counting: true})
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusOK {
		t.Fatalf("neighbours runs: got %+v (%v), want one complete", runs, err)
	}
	var sum summary.Neighbours
	if err := json.Unmarshal(runs[0].Summary, &sum); err != nil {
		t.Fatal(err)
	}
	phases := checkWindows(t, st, id, 4, 0)
	if len(phases) != 2 || phases[0].Phase != summary.PhaseBaseline || len(phases[0].Targets) != 2 ||
		phases[1].Phase != summary.PhaseNoisy || len(phases[1].Targets) != 1 || phases[1].Targets[0].Name != "a" {
		t.Fatalf("phases: got %+v, want a baseline over a and b, then a noisy window over a", phases)
	}
	if got := len(sum.Instances); got != 3 {
		t.Errorf("instances by phase: got %d, want a and b in the baseline, a in the noisy phase", got)
	}
	for _, ip := range sum.Instances {
		if ip.NOPM.N != 2 || ip.NOPM.Mean <= 0 || ip.BatchSeconds <= 0 {
			t.Errorf("%s in %s: NOPM %+v over %d batches of %v s, want 2 batches", ip.Name, ip.Phase, ip.NOPM, ip.Batches, ip.BatchSeconds)
		}
		// The batches are scaled to the database counter's figure.
		for _, w := range phases {
			for _, tg := range w.Targets {
				if w.Phase == ip.Phase && tg.Name == ip.Name && abs(ip.NOPM.Mean-tg.NOPM) > 1e-6*tg.NOPM {
					t.Errorf("%s in %s: batch mean %v, the database counted %v", ip.Name, ip.Phase, ip.NOPM.Mean, tg.NOPM)
				}
			}
		}
	}
	// Two batches a phase: too few runs for an interval.
	if len(sum.Losses) != 1 || sum.Losses[0].Name != "a" || sum.Losses[0].HasCI || !sum.Losses[0].TooFew {
		t.Errorf("losses: got %+v, want a's marked too few, without an interval", sum.Losses)
	}
	noisy := sum.Phases[1].Window
	// A cycle compares with the seconds after it only when a second of the
	// victim's series falls in its backup and another after it, before the
	// next one was due (or the window ended); on a slow host a backup fills
	// its interval, and the driver's seconds stretch (a late ticker), so a
	// gap of one second may hold no second's midpoint: ask for three.
	comparable := 0
	for i, c := range sum.NoiseRuns {
		next := noisy.ToMillis // the victim's seconds end with the window
		if i+1 < len(sum.NoiseRuns) {
			next = min(next, sum.NoiseRuns[i+1].Window.FromMillis)
		}
		if c.Seconds >= 3 && next-c.Window.ToMillis >= 3000 {
			comparable++
		}
	}
	if len(sum.WhileNoisy) != 1 || sum.WhileNoisy[0].Name != "a" || (comparable > 0 && sum.WhileNoisy[0].NOPMDuring.N == 0) {
		var spans []string
		for _, c := range sum.NoiseRuns {
			spans = append(spans, fmt.Sprintf("%d-%d ms", c.Window.FromMillis, c.Window.ToMillis))
		}
		t.Errorf("the victim while the backups ran: got %+v, want a's, cycle by cycle (%d cycle(s) left time after them; noisy window %d-%d ms, backups %v)",
			sum.WhileNoisy, comparable, noisy.FromMillis, noisy.ToMillis, spans)
	}
	if len(sum.NoiseRuns) != 2 {
		t.Fatalf("backups: got %d, want 2", len(sum.NoiseRuns))
	}
	for _, c := range sum.NoiseRuns {
		if c.Target != "b" || c.Error != "" || c.Bytes <= 0 || c.Seconds <= 0 || c.Window.ToMillis <= c.Window.FromMillis {
			t.Errorf("backup %d: %+v, want b's, finished, with its size and window", c.Cycle, c)
		}
		if c.Window.FromMillis < noisy.FromMillis || c.Started.Before(c.Due) {
			t.Errorf("backup %d started at %d ms (due %v, started %v), before the noisy window at %d ms", c.Cycle,
				c.Window.FromMillis, c.Due, c.Started, noisy.FromMillis)
		}
		if c.InWindow != (c.Window.ToMillis <= noisy.ToMillis+1) {
			t.Errorf("backup %d ends at %d ms, the noisy window at %d ms: in window %v", c.Cycle, c.Window.ToMillis, noisy.ToMillis, c.InWindow)
		}
	}
	if sum.Device == "" || !sum.Shared {
		t.Errorf("shared device: got %q (shared %v), want the device under both instances' data", sum.Device, sum.Shared)
	}
	samples, err := st.Samples(ctx, runs[0].ID, store.SampleFilter{Source: store.SourceHost, Metric: "disk_write_iops", Device: sum.Device})
	if err != nil || len(samples) < 5 {
		t.Errorf("the shared device's samples: got %d (%v), want one a second", len(samples), err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "b-backups", "*"))
	if len(left) > 0 {
		t.Errorf("backups left behind: %v", left)
	}

	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	sec := in.Experiment.Sections[2]
	if len(sec.Tables) != 5 || len(sec.Tables[1].Rows) != 1 || len(sec.Tables[2].Rows) != 1 || len(sec.Tables[3].Rows) != 2 {
		t.Fatalf("neighbours section: got %+v, want instances, a's losses, two backups and the device", sec.Tables)
	}
	if len(sec.Charts) != 3 {
		t.Fatalf("neighbours charts: got %d, want the device, the CPU and the instances' TPM", len(sec.Charts))
	}
	var phasesMarked, backupsMarked int
	for _, sp := range sec.Charts[0].Spans {
		switch sp.Kind {
		case report.SpanPhase:
			phasesMarked++
		case report.SpanEvent:
			backupsMarked++
		}
	}
	if phasesMarked != 2 || backupsMarked != 2 || len(sec.Charts[0].Series) != 3 {
		t.Errorf("device chart: %d phases and %d backups marked, %d series; want 2, 2 and read IOPS, write IOPS, latency",
			phasesMarked, backupsMarked, len(sec.Charts[0].Series))
	}
	var html bytes.Buffer
	if err := report.HTML(&html, in); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	for _, id := range []string{"step-2-chart-time-1", "step-3-chart-time-1", "step-3-chart-time-3"} {
		if !strings.Contains(html.String(), `id="`+id+`"`) {
			t.Errorf("the HTML report lacks %s", id)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b-backups")); err != nil {
		t.Errorf("the backup directory beside b's data: %v", err)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
