package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// storedSummary reads a summary as oltplab stored it (internal/summary's
// testdata: real runs), changed by edit when given.
func storedSummary[T any](t *testing.T, file string, decode func([]byte) (T, error), edit func(*T)) json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "summary", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return raw
	}
	v, err := decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	edit(&v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportSummaryStatesEveryStep: the report of an experiment with
// storage, backup, rebuild, neighbours and TPC-H steps and no profile
// step, from the summaries those steps stored, opens with a summary
// that states each step's headline (issue 28: such a report went from
// the title straight to "System under test"): fio IOPS and latency,
// backup and restore time against the baseline's, rebuild cold and
// warm, the victims while the backups ran before their loss against the
// baseline (a too wide interval said to be so), the TPROC-H figures, the
// plan's question and an answer for each target.
func TestReportSummaryStatesEveryStep(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	params := Params{Name: "tiers", Question: "Which tier backs up fastest, and what do its backups cost the others?", Baseline: "a",
		Targets: []TargetParams{{Name: "a", Dialect: "sqlite"}, {Name: "b", Dialect: "sqlite"}, {Name: "c", Dialect: "sqlite"}},
		Steps: []StepParams{{Kind: "storage", Describe: "storage oltp-4k-qd8"}, {Kind: "backup", Describe: "backup, 2 cycles"},
			{Kind: "rebuild", Describe: "rebuild"}, {Kind: "neighbours", Describe: "neighbours"}, {Kind: "tpch", Describe: "tpch SF 0.01"}}}
	raw, _ := json.Marshal(params)
	var steps []store.ExperimentStep
	for i, sp := range params.Steps {
		if sp.Kind == "neighbours" {
			steps = append(steps, store.ExperimentStep{Seq: len(steps) + 1, StepIndex: i, Kind: sp.Kind})
			continue
		}
		for _, tg := range params.Targets {
			steps = append(steps, store.ExperimentStep{Seq: len(steps) + 1, StepIndex: i, Kind: sp.Kind, Target: tg.Name})
		}
	}
	id, err := st.CreateExperiment(ctx, store.Experiment{Name: "tiers", Params: raw}, steps)
	if err != nil {
		t.Fatal(err)
	}
	// b backs up and restores in twice a's time.
	slower := func(b *summary.Backup) {
		s := &b.Stats
		for _, x := range []*float64{&s.BackupSeconds.Mean, &s.BackupSeconds.CILo, &s.BackupSeconds.CIHi, &s.RestoreSeconds.Mean} {
			*x *= 2
		}
		for i := range b.Cycles {
			b.Cycles[i].Backup.Seconds *= 2
		}
	}
	stored := map[string]struct {
		kind store.Kind
		sum  func(target string) json.RawMessage
	}{
		"storage": {store.KindStorage, func(string) json.RawMessage {
			return storedSummary[summary.Storage](t, "storage-summary-v0.json", nil, nil)
		}},
		"backup": {store.KindBackup, func(target string) json.RawMessage {
			if target == "b" {
				return storedSummary(t, "backup-summary-v0.json", summary.DecodeBackup, slower)
			}
			return storedSummary[summary.Backup](t, "backup-summary-v0.json", nil, nil)
		}},
		"rebuild": {store.KindRebuild, func(string) json.RawMessage {
			return storedSummary[summary.Rebuild](t, "rebuild-summary-v0.json", nil, nil)
		}},
		// a's loss against the baseline has an interval too wide to mean
		// anything; b gained (issue 28's case).
		"neighbours": {store.KindNeighbours, func(string) json.RawMessage {
			return storedSummary(t, "neighbours-summary-v0.json", summary.DecodeNeighbours, func(n *summary.Neighbours) {
				n.Losses[0].TooFew = false
				b := &n.Losses[1]
				b.NOPMLossPct, b.NOPMLo, b.NOPMHi, b.HasCI, b.TooFew, b.Significant = -111.4, -666.0, -11.7, true, false, true
			})
		}},
		"tpch": {store.KindTPCH, func(string) json.RawMessage { return storedSummary[summary.TPCH](t, "tpch-summary-v0.json", nil, nil) }},
	}
	for _, s := range steps {
		k := stored[s.Kind]
		sum := k.sum(s.Target)
		rid, err := st.CreateRun(ctx, store.Run{Kind: k.kind, Label: s.Kind, Target: s.Target, Dialect: "sqlite", ExperimentID: id, ExperimentSeq: s.Seq})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, rid, store.StatusOK, sum, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := st.StartStep(ctx, id, s.Seq); err != nil {
			t.Fatal(err)
		}
		oc, _ := json.Marshal(Outcome{Headline: "stored headline", RunIDs: []int64{rid}})
		if err := st.FinishStep(ctx, id, s.Seq, store.StepDone, oc, ""); err != nil {
			t.Fatal(err)
		}
	}
	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	// The losses table says so too, rather than show the interval as if
	// it meant something.
	loss := in.Experiment.Sections[3].Tables[1]
	if row := loss.Rows[0]; row[len(row)-1] != "interval too wide to conclude" {
		t.Errorf("a's loss row %q, want it marked too wide to conclude", row)
	}
	// Each step kind draws what the issue asks for: backup and restore
	// time per target (with intervals) and per cycle, fio IOPS and
	// latency percentiles per tier, the victims' losses.
	var charts []string
	for _, sec := range in.Experiment.Sections {
		for _, b := range sec.Bars {
			charts = append(charts, b.Title)
		}
	}
	backup := in.Experiment.Sections[1].Bars
	if len(backup) != 2 || strings.Join(backup[1].Categories, ",") != "a cycle 1,a cycle 2,b cycle 1,b cycle 2,c cycle 1,c cycle 2" ||
		len(backup[1].Series) != 2 || *backup[1].Series[0].Values[2] != 2**backup[1].Series[0].Values[0] {
		t.Errorf("backup charts %+v, want the means and every cycle of each target (b's backups twice a's)", backup)
	}
	for _, want := range []string{"Backup and restore time per target (s)", "Backup and restore time per cycle (s)", "fio IOPS per profile and tier",
		"fio completion latency percentiles per tier (ms)", "Victims' NOPM loss (%)"} {
		if !slices.Contains(charts, want) {
			t.Errorf("charts %q, want %q", charts, want)
		}
	}
	var buf bytes.Buffer
	if err := report.HTML(&buf, in); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	start, end := strings.Index(page, `<section id="summary" class="part">`), strings.Index(page, `<section id="system" class="part">`)
	if start < 0 || end < start {
		t.Fatalf("the report does not open with a summary (summary at %d, system at %d)", start, end)
	}
	got := html.UnescapeString(page[start:end])
	for _, want := range []string{
		params.Question,
		"Storage (fio): a: seq-read-128k read 5,869 IOPS, p99 8.356 ms; oltp-4k-qd8 read 29,087 IOPS",
		"Storage (fio): b: seq-read-128k read 5,869 IOPS (1.00× a), p99",
		"Backup: a (the baseline) backs up in 0.8 s",
		"Backup: b backs up in 1.6 s",
		"2.00× (too few cycles for an interval) the time of a; restores in",
		"Index rebuild: a rebuilds sqlite_autoindex_order_line_1 in warm 1.1",
		"while c's backups ran, victim a lost 13.2% of its NOPM against the seconds between backups",
		"Against the baseline phase, where the noisy instances ran the load too, a lost 32.8% of its NOPM; its 95% interval, -823.5% to 71.1%, is too wide to say how much.",
		"b gained 111.4% of its NOPM; its 95% interval, -666.0% to -11.7%, is too wide to say how much: a negative loss, the victim gained",
		"TPROC-H SF 0.01: a QphH@Size 326.4, Power@Size 282.5, Throughput@Size 377.1.",
		"TPROC-H SF 0.01: b QphH@Size 326.4 (×1.00 a)",
		"a (the baseline) fio seq-read-128k read 5,869 IOPS, p99 8.356 ms; backs up in 0.8 s and restores in 0.3 s;",
		"b fio seq-read-128k read 5,869 IOPS (1.00× a), p99 8.356 ms; backs up in 1.6 s (2.00× a's time)",
		"lost 22.3% of its NOPM while the neighbour's backups ran",
		"is the noisy neighbour",
		`id="summary-chart-step-1"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	if i, j := strings.Index(got, "while c's backups ran"), strings.Index(got, "Against the baseline phase"); j < i {
		t.Errorf("the loss against the baseline (at %d) comes before the victims while the backups ran (at %d)", j, i)
	}
	if t.Failed() {
		t.Logf("summary:\n%s", got)
	}
}

// TestStorageLatencyAgainstConfigured: a target behind a latency layer
// has its configured p99 drawn beside the p99 fio measured through it
// (and stated), a target without one has none.
func TestStorageLatencyAgainstConfigured(t *testing.T) {
	dir := func(d string, iops, p99 float64) summary.StorageDirection {
		return summary.StorageDirection{Direction: d, IOPS: iops, CompletionLatency: summary.StorageLatency{P50Millis: p99 / 3, P99Millis: p99, P999Millis: p99 * 2}}
	}
	disk := summary.Storage{Profiles: []summary.StorageProfile{{Profile: "oltp-4k-qd8", Directions: []summary.StorageDirection{dir("read", 20000, 0.4), dir("write", 9000, 0.9)}}}}
	slow := summary.Storage{Profiles: []summary.StorageProfile{{Profile: "oltp-4k-qd8", Directions: []summary.StorageDirection{dir("read", 900, 4.6), dir("write", 700, 6.3)}}}}
	l, err := latency.Parse("read=normal 2ms p99 4ms,write=6ms")
	if err != nil {
		t.Fatal(err)
	}
	rc := &ReportContext{Order: []string{"disk", "slow"}}
	var sec report.Section
	storageFindings(rc, &sec, []storageOf{{target: "disk", sum: disk}, {target: "slow", sum: slow, latency: &l}})
	if len(sec.Bars) != 2 {
		t.Fatalf("bars: %d, want IOPS and latency", len(sec.Bars))
	}
	lat := sec.Bars[1]
	var configured *report.BarSeries
	for i := range lat.Series {
		if lat.Series[i].Label == "configured p99" {
			configured = &lat.Series[i]
		}
	}
	if configured == nil {
		t.Fatalf("latency chart series %+v, want a configured p99", lat.Series)
	}
	want := map[string]float64{"slow: oltp-4k-qd8 read": 4, "slow: oltp-4k-qd8 write": 6}
	for i, c := range lat.Categories {
		v := configured.Values[i]
		switch w, ok := want[c]; {
		case ok && (v == nil || *v != w):
			t.Errorf("configured p99 of %s: %v, want %v ms", c, v, w)
		case !ok && v != nil:
			t.Errorf("configured p99 of %s: %v, want none (no latency layer)", c, *v)
		}
	}
	if f := strings.Join(sec.Findings, " "); !strings.Contains(f, "slow: oltp-4k-qd8 read 900 IOPS (0.04× disk), p99 4.600 ms (configured 4.000 ms)") {
		t.Errorf("findings %q, want slow's p99 against its configured one", f)
	}
}
