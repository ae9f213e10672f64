package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestBackupStep: a plan's backup step runs the cycles on its target
// (paths relative to the plan), stores them tied to the experiment, and
// gives the report a row per cycle; a plan without `to` is refused at
// its line.
func TestBackupStep(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	p := decodeIn(t, dir, `name: bk
warehouses: 1
build: {workers: 1}
backup: {to: backups, cycles: 2}
targets:
  - {name: lite, url: "sqlite:lite.db"}
steps: [build, backup]
`)
	if err := plan.Validate(context.Background(), p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	st := openStore(t, dir)
	// Interrupted during its second cycle, then resumed: the backup starts
	// over and its first attempt no longer counts.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true, Observer: Observer{Scenario: scenario.Observer{
		Note: func(m string) {
			if strings.HasPrefix(m, "cycle 2: backup") {
				cancel()
			}
		}}}}
	id, err := r.Run(ctx, p)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: got %v, want context.Canceled", err)
	}
	e, _ := st.GetExperiment(context.Background(), id)
	if err := st.ClaimExperiment(context.Background(), id, e.Owner, ""); err != nil {
		t.Fatal(err)
	}
	r.Observer = Observer{}
	if err := r.Resume(context.Background(), id, nil); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	all, _ := st.ListRuns(context.Background(), store.RunFilter{ExperimentID: id, Kind: store.KindBackup})
	if len(all) != 2 || all[1].Status != store.StatusPartial || all[1].Superseded == "" {
		t.Errorf("backup runs: %+v, want the interrupted one partial and superseded, then the resumed one", all)
	}
	steps, err := st.ExperimentSteps(context.Background(), id)
	if err != nil || len(steps) != 2 || steps[1].State != store.StepDone || !strings.Contains(string(steps[1].Outcome), `"headline":"2 backup(s): `) {
		t.Fatalf("steps: %+v, %v; want the backup done with its headline", steps, err)
	}
	runs, err := st.ListRuns(context.Background(), store.RunFilter{ExperimentID: id, Kind: store.KindBackup, Counting: true})
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusOK {
		t.Fatalf("backup runs of the experiment: %+v, %v; want one ok", runs, err)
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "backups")); err != nil || len(entries) != 0 {
		t.Errorf("backups directory (relative to the plan): %v, %d entries; want it, emptied", err, len(entries))
	}
	in, err := Report(context.Background(), st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	sec := in.Experiment.Sections[1]
	if len(sec.Tables) != 1 || len(sec.Tables[0].Rows) != 2 {
		t.Fatalf("backup section: %+v, want a row per cycle", sec)
	}
	if row := sec.Tables[0].Rows[1]; row[0] != "lite" || row[1] != "online" || row[2] != "2" || row[len(row)-1] != "passed" {
		t.Errorf("second cycle's row: %q", row)
	}

	bad := filepath.Join(dir, "bad.yaml")
	src := "name: x\nwarehouses: 1\ntargets:\n  - {name: a, url: \"sqlite:a.db\"}\nsteps:\n  - backup: {cycles: 2}\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Decode(bad, []byte(src)); err == nil || !strings.Contains(err.Error(), "to") {
		t.Errorf("a backup without to: got %v, want an error naming it", err)
	}
}
