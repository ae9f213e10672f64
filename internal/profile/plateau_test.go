package profile

import (
	"strings"
	"testing"
)

// steps builds StepFigures from parallel slices; p99 may be nil.
func steps(vus []int, nopm []float64, p99 []float64) []StepFigures {
	out := make([]StepFigures, len(vus))
	for i := range vus {
		out[i] = StepFigures{VUs: vus[i], NOPM: Summary{N: 1, Mean: nopm[i]}}
		if p99 != nil {
			out[i].P99Millis = p99[i]
		}
	}
	return out
}

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name      string
		steps     []StepFigures
		threshold float64
		want      Verdict
		reason    []string // fragments Reason must contain
	}{
		{
			name:  "knee where the gain drops below 5%",
			steps: steps([]int{1, 2, 3, 5, 8, 13}, []float64{1000, 1900, 2700, 4000, 4100, 4300}, nil),
			want:  Verdict{PeakVUs: 13, PeakNOPM: 4300, KneeVUs: 5},
			reason: []string{"peak 4,300 NOPM at 13 VUs", "knee at 5 VUs", "going to 8 VUs changed NOPM by +2.5% (4,000 → 4,100)",
				"below the 5% threshold"},
		},
		{
			name:      "custom threshold moves the knee",
			steps:     steps([]int{1, 2, 3, 5, 8, 13}, []float64{1000, 1900, 2700, 4000, 4100, 4300}, nil),
			threshold: 0.5,
			want:      Verdict{PeakVUs: 13, PeakNOPM: 4300, KneeVUs: 2},
			reason:    []string{"knee at 2 VUs", "+42.1%", "below the 50% threshold"},
		},
		{
			name:   "falling throughput is a knee, peak before it",
			steps:  steps([]int{8, 1, 4, 2}, []float64{3000, 1000, 3200, 1800}, nil), // unsorted input
			want:   Verdict{PeakVUs: 4, PeakNOPM: 3200, KneeVUs: 4},
			reason: []string{"peak 3,200 NOPM at 4 VUs", "knee at 4 VUs: going to 8 VUs changed NOPM by -6.2%"},
		},
		{
			name: "latency grows faster than throughput",
			steps: steps([]int{1, 2, 4, 8}, []float64{1000, 1950, 3500, 4200},
				[]float64{10, 10.5, 12, 24}),
			want:   Verdict{PeakVUs: 8, PeakNOPM: 4200, KneeVUs: 4},
			reason: []string{"knee at 4 VUs: going to 8 VUs raised p99 latency by +100.0% (12.0 → 24.0 ms) but NOPM only by +20.0%"},
		},
		{
			name:   "no knee yet",
			steps:  steps([]int{1, 2, 4}, []float64{1000, 1900, 3600}, []float64{5, 5.2, 5.5}),
			want:   Verdict{PeakVUs: 4, PeakNOPM: 3600},
			reason: []string{"no knee up to 4 VUs", "plateau lies beyond this sweep"},
		},
		{
			name:   "one step",
			steps:  steps([]int{89}, []float64{1234567}, nil),
			want:   Verdict{PeakVUs: 89, PeakNOPM: 1234567},
			reason: []string{"peak 1,234,567 NOPM at 89 VUs", "one step only"},
		},
		{
			name:   "no steps",
			want:   Verdict{},
			reason: []string{"no steps"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Analyze(tt.steps, tt.threshold)
			if got.PeakVUs != tt.want.PeakVUs || got.PeakNOPM != tt.want.PeakNOPM || got.KneeVUs != tt.want.KneeVUs {
				t.Errorf("Analyze() = peak %d VUs %v NOPM knee %d, want peak %d VUs %v NOPM knee %d (reason %q)",
					got.PeakVUs, got.PeakNOPM, got.KneeVUs, tt.want.PeakVUs, tt.want.PeakNOPM, tt.want.KneeVUs, got.Reason)
			}
			for _, frag := range tt.reason {
				if !strings.Contains(got.Reason, frag) {
					t.Errorf("Reason = %q, want it to contain %q", got.Reason, frag)
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
		if got := formatThousands(tt.in); got != tt.want {
			t.Errorf("formatThousands(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
