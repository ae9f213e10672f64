package plan_test

import (
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
)

// TestFileEncode: a plan built as a value is written in the plan
// language and read back as the same plan: targets, sections and steps;
// the fields a kind does not take (a neighbours step's duration) are not
// written.
func TestFileEncode(t *testing.T) {
	par := experiment.DefaultParallel()
	par.VUs, par.Rampup, par.Duration, par.Grace, par.MaxRetries, par.Seed = 2, time.Second, 3*time.Second, 0, 0, 11
	nb := experiment.DefaultNeighbours()
	nb.Noisy, nb.Cycles, nb.Interval, nb.Backup.To = []string{"m"}, 2, 5*time.Second, "/srv/backups"
	f := &plan.File{Comment: "# generated", Name: "gen", Warehouses: 3,
		Sections: []plan.Section{{Kind: "build", Options: experiment.BuildOptions{Workers: 2, Drop: true}},
			{Kind: "parallel", Options: par}, {Kind: "neighbours", Options: nb}},
		Targets: []*plan.TargetSpec{
			{Name: "u", URL: "sqlite:/srv/u: 1.db"},
			{Name: "m", Instance: plan.InstanceSpec{Engine: instance.Postgres, DataDir: "/srv/m", Memory: 64 << 20}},
		},
		Steps: []string{"build", "parallel", "neighbours"}}
	src, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	if !strings.HasPrefix(text, "# generated\nname: gen\nwarehouses: 3\n") || !strings.Contains(text, "steps: [build, parallel, neighbours]\n") {
		t.Errorf("encoded:\n%s", text)
	}
	if nbText := text[strings.Index(text, "neighbours:"):]; strings.Contains(nbText[:strings.Index(nbText, "targets:")], "duration") {
		t.Errorf("a neighbours section with a duration:\n%s", text)
	}
	p, err := plan.Decode("(gen)", src)
	if err != nil {
		t.Fatalf("decode:\n%s\n%v", text, err)
	}
	if got := p.Targets[0].SQLiteFile(); got != "/srv/u: 1.db" {
		t.Errorf("url target: got %q", got)
	}
	m := p.Targets[1]
	if !m.Managed() || m.Instance.Engine != instance.Postgres || m.Instance.DataDir != "/srv/m" || m.Instance.Memory != 64<<20 {
		t.Errorf("managed target: got %+v", m.Instance)
	}
	for i, want := range []string{
		"build 3 warehouse(s) with 2 worker(s), dropping an existing schema",
		"parallel: 2 VU(s) on each of 2 targets at once, ramp-up 1s, 3s measured, skew tolerance 1s",
		"neighbours: baseline of 10s with all 2 targets loaded (4 VU(s) each), then m back up 2 time(s) every 5s while the others run the load; ramp-up 2m0s",
	} {
		if got := p.Steps[i].Step.Describe(); got != want {
			t.Errorf("step %d: got %q, want %q", i, got, want)
		}
	}
}
