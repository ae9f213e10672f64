package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestLicencesExample runs examples/licences.yaml (made small: one
// warehouse, two short steps) with `oltplab experiment run` and checks
// the cost table of its report against a hand computation from the
// plan's prices and the NOPM the runs stored: SQL Server Standard's
// 2-core packs at 3,717 USD with a 4-core minimum, so one core and two
// both license 4 cores; a VM at 0.0416 and 0.0832 USD an hour for 3 years;
// cost per 1,000 NOPM at each target's peak; the saving against the
// two-core baseline.
func TestLicencesExample(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	if runtime.NumCPU() < 2 {
		t.Skip("the plan confines one instance to CPUs 0-1")
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "licences.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := reachableDir(t)
	plan := string(src)
	for _, r := range []struct{ old, new string }{
		{"warehouses: 2", "warehouses: 1"},
		{"vus: [1, 4]", "vus: [1, 2]"},
		{"rampup: 5s", "rampup: 300ms"},
		{"duration: 20s", "duration: 2s"},
		{"repeat: 3", "repeat: 1"},
		{"memory: 256MB", "memory: 64MB"},
		{"/var/tmp/oltplab-examples/licences", dir},
	} {
		if !strings.Contains(plan, r.old) {
			t.Fatalf("examples/licences.yaml no longer has %q: update this test", r.old)
		}
		plan = strings.ReplaceAll(plan, r.old, r.new)
	}
	file := filepath.Join(t.TempDir(), "licences.yaml")
	if err := os.WriteFile(file, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(storeEnv(t), "XDG_RUNTIME_DIR="+t.TempDir())
	r := oltplab(t, env, "experiment", "run", file)
	if r.code == exitControl {
		testenv.Unavailable(t, testenv.Root, "this host cannot confine an instance to CPUs: "+r.err)
	}
	if r.code != 0 {
		t.Fatalf("experiment run: exit %d: %s", r.code, r.err)
	}
	md := oltplab(t, env, "report", "--experiment", "1", "--format", "md")
	if md.code != 0 {
		t.Fatalf("report: exit %d: %s", md.code, md.err)
	}

	// The hand computation.
	const pack, hours = 3717.0, 730 * 12 * 3 // USD per 2-core pack; hours in 3 years
	licence := 2 * pack                      // 1 or 2 cores: the 4-core minimum, 2 packs
	total := map[string]float64{"local-1c": licence + 0.0416*hours, "local-2c": licence + 0.0832*hours}
	if got := total["local-1c"]; math.Abs(got-8527.248) > 1e-6 {
		t.Fatalf("hand computation: local-1c total %v, want 7,434 + 1,093.248", got)
	}
	peak := storedPeaks(t, env)
	for _, name := range []string{"local-1c", "local-2c"} {
		p, ok := peak[name]
		if !ok {
			t.Fatalf("no stored run of %s", name)
		}
		saving := "baseline"
		if name == "local-1c" {
			saving = usd(total["local-2c"] - total["local-1c"])
		}
		// The summary's cost table: total, peak NOPM, at VUs, cost per
		// 1,000 NOPM, saving.
		row := fmt.Sprintf("| %s | %s | %s | %d | %s | %s |", name, usd(total[name]), commas(math.Round(p.nopm)), p.vus,
			usd(total[name]/(p.nopm/1000)), saving)
		if !strings.Contains(md.out, row) {
			t.Errorf("report lacks the cost row %q", row)
		}
	}
	for _, formula := range []string{
		"local-1c cores: 1 core, the CPUs the managed instance was confined to (cpus: 0)",
		"local-1c licensed cores: max(4 cores minimum per server, ceil(1 core / 2 cores per pack) × 2) = 4 cores",
		"local-2c licensed cores: max(4 cores minimum per server, ceil(2 cores / 2 cores per pack) × 2) = 4 cores",
		"4 licensed cores / 2 cores per pack = 2 packs × 3,717 USD = 7,434 USD",
		"0.0416 USD per hour × 730 hours per month × 12 months × 3 years = 1,093.25 USD",
		"9,620.50 USD (local-2c) − 8,527.25 USD (local-1c) = 1,093.25 USD",
	} {
		if !strings.Contains(md.out, formula) {
			t.Errorf("report lacks the formula %q", formula)
		}
	}
}

type storedPeak struct {
	vus  int
	nopm float64
}

// storedPeaks reads the stored runs of experiment 1 and returns, per
// target, the step with the highest mean NOPM.
func storedPeaks(t *testing.T, env []string) map[string]storedPeak {
	t.Helper()
	path := strings.TrimPrefix(env[0], "OLTPLAB_RESULTS=")
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: 1, Kind: store.KindRun, Counting: true})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		target string
		vus    int
	}
	sum, n := map[key]float64{}, map[key]int{}
	for _, r := range runs {
		if r.Status != store.StatusOK {
			continue
		}
		var res driver.Result
		if err := json.Unmarshal(r.Summary, &summary.Run{Result: &res}); err != nil {
			t.Fatal(err)
		}
		k := key{strings.TrimPrefix(r.Label, "licences/"), r.VUs}
		sum[k] += res.NOPM
		n[k]++
	}
	out := map[string]storedPeak{}
	for k, s := range sum {
		mean := s / float64(n[k])
		if mean > out[k.target].nopm {
			out[k.target] = storedPeak{k.vus, mean}
		}
	}
	return out
}

// usd writes an amount as the report does, by hand: to the cent, with
// thousands separators, no decimals when whole.
func usd(v float64) string {
	cents := math.Round(v * 100)
	s := commas(math.Floor(math.Abs(cents) / 100))
	if c := int64(math.Abs(cents)) % 100; c != 0 {
		s += fmt.Sprintf(".%02d", c)
	}
	if cents < 0 {
		s = "−" + s
	}
	return s + " USD"
}

func commas(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
