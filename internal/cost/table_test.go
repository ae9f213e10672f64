package cost

import (
	"errors"
	"strings"
	"testing"
)

func priced(name string, total float64, cores int, steps ...Step) Target {
	return Target{Name: name, Prices: Prices{Currency: "USD", Years: 3, Cores: cores, Hardware: &Hardware{Price: total}}, Steps: steps}
}

// TestObjectiveStep: the best step meeting the latency objective is the
// one with the highest NOPM whose New-Order p90 is within it; when none
// is, the row says so, with the lowest p90 there was.
func TestObjectiveStep(t *testing.T) {
	steps := []Step{
		{VUs: 8, NOPM: 9000, TPM: 40000, NewOrderP90Millis: 12},
		{VUs: 1, NOPM: 2000, TPM: 9000, NewOrderP90Millis: 1.5},
		{VUs: 2, NOPM: 3800, TPM: 17000, NewOrderP90Millis: 2.5},
		{VUs: 4, NOPM: 6000, TPM: 27000, NewOrderP90Millis: 5},
		{VUs: 16, NOPM: 8500, TPM: 38000, NewOrderP90Millis: 30},
	}
	cases := []struct {
		objective float64
		wantVUs   int // 0: no step meets it
		wantNote  string
	}{
		{5, 4, ""},
		{4.99, 2, ""},
		{100, 8, ""},
		{1.5, 1, ""},
		{1, 0, "no step meets New-Order p90 ≤ 1 ms (the lowest p90 is 1.5 ms, at 1 VU)"},
	}
	for _, c := range cases {
		tab, err := Compute([]Target{priced("a", 10000, 4, steps...)}, Options{ObjectiveP90Millis: c.objective})
		if err != nil {
			t.Fatal(err)
		}
		r := tab.Rows[0]
		if r.Peak == nil || r.Peak.VUs != 8 {
			t.Errorf("peak: got %+v, want 8 VUs", r.Peak)
		}
		switch {
		case c.wantVUs == 0 && r.Objective != nil:
			t.Errorf("objective %v ms: got the %d-VU step, want none", c.objective, r.Objective.VUs)
		case c.wantVUs != 0 && (r.Objective == nil || r.Objective.VUs != c.wantVUs):
			t.Errorf("objective %v ms: got %+v (%s), want the %d-VU step", c.objective, r.Objective, r.ObjectiveNote, c.wantVUs)
		}
		if r.ObjectiveNote != c.wantNote {
			t.Errorf("objective %v ms note: got %q, want %q", c.objective, r.ObjectiveNote, c.wantNote)
		}
		if r.Objective != nil {
			if got, want := r.Objective.PerKNOPM.Value, 10000/(r.Objective.NOPM/1000); !near(got, want) {
				t.Errorf("objective cost per 1,000 NOPM: got %v, want %v", got, want)
			}
		}
	}
	// Without latency figures the objective cannot be judged.
	tab, err := Compute([]Target{priced("a", 10000, 4, Step{VUs: 1, NOPM: 100})}, Options{ObjectiveP90Millis: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tab.Rows[0].ObjectiveNote, "no step has a New-Order p90 recorded"; got != want {
		t.Errorf("note: got %q, want %q", got, want)
	}
}

// TestPeakNotes: prices without measurements, and steps without new
// orders, have no cost per 1,000 NOPM and say why.
func TestPeakNotes(t *testing.T) {
	tab, err := Compute([]Target{priced("a", 1, 1), priced("b", 1, 1, Step{VUs: 1})}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"no measured steps", "no step delivered any new orders"} {
		r := tab.Rows[i]
		if r.Peak != nil || r.PeakNote != want {
			t.Errorf("%s: got peak %+v, note %q; want none, %q", r.Target, r.Peak, r.PeakNote, want)
		}
	}
}

// TestCoresNeeded: at the measured NOPM per core, assuming linear
// scaling; an exact multiple needs no extra core.
func TestCoresNeeded(t *testing.T) {
	cases := []struct {
		target float64
		want   int
	}{{121_857, 2}, {121_858, 3}, {1, 1}, {1_000_000, 17}}
	for _, c := range cases {
		tab, err := Compute([]Target{priced("ssd-4c", 34075, 4, Step{VUs: 89, NOPM: 243_714})}, Options{TargetNOPM: c.target})
		if err != nil {
			t.Fatal(err)
		}
		r := tab.Rows[0]
		if got := int(r.CoresNeeded.Value); got != c.want {
			t.Errorf("%v NOPM: got %d cores, want %d (%s)", c.target, got, c.want, r.CoresNeeded.Formula)
		}
	}
	tab, _ := Compute([]Target{priced("ssd-4c", 34075, 4, Step{VUs: 89, NOPM: 243_714})}, Options{TargetNOPM: 1_000_000})
	r := tab.Rows[0]
	if got, want := r.NOPMPerCore.Formula, "243,714 NOPM at 89 VUs / 4 priced cores = 60,928.5 NOPM per core (the cores the measurement ran on are unknown)"; got != want {
		t.Errorf("per core:\n got %q\nwant %q", got, want)
	}
	if got, want := r.CoresNeeded.Formula,
		"ceil(1,000,000 NOPM / 60,928.5 NOPM per core) = ceil(16.41) = 17 cores, assuming NOPM grows linearly with cores"; got != want {
		t.Errorf("cores needed:\n got %q\nwant %q", got, want)
	}
	// Without the target's cores there is no per-core figure.
	p := priced("x", 1, 0, Step{VUs: 1, NOPM: 10})
	tab, _ = Compute([]Target{p}, Options{TargetNOPM: 100})
	if tab.Rows[0].NOPMPerCore != nil || tab.Rows[0].CoresNeeded != nil {
		t.Errorf("per-core figures without cores: %+v", tab.Rows[0])
	}
}

// TestPerCoreUsesMeasuredCores: a 2-core instance priced as the 16-core
// machine its licence is bought for gave "NOPM per core 62.5" (1,000
// NOPM over the 16 priced cores). Per-core throughput divides by the
// cores the measurement ran on and says so; the priced cores stay what
// the licence counts.
func TestPerCoreUsesMeasuredCores(t *testing.T) {
	tg := priced("two", 1000, 16, Step{VUs: 4, NOPM: 1000})
	tg.Cores, tg.CoresSource = 2, "the CPUs the managed instance was confined to (cpus: 0-1)"
	tab, err := Compute([]Target{tg}, Options{TargetNOPM: 4000})
	if err != nil {
		t.Fatal(err)
	}
	r := tab.Rows[0]
	if r.Cores == nil || r.Cores.Value != 16 || r.MeasuredCores == nil || r.MeasuredCores.Value != 2 {
		t.Fatalf("cores %+v, measured %+v: want 16 priced, 2 measured", r.Cores, r.MeasuredCores)
	}
	if r.NOPMPerCore.Value != 500 || r.NOPMPerCore.Name != "NOPM per measured core at the peak" ||
		!strings.Contains(r.NOPMPerCore.Formula, "/ 2 measured cores = 500 NOPM per core (measured on 2 cores; priced for 16 cores)") {
		t.Errorf("per core %+v: want 500 over the 2 measured cores, saying so", r.NOPMPerCore)
	}
	if r.CoresNeeded.Value != 8 {
		t.Errorf("cores for 4,000 NOPM: %v, want 8 at 500 per measured core", r.CoresNeeded.Value)
	}
}

// TestCompareErrors: targets are compared only in one currency and over
// one period, against a baseline that exists.
func TestCompareErrors(t *testing.T) {
	eur := priced("b", 1, 1)
	eur.Prices.Currency = "EUR"
	long := priced("c", 1, 1)
	long.Prices.Years = 5
	bad := priced("d", 1, 1)
	bad.Prices.Hardware.Price = -1
	cases := []struct {
		name    string
		targets []Target
		o       Options
		want    string
	}{
		{"currency mismatch", []Target{priced("a", 1, 1), eur}, Options{},
			"b.currency is EUR but a.currency is USD: targets compared must be priced in one currency (convert one of them)"},
		{"period mismatch", []Target{priced("a", 1, 1), long}, Options{},
			"c.years is 5 but a.years is 3: targets compared must cover one period"},
		{"unknown baseline", []Target{priced("a", 1, 1), priced("b", 1, 1)}, Options{Baseline: "z"},
			`baseline "z" is not one of the targets (a, b)`},
		{"bad prices name their target", []Target{priced("a", 1, 1), bad}, Options{},
			"d.hardware.price must not be negative, not -1"},
		{"twice", []Target{priced("a", 1, 1), priced("a", 2, 1)}, Options{}, "a is priced twice"},
		{"none", nil, Options{}, "no targets to price"},
		{"negative objective", []Target{priced("a", 1, 1)}, Options{ObjectiveP90Millis: -1},
			"objective_p90_ms must be a positive number, not -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compute(c.targets, c.o)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *cost.Error", err)
			}
			if err.Error() != c.want {
				t.Errorf("got  %q\nwant %q", err.Error(), c.want)
			}
		})
	}
}

// TestSavingWhenDearer: a target that costs more than the baseline has a
// negative saving.
func TestSavingWhenDearer(t *testing.T) {
	tab, err := Compute([]Target{priced("base", 1000, 1), priced("dear", 1500, 1)}, Options{Baseline: "base"})
	if err != nil {
		t.Fatal(err)
	}
	s := tab.Rows[1]
	if s.Saving.Value != -500 || s.Saving.Text != "-500 USD" || !near(s.SavingPct.Value, -50) {
		t.Errorf("saving: got %+v, %+v; want -500 USD, -50%%", s.Saving, s.SavingPct)
	}
}
