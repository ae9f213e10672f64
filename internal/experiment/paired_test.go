package experiment

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
)

// TestPairedProfileStep: with interleave: targets a profile step runs
// over both targets at once, alternating run by run in ABBA order with
// the same seed in a pair; each target's runs are a profile of its own,
// the A/A check a third run of the baseline at the end. The report's
// section has the paired and the unpaired ratio side by side and its
// method part explains the pairing and the A/A check.
func TestPairedProfileStep(t *testing.T) {
	dir := t.TempDir()
	p := decodeIn(t, dir, `name: pairs
warehouses: 1
build: {workers: 1}
profile: {vus: [1], rampup: 0s, duration: 1s, grace: 0s, repeat: 3, interleave: targets, aa_check: true}
baseline: a
targets:
  - {name: a, url: "sqlite:a.db"}
  - {name: b, url: "sqlite:b.db"}
steps: [build, profile]
`)
	units := p.Schedule()
	if len(units) != 3 || units[2].TargetName() != "" {
		t.Fatalf("schedule %+v: want build per target, then one profile over both", units)
	}
	st := openStore(t, dir)
	r := &Runner{Store: st, ToolVersion: "test"}
	id, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	ctx := context.Background()
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun})
	if err != nil {
		t.Fatal(err)
	}
	label := map[int64]string{}
	for _, name := range []string{"pairs/a", "pairs/b", "pairs/a/aa"} {
		ps, err := st.ListProfiles(ctx, store.ProfileFilter{ExperimentID: id, Label: name})
		if err != nil || len(ps) != 1 {
			t.Fatalf("profile %s: %v, %v", name, ps, err)
		}
		label[ps[0].ID] = name
	}
	slices.SortFunc(runs, func(x, y store.Run) int { return int(x.ID - y.ID) })
	var order []string
	seeds := map[string][]int64{}
	for _, run := range runs {
		name := label[run.ProfileID]
		order = append(order, strings.TrimPrefix(name, "pairs/"))
		if run.Seed != nil {
			seeds[name] = append(seeds[name], *run.Seed)
		}
	}
	if want := []string{"a", "b", "b", "a", "a", "b", "a/aa"}; !slices.Equal(order, want) {
		t.Fatalf("runs in order %v, want %v (ABBA, then the A/A check)", order, want)
	}
	if a, b := seeds["pairs/a"], seeds["pairs/b"]; len(a) != 3 || !slices.Equal(a, b) {
		t.Errorf("seeds a %v, b %v: want the same seed in each pair", a, b)
	}
	steps, _ := st.ExperimentSteps(ctx, id)
	var oc Outcome
	_ = json.Unmarshal(steps[2].Outcome, &oc)
	if len(oc.Profiles) != 3 || !strings.Contains(oc.Headline, "b/a NOPM at 1 VUs, paired: ") {
		t.Errorf("outcome %+v: want three profiles and the paired ratio in the headline", oc)
	}

	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatal(err)
	}
	sec := in.Experiment.Sections[1]
	if len(sec.Profiles) != 2 || sec.Profiles[0].Label != "a" {
		t.Fatalf("section profiles %d, want a and b, a first", len(sec.Profiles))
	}
	if len(sec.Tables) != 2 || sec.Tables[0].Title != "Paired comparison with a" || len(sec.Tables[0].Rows) != 1 {
		t.Fatalf("tables %+v: want the paired comparison and the A/A check", sec.Tables)
	}
	row := sec.Tables[0].Rows[0]
	if row[1] != "b" || row[2] != "3" || !strings.Contains(row[3], "95% CI") || !strings.Contains(row[4], "×") {
		t.Errorf("paired row %q: want b, 3 pairs, a paired interval beside the unpaired ratio", row)
	}
	if aa := sec.Tables[1].Rows; len(aa) != 1 || aa[0][1] != "3" || (aa[0][5] != "held" && aa[0][5] != "HOST DRIFT") {
		t.Errorf("A/A rows %q: want one step judged against 3 runs", aa)
	}
	if len(sec.Findings) != 1 || !strings.Contains(sec.Findings[0], "b/a NOPM at 1 VUs, paired: ") {
		t.Errorf("findings %q: want the paired ratio for the summary", sec.Findings)
	}
	var md strings.Builder
	if err := report.Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Paired comparison with a") || !strings.Contains(md.String(), "- b/a NOPM at 1 VUs, paired: ") {
		t.Errorf("the study report lacks the paired table or its summary line")
	}
	method := strings.Join(in.Experiment.Method, "\n")
	if !strings.Contains(method, "Paired comparison") || !strings.Contains(method, "A/A check") {
		t.Errorf("method %q: want the paired analysis and the A/A check explained", method)
	}
}
