package experiment

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// TestStorageStepDecode: the storage step's options as a list or a
// string, and each bad option a one-line error at its line.
func TestStorageStepDecode(t *testing.T) {
	head := "name: s\nwarehouses: 1\ntargets:\n  - {name: a, engine: sqlite, data_dir: /tmp/a}\n  - {name: b, url: \"sqlite:b.db\"}\n"
	for _, c := range []struct {
		storage, want string
	}{
		{"storage: {profile: [oltp-4k-qd8, seq-write-128k], runtime: 2s, size: 8M, fio_options: [rwmixread=50]}", "fio oltp-4k-qd8, seq-write-128k, 2s each, 8 MiB test file"},
		{"storage: {profile: \"seq-read-128k,oltp-4k-qd8\"}", "fio seq-read-128k, oltp-4k-qd8 under"},
		{"storage: {}", "fio oltp-4k-qd8, oltp-4k-qd32, sql-8k"},
	} {
		p, err := plan.Decode("plan.yaml", []byte(head+c.storage+"\nsteps: [storage]\n"))
		if err != nil {
			t.Errorf("%s: %v", c.storage, err)
			continue
		}
		if got := p.Steps[0].Step.Describe(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: describes as %q, want it to start with %q", c.storage, got, c.want)
		}
	}
	// A server given by URL: nothing to measure on this host, said so,
	// nothing estimated, nothing touched.
	p, err := plan.Decode("plan.yaml", []byte(head+"  - {name: c, url: \"postgres://u@db.example:5432/tpcc\"}\nsteps: [storage]\n"))
	if err != nil {
		t.Fatal(err)
	}
	step, remote := p.Steps[0].Step.(Step), p.Targets[2]
	if d := step.Estimate(p, remote); d != 0 {
		t.Errorf("estimate for a URL target: %s, want 0", d)
	}
	oc, err := step.Run(context.Background(), &Exec{Plan: p, Target: &Running{Spec: remote}})
	if err != nil || !strings.HasPrefix(oc.Headline, "not measured: ") || len(oc.RunIDs) != 0 {
		t.Errorf("URL target: got %+v, %v; want not measured, nothing stored", oc, err)
	}
	for _, c := range []struct {
		storage, want string
	}{
		{"storage:\n  profile: [oltp-4k-qd8, nosuch]", `plan.yaml:7: storage.profile: unknown profile "nosuch"`},
		{"storage:\n  profile: {a: 1}", "plan.yaml:7: storage.profile: want a list of profiles or all"},
		{"storage:\n  runtime: 1500ms", "plan.yaml:8: steps[0].storage: runtime 1.5s: want whole seconds"},
		{"storage:\n  size: tiny", `plan.yaml:7: storage.size: size "tiny": want a number`},
		{"storage:\n  size: 10K", "plan.yaml:8: steps[0].storage: size 10 KiB is too small"},
		{"storage:\n  fio_options: [nokey]", "plan.yaml:7: storage.fio_options[0]:"},
		{"storage:\n  profiles: all", "plan.yaml:7: storage.profiles:"},
	} {
		_, err := plan.Decode("plan.yaml", []byte(head+c.storage+"\nsteps: [storage]\n"))
		var pe *yamldoc.Error
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want a one-line plan error starting %q", c.storage, err, c.want)
		}
	}
}

// TestStorageStep: fio on two SQLite targets' directories, 1 s per
// profile on a tiny file; a run of kind storage per target tied to the
// experiment, and the report's storage section with both directions of
// the mixed profile and the second target against the baseline.
func TestStorageStep(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	dir := t.TempDir()
	p := decodeIn(t, dir, `name: st
warehouses: 1
storage: {profile: [oltp-4k-qd8, seq-write-128k], runtime: 1s, size: 4M}
targets:
  - {name: managed, engine: sqlite, data_dir: `+filepath.Join(dir, "managed")+`}
  - {name: url, url: "sqlite:url.db"}
steps: [storage]
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	st := openStore(t, dir)
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true}
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindStorage, Counting: true})
	if err != nil || len(runs) != 2 {
		t.Fatalf("storage runs: got %d (%v), want 2", len(runs), err)
	}
	for _, r := range runs {
		if r.Status != store.StatusOK || r.ExperimentSeq == 0 {
			t.Errorf("run %d: status %s, seq %d; want ok, tied to its step", r.ID, r.Status, r.ExperimentSeq)
		}
	}
	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	if in.Experiment == nil || len(in.Experiment.Sections) != 1 || len(in.Experiment.Sections[0].Tables) != 1 {
		t.Fatalf("report: got %+v, want one storage section with one table", in.Experiment)
	}
	rows := in.Experiment.Sections[0].Tables[0].Rows
	// Per target: oltp-4k-qd8 read and write, seq-write-128k write.
	if len(rows) != 6 {
		t.Fatalf("storage rows: got %q, want 6", rows)
	}
	for i, row := range rows {
		target, dirn, ratio := row[0], row[3], row[10]
		if want := []string{"managed", "url"}[i/3]; target != want {
			t.Errorf("row %d: target %s, want %s", i, target, want)
		}
		if want := []string{"read", "write", "write"}[i%3]; dirn != want {
			t.Errorf("row %d: direction %s, want %s", i, dirn, want)
		}
		if row[4] == "0" || row[4] == "—" {
			t.Errorf("row %d: IOPS %s, want a measurement", i, row[4])
		}
		if (i < 3) != (ratio == "") || (i >= 3 && !strings.HasSuffix(ratio, "×")) {
			t.Errorf("row %d: vs baseline %q; want empty for the baseline, a ratio for the other", i, ratio)
		}
	}
}
