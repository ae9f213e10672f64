package profile

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// steps builds StepFigures from parallel slices; tpm and p99 may be nil.
func steps(vus []int, nopm, tpm, p99 []float64) []StepFigures {
	out := make([]StepFigures, len(vus))
	for i := range vus {
		out[i] = StepFigures{VUs: vus[i], NOPM: Summary{N: 1, Mean: nopm[i]}}
		if tpm != nil {
			out[i].TPM = Summary{N: 1, Mean: tpm[i]}
		}
		if p99 != nil {
			out[i].P99Millis = p99[i]
		}
	}
	return out
}

// studyCurve is a sweep of the studies in METHODOLOGY.md: Fibonacci
// virtual users, TPM per user given, NOPM = 0.22 TPM (the NOPM/TPM ratio
// of that database).
func studyCurve(perUserTPM []float64) []StepFigures {
	vus := []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89}
	tpm := make([]float64, len(vus))
	nopm := make([]float64, len(vus))
	for i, v := range vus {
		tpm[i] = perUserTPM[i] * float64(v)
		nopm[i] = 0.22 * tpm[i]
	}
	return steps(vus, nopm, tpm, nil)
}

// nvmeCurve: NVMe, 1,200 warehouses, about 1.46 M TPM at 89 users with
// no plateau, TPM per user peaking around 3 users and falling after as
// contention grows.
func nvmeCurve() []StepFigures {
	return studyCurve([]float64{30000, 33000, 35000, 33000, 31000, 28000, 25000, 22000, 19000, 16404})
}

// sataCurve: SATA SSD, the same database: about 0.7 M TPM at 89 users,
// where each added user brings little.
func sataCurve() []StepFigures {
	return studyCurve([]float64{28000, 30000, 31667, 30000, 28750, 25385, 21429, 16471, 11636, 7865})
}

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name      string
		steps     []StepFigures
		threshold float64
		want      Verdict
		reason    []string // fragments Reason must contain
		not       []string // fragments it must not contain
	}{
		{
			name:   "NVMe study curve: no plateau up to 89 VUs, per-user TPM peaks at 3",
			steps:  nvmeCurve(),
			want:   Verdict{PeakVUs: 89, PeakNOPM: 0.22 * 16404 * 89, Shape: ShapeScaling, PerUserPeakVUs: 3},
			reason: []string{"still scaling, no plateau up to 89 VUs", "throughput per user peaks at 3 VUs"},
		},
		{
			name:   "SATA study curve: plateau from 55 VUs",
			steps:  sataCurve(),
			want:   Verdict{PeakVUs: 89, PeakNOPM: 0.22 * 7865 * 89, KneeVUs: 55, Shape: ShapePlateau, PerUserPeakVUs: 3},
			reason: []string{"plateau from 55 VUs", "under 10% of the 6,160 NOPM per user at 1 VUs"},
		},
		{
			// Observed: a healthy 1 -> 2 VU step was called a knee
			// because p99 latency grew faster than NOPM.
			name:   "healthy scaling with rising latency is no knee",
			steps:  steps([]int{1, 2}, []float64{10000, 15150}, nil, []float64{1.0, 1.789}),
			want:   Verdict{PeakVUs: 2, PeakNOPM: 15150, Shape: ShapeScaling, PerUserPeakVUs: 1},
			reason: []string{"still scaling, no plateau up to 2 VUs", "brought 5,150 NOPM, 51.5% of the 10,000 NOPM per user"},
			not:    []string{"knee at 1"},
		},
		{
			// Observed: a falling curve was said to change "by -25.3%,
			// below the 5% threshold".
			name:   "falling curve is called falling",
			steps:  steps([]int{1, 2, 4}, []float64{36629, 26789, 26772}, nil, nil),
			want:   Verdict{PeakVUs: 1, PeakNOPM: 36629, KneeVUs: 1, Shape: ShapeFalling, PerUserPeakVUs: 1},
			reason: []string{"NOPM falls after 1 VUs: 36,629 at 1 VUs, 26,789 at 2 VUs (-26.9%)"},
			not:    []string{"threshold"},
		},
		{
			// Observed (issue 28): "NOPM falls after 3 VUs: 21,135 at 3
			// VUs, 16,029 at 4 VUs", yet 16 VUs reached 20,693.
			name:   "a drop the next steps undo is a dip, not a fall",
			steps:  steps([]int{1, 2, 3, 4, 16}, []float64{8000, 15000, 21135, 16029, 20693}, nil, nil),
			want:   Verdict{PeakVUs: 3, PeakNOPM: 21135, KneeVUs: 3, Shape: ShapePlateau, PerUserPeakVUs: 1, Dips: []int{4}},
			reason: []string{"plateau from 3 VUs", "a dip at 4 VUs (16,029, -24.2% from 3 VUs) is not a fall: 16 VUs came back to 20,693"},
			not:    []string{"falls after"},
		},
		{
			name:   "every step a later one undoes is a dip",
			steps:  steps([]int{1, 2, 3, 4, 8, 16}, []float64{8000, 15000, 21135, 16029, 18500, 20693}, nil, nil),
			want:   Verdict{PeakVUs: 3, PeakNOPM: 21135, KneeVUs: 3, Shape: ShapePlateau, PerUserPeakVUs: 1, Dips: []int{4, 8}},
			reason: []string{"a dip at 4 VUs", "a dip at 8 VUs (18,500, -12.5% from 3 VUs) is not a fall: 16 VUs came back to 20,693"},
			not:    []string{"falls after"},
		},
		{
			name:   "a drop that persists is a fall",
			steps:  steps([]int{1, 2, 3, 4, 8, 16}, []float64{8000, 15000, 21135, 16029, 18500, 19000}, nil, nil),
			want:   Verdict{PeakVUs: 3, PeakNOPM: 21135, KneeVUs: 3, Shape: ShapeFalling, PerUserPeakVUs: 1},
			reason: []string{"NOPM falls after 3 VUs: 21,135 at 3 VUs, 16,029 at 4 VUs"},
			not:    []string{"dip"},
		},
		{
			name:   "a dip within the noise of a plateau is a plateau",
			steps:  steps([]int{1, 2, 4, 8}, []float64{1000, 1900, 3500, 3450}, nil, []float64{10, 10.5, 12, 24}),
			want:   Verdict{PeakVUs: 4, PeakNOPM: 3500, KneeVUs: 4, Shape: ShapePlateau, PerUserPeakVUs: 1},
			reason: []string{"plateau from 4 VUs", "while p99 latency went from 12.0 to 24.0 ms"},
		},
		{
			name:   "plateau then fall",
			steps:  steps([]int{8, 1, 4, 2, 16}, []float64{4050, 1000, 4000, 1900, 3000}, nil, nil), // unsorted input
			want:   Verdict{PeakVUs: 8, PeakNOPM: 4050, KneeVUs: 4, Shape: ShapePlateau, PerUserPeakVUs: 1},
			reason: []string{"plateau from 4 VUs", "then falls to 3,000 at 16 VUs (-25.9% from the peak)"},
		},
		{
			name:      "custom threshold moves the knee",
			steps:     steps([]int{1, 2, 3, 5, 8, 13}, []float64{1000, 1900, 2700, 4000, 4100, 4300}, nil, nil),
			threshold: 0.7,
			want:      Verdict{PeakVUs: 13, PeakNOPM: 4300, KneeVUs: 3, Shape: ShapePlateau, PerUserPeakVUs: 1},
			reason:    []string{"plateau from 3 VUs", "brought 650 NOPM, under 70% of the 1,000 NOPM per user at 1 VUs"},
		},
		{
			name:   "steps without a summarised repeat are left out",
			steps:  append(steps([]int{1, 2}, []float64{1000, 1900}, nil, nil), StepFigures{VUs: 4}),
			want:   Verdict{PeakVUs: 2, PeakNOPM: 1900, Shape: ShapeScaling, PerUserPeakVUs: 1},
			reason: []string{"no plateau up to 2 VUs"},
		},
		{
			name:   "one step",
			steps:  steps([]int{89}, []float64{1234567}, nil, nil),
			want:   Verdict{PeakVUs: 89, PeakNOPM: 1234567, PerUserPeakVUs: 89},
			reason: []string{"peak 1,234,567 NOPM at 89 VUs", "one step only"},
		},
		{
			name:   "no steps",
			want:   Verdict{},
			reason: []string{"no measured steps"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Analyze(tt.steps, tt.threshold)
			if got.PeakVUs != tt.want.PeakVUs || math.Abs(got.PeakNOPM-tt.want.PeakNOPM) > 1e-6 || got.KneeVUs != tt.want.KneeVUs ||
				got.Shape != tt.want.Shape || got.PerUserPeakVUs != tt.want.PerUserPeakVUs || !slices.Equal(got.Dips, tt.want.Dips) {
				t.Errorf("Analyze() = peak %d VUs %v NOPM knee %d %q per-user peak %d dips %v,\nwant peak %d VUs %v NOPM knee %d %q per-user peak %d dips %v (reason %q)",
					got.PeakVUs, got.PeakNOPM, got.KneeVUs, got.Shape, got.PerUserPeakVUs, got.Dips,
					tt.want.PeakVUs, tt.want.PeakNOPM, tt.want.KneeVUs, tt.want.Shape, tt.want.PerUserPeakVUs, tt.want.Dips, got.Reason)
			}
			for _, frag := range tt.reason {
				if !strings.Contains(got.Reason, frag) {
					t.Errorf("Reason = %q, want it to contain %q", got.Reason, frag)
				}
			}
			for _, frag := range tt.not {
				if strings.Contains(got.Reason, frag) {
					t.Errorf("Reason = %q, want it not to contain %q", got.Reason, frag)
				}
			}
			if strings.Contains(got.Reason, "\n") {
				t.Errorf("Reason = %q, want one line", got.Reason)
			}
		})
	}
}

func TestFormatThousands(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {999.4, "999"}, {999.5, "1,000"}, {41200, "41,200"}, {1234567.8, "1,234,568"}, {-1500, "-1,500"}, {-0.2, "0"},
	}
	for _, tt := range tests {
		if got := FormatThousands(tt.in); got != tt.want {
			t.Errorf("FormatThousands(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestVerdictOnSingleRuns: a peak, plateau or fall found from steps of
// one run each says it rests on single runs; a step of three does not.
func TestVerdictOnSingleRuns(t *testing.T) {
	three := Summary{N: 3, Mean: 2000}
	tests := []struct {
		name   string
		steps  []StepFigures
		single []int
		reason string
	}{
		{"all single", steps([]int{1, 2, 4}, []float64{1000, 1900, 1000}, nil, nil), []int{1, 2, 4}, "it rests on single runs"},
		{"one single", []StepFigures{{VUs: 1, NOPM: Summary{N: 3, Mean: 1000}}, {VUs: 2, NOPM: three}, {VUs: 4, NOPM: Summary{N: 1, Mean: 1000}}},
			[]int{4}, "at 4 VUs it rests on a single run"},
		{"none single", []StepFigures{{VUs: 1, NOPM: Summary{N: 3, Mean: 1000}}, {VUs: 2, NOPM: three}}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Analyze(tt.steps, 0)
			if len(v.SingleRuns) != len(tt.single) {
				t.Fatalf("SingleRuns = %v, want %v", v.SingleRuns, tt.single)
			}
			for i := range tt.single {
				if v.SingleRuns[i] != tt.single[i] {
					t.Errorf("SingleRuns = %v, want %v", v.SingleRuns, tt.single)
				}
			}
			if tt.reason != "" && !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("Reason %q lacks %q", v.Reason, tt.reason)
			}
			if tt.reason == "" && strings.Contains(v.Reason, "single run") {
				t.Errorf("Reason %q mentions single runs", v.Reason)
			}
		})
	}
}
