package cost

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// loadExample parses examples/licence-study.yaml, the prices of the SQL
// Server licence study.
func loadExample(t *testing.T) Sheet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "licence-study.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSheet(b)
	if err != nil {
		t.Fatalf("examples/licence-study.yaml: %v", err)
	}
	return s
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// TestWorkedExampleSQLServer reproduces METHODOLOGY.md's licence study
// from examples/licence-study.yaml, to the dollar: SQL Server Standard at
// 3,717 USD per 2-core pack with at least 4 cores per VM; totals of
// 34,075 USD (4 cores on SSD), 41,509 USD (8 cores on SSD) and 56,121 USD
// (16 cores on HDD), hardware and OS included; 4 cores on SSD save
// 22,046 USD against 16 cores on HDD.
//
// TPM of ssd-4c and hdd-16c are the study's averages (243,714 and
// 197,532); the study publishes no NOPM and no TPM for 8 cores, so those
// are test inputs.
func TestWorkedExampleSQLServer(t *testing.T) {
	sheet := loadExample(t)
	if got, want := len(sheet), 5; got != want {
		t.Fatalf("targets: got %d (%v), want %d", got, sheet.Names(), want)
	}
	steps := map[string]Step{
		"hdd-16c": {VUs: 89, NOPM: 43_000, TPM: 197_532},
		"ssd-4c":  {VUs: 89, NOPM: 53_000, TPM: 243_714},
		"ssd-8c":  {VUs: 89, NOPM: 60_000, TPM: 270_000},
	}
	var targets []Target
	for _, name := range []string{"hdd-16c", "ssd-4c", "ssd-8c"} {
		p, ok := sheet.Lookup(name)
		if !ok {
			t.Fatalf("examples/licence-study.yaml has no target %s", name)
		}
		targets = append(targets, Target{Name: name, Prices: p, Steps: []Step{{VUs: 1, NOPM: 1000, TPM: 4000}, steps[name]}})
	}
	tab, err := Compute(targets, Options{Baseline: "hdd-16c"})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Currency != "USD" || tab.Years != 3 {
		t.Errorf("table: got %s over %d years, want USD over 3", tab.Currency, tab.Years)
	}

	// The hand computation.
	const pack = 3717.0
	want := map[string]struct {
		licensed          int
		licence, hardware float64
		total             float64
	}{
		"hdd-16c": {16, 8 * pack, 26_385, 26_385 + 8*pack}, // 29,736 + 26,385 = 56,121
		"ssd-4c":  {4, 2 * pack, 26_641, 26_641 + 2*pack},  //  7,434 + 26,641 = 34,075
		"ssd-8c":  {8, 4 * pack, 26_641, 26_641 + 4*pack},  // 14,868 + 26,641 = 41,509
	}
	studyTotals := map[string]float64{"hdd-16c": 56_121, "ssd-4c": 34_075, "ssd-8c": 41_509}
	for _, r := range tab.Rows {
		w := want[r.Target]
		if w.total != studyTotals[r.Target] {
			t.Fatalf("hand computation of %s: %v, study says %v", r.Target, w.total, studyTotals[r.Target])
		}
		if got := int(r.LicensedCores.Value); got != w.licensed {
			t.Errorf("%s licensed cores: got %d, want %d", r.Target, got, w.licensed)
		}
		if len(r.Components) != 2 {
			t.Fatalf("%s components: got %+v, want hardware and db licence", r.Target, r.Components)
		}
		if got := r.Components[0].Value; got != w.hardware {
			t.Errorf("%s hardware: got %v, want %v", r.Target, got, w.hardware)
		}
		if got := r.Components[1].Value; got != w.licence {
			t.Errorf("%s licence: got %v, want %v", r.Target, got, w.licence)
		}
		if got := r.Total.Value; got != w.total {
			t.Errorf("%s total: got %v, want %v", r.Target, got, w.total)
		}
		s := steps[r.Target]
		if r.Peak == nil || r.Peak.VUs != 89 {
			t.Fatalf("%s peak: got %+v, want the 89-VU step", r.Target, r.Peak)
		}
		if got, want := r.Peak.PerKNOPM.Value, w.total/(s.NOPM/1000); !near(got, want) {
			t.Errorf("%s cost per 1,000 NOPM: got %v, want %v", r.Target, got, want)
		}
		if got, want := r.Peak.PerKTPM.Value, w.total/(s.TPM/1000); !near(got, want) {
			t.Errorf("%s cost per 1,000 TPM: got %v, want %v", r.Target, got, want)
		}
	}
	ssd4 := tab.Rows[1]
	if got, want := ssd4.Saving.Value, 22_046.0; got != want {
		t.Errorf("ssd-4c saving vs hdd-16c: got %v, want %v", got, want)
	}
	if got, want := ssd4.SavingPct.Value, 22_046.0/56_121*100; !near(got, want) {
		t.Errorf("ssd-4c saving %%: got %v, want %v", got, want)
	}
	if got, want := tab.Rows[2].Saving.Value, 56_121.0-41_509; got != want {
		t.Errorf("ssd-8c saving vs hdd-16c: got %v, want %v", got, want)
	}
	if tab.Rows[0].Saving != nil {
		t.Errorf("the baseline has a saving against itself: %+v", tab.Rows[0].Saving)
	}
	// Cost per 1,000 TPM in the study's terms: 34,075 / 243.714 and
	// 56,121 / 197.532.
	if got := ssd4.Peak.PerKTPM.Text; got != "139.82 USD per 1,000 TPM" {
		t.Errorf("ssd-4c per 1,000 TPM: got %q", got)
	}
	if got := tab.Rows[0].Peak.PerKTPM.Text; got != "284.11 USD per 1,000 TPM" {
		t.Errorf("hdd-16c per 1,000 TPM: got %q", got)
	}

	// The formulas a reader redoes by hand.
	golden := []struct{ name, got, want string }{
		{"licensed cores", ssd4.LicensedCores.Formula,
			"max(4 cores minimum per server, ceil(4 cores / 2 cores per pack) × 2) = 4 cores"},
		{"licence", ssd4.Components[1].Formula,
			"4 licensed cores / 2 cores per pack = 2 packs × 3,717 USD = 7,434 USD"},
		{"hardware", ssd4.Components[0].Formula,
			"26,641 USD × 3 years of the period / 3 years of amortisation = 26,641 USD"},
		{"total", ssd4.Total.Formula,
			"26,641 USD hardware + 7,434 USD db licence (Standard) = 34,075 USD"},
		{"per 1,000 NOPM", ssd4.Peak.PerKNOPM.Formula,
			"34,075 USD / (53,000 NOPM / 1,000) = 642.92 USD per 1,000 NOPM"},
		{"per 1,000 TPM", ssd4.Peak.PerKTPM.Formula,
			"34,075 USD / (243,714 TPM / 1,000) = 139.82 USD per 1,000 TPM"},
		{"saving", ssd4.Saving.Formula,
			"56,121 USD (hdd-16c) − 34,075 USD (ssd-4c) = 22,046 USD"},
		{"saving %", ssd4.SavingPct.Formula,
			"22,046 USD / 56,121 USD × 100 = 39.28%"},
		{"saving per 1,000 NOPM", ssd4.PeakPerKNOPMSavingPct.Formula,
			"(1,305.14 USD per 1,000 NOPM − 642.92 USD per 1,000 NOPM) / 1,305.14 USD per 1,000 NOPM × 100 = 50.74%"},
		{"hdd licensed cores", tab.Rows[0].LicensedCores.Formula,
			"max(4 cores minimum per server, ceil(16 cores / 2 cores per pack) × 2) = 16 cores"},
		{"hdd licence", tab.Rows[0].Components[1].Formula,
			"16 licensed cores / 2 cores per pack = 8 packs × 3,717 USD = 29,736 USD"},
	}
	for _, g := range golden {
		if g.got != g.want {
			t.Errorf("%s formula:\n got %q\nwant %q", g.name, g.got, g.want)
		}
	}
}

// TestExampleManagedInstances: 1 and 2 cores are both below the 4-core
// minimum, so both license 4 cores for 7,434 USD.
func TestExampleManagedInstances(t *testing.T) {
	sheet := loadExample(t)
	for _, name := range []string{"local-1c", "local-2c"} {
		p, _ := sheet.Lookup(name)
		o, err := p.Ownership(0, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if o.LicensedCores.Value != 4 || o.Total.Value != 2*3717 {
			t.Errorf("%s: got %v licensed cores, total %v; want 4 and 7,434", name, o.LicensedCores.Value, o.Total.Value)
		}
	}
}
