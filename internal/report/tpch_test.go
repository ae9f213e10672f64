package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// tpchFixture is an experiment of one TPC-H step on two targets, as the
// tpch step reports it: its tables, then bars of each query's interval in
// the power test (two repeats: whiskers; the second target's ratios over
// its bars; its Q9 cut off on every repeat) and of each throughput
// stream.
func tpchFixture() Input {
	bars := func(title string, slow float64, ranged bool) BarChart {
		c := BarChart{Title: title, Note: "Mean over the repeats.", YLabel: "seconds"}
		for q := range 22 {
			c.Categories = append(c.Categories, fmt.Sprintf("Q%d", q+1))
		}
		for i, name := range []string{"nvme", "sata"} {
			s := BarSeries{Label: name}
			if ranged {
				s.Lo, s.Hi = make([]*float64, 22), make([]*float64, 22)
			}
			if i > 0 {
				s.Texts = make([]string, 22)
			}
			for q := range 22 {
				v := 0.3 + 2*math.Abs(math.Sin(float64(q+1)))
				if i > 0 {
					if q == 8 && ranged {
						s.Values = append(s.Values, nil)
						continue
					}
					v *= slow
					s.Texts[q] = fmt.Sprintf("×%.2f", slow)
				}
				s.Values = append(s.Values, &v)
				if ranged {
					lo, hi := v*0.9, v*1.1
					s.Lo[q], s.Hi[q] = &lo, &hi
				}
			}
			c.Series = append(c.Series, s)
		}
		return c
	}
	return Input{Experiment: &Experiment{ID: 9, Name: "tpch-tiers", Status: "ok", Baseline: "nvme",
		Targets: []ExperimentTarget{{Name: "nvme", Display: "postgres on nvme (managed)", Dialect: "postgres"},
			{Name: "sata", Display: "postgres on sata (managed)", Dialect: "postgres"}},
		Schedule: []ScheduleEntry{{Seq: 1, Target: "nvme", Step: "tpch", State: "done", Attempts: 1, Headline: "TPROC-H SF 0.1 performance test: QphH@Size 812.0"},
			{Seq: 2, Target: "sata", Step: "tpch", State: "done", Attempts: 1, Headline: "TPROC-H SF 0.1 performance test: QphH@Size 402.5"}},
		Sections: []Section{{Title: "Step 1: TPC-H SF 0.1: power and throughput tests, 2 stream(s) × 2", Kind: "tpch",
			Tables: []Table{{Title: "TPROC-H figures at SF 0.1", Header: []string{"Target", "QphH@Size"}, Right: []bool{false, true},
				Rows: [][]string{{"nvme", "812.0"}, {"sata", "402.5"}}}},
			Bars: []BarChart{bars("Power test: each query's interval (s)", 2, true),
				bars("Throughput test, stream 1: each query's interval (s)", 1.5, false),
				bars("Throughput test, stream 2: each query's interval (s)", 1.5, false)}}}}}
}

// TestTPCHHTMLInBrowser: a TPC-H step's part of the study report draws
// its bar charts over the 22 queries in Chromium: every bar of every
// target with a non-zero size, whiskers where there are repeats, "n/a"
// where a query has no interval (and the note says which), the ratios
// over the bars, and no script error.
func TestTPCHHTMLInBrowser(t *testing.T) {
	page, got := checkInBrowser(t, tpchFixture(), nil, nil)
	checkParts(t, got, map[string]int{"summary": 0, "system": 0, "tpch": 0, "method": 0}) // every study opens with its summary
	var found bool
	for _, p := range got.Parts {
		if p.ID != "tpch" {
			continue
		}
		found = true
		if len(p.Bars) != 3 {
			t.Fatalf("tpch part drew %d bar charts, want 3 (power test, two streams)", len(p.Bars))
		}
		for i, b := range p.Bars {
			t.Logf("bars %s: %+v", b.ID, b)
			if want := fmt.Sprintf("step-1-chart-bars-%d", i+1); b.ID != want {
				t.Errorf("bar chart %d is %s, want %s", i, b.ID, want)
			}
			if b.Width < 300 {
				t.Errorf("bars %s are %.0f px wide, want at least 300", b.ID, b.Width)
			}
			wantSata, wantMissing, wantWhiskers := 22, 0, 0
			if i == 0 {
				wantSata, wantMissing, wantWhiskers = 21, 1, 43
			}
			if b.Series["nvme"] != 22 || b.Series["sata"] != wantSata || b.Missing != wantMissing || b.Whiskers != wantWhiskers {
				t.Errorf("bars %s: %v drawn, %d n/a, %d whiskers; want nvme 22, sata %d, %d n/a, %d whiskers",
					b.ID, b.Series, b.Missing, b.Whiskers, wantSata, wantMissing, wantWhiskers)
			}
		}
	}
	if !found {
		t.Fatalf("no tpch part in the report")
	}
	for _, s := range []string{"No figure for sata at Q9", "×2.00</text>", ">Q22</text>", "sata Q1: "} {
		if !strings.Contains(page, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}
