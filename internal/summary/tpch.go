package summary

import (
	"fmt"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/tpch"
)

// TPCHBuild is what a TPC-H build (kind tpch-build) stores as its
// summary: the stored form of tpchload.Result.
type TPCHBuild struct {
	Dialect  string           `json:"dialect"`
	Scale    string           `json:"scale"`
	Workers  int              `json:"workers"`
	Dropped  bool             `json:"dropped,omitempty"`
	BuiltAt  time.Time        `json:"built_at"`
	QGenSeed int64            `json:"qgen_seed"`
	Rows     map[string]int64 `json:"rows"`
	// TotalRows is the rows of the eight tables.
	TotalRows      int64   `json:"total_rows"`
	TextSeconds    float64 `json:"text_seconds"`
	LoadSeconds    float64 `json:"load_seconds"`
	IndexSeconds   float64 `json:"index_seconds"`
	AnalyzeSeconds float64 `json:"analyze_seconds"`
	TotalSeconds   float64 `json:"total_seconds"`
}

// Headline is the build's scale, size and time.
func (s TPCHBuild) Headline() string {
	return fmt.Sprintf("TPC-H SF %s, %d rows in %.1f s (load %.1f s)", s.Scale, s.TotalRows, s.TotalSeconds, s.LoadSeconds)
}

// Sampling: a build samples nothing.
func (s TPCHBuild) Sampling() *Monitor { return nil }

// TPCHCheck is what a check of a TPC-H database (kind tpch-check) stores:
// each table's rows against what they must be, each foreign key's rows
// without a referenced row, and the orders' line items.
type TPCHCheck struct {
	Scale   string             `json:"scale"`
	RF1Sets int                `json:"rf1_sets"`
	RF2Sets int                `json:"rf2_sets"`
	Passed  bool               `json:"passed"`
	Checks  []tpch.CheckResult `json:"checks"`
	Seconds float64            `json:"seconds"`
}

// Headline is the check's verdict.
func (s TPCHCheck) Headline() string {
	failed := 0
	for _, c := range s.Checks {
		if !c.Passed && !c.Skipped {
			failed++
		}
	}
	if s.Passed {
		return fmt.Sprintf("TPC-H SF %s: all %d checks passed", s.Scale, len(s.Checks))
	}
	return fmt.Sprintf("TPC-H SF %s: %d of %d CHECKS FAILED", s.Scale, failed, len(s.Checks))
}

// Sampling: a check samples nothing.
func (s TPCHCheck) Sampling() *Monitor { return nil }

// TPCH is what a run of TPC-H's tests (kind tpch) stores: the stored form
// of tpchdriver.Result (every query's and refresh function's time per
// stream, Power@Size, Throughput@Size and QphH@Size, or why each is
// absent), with what the samplers saw. Its figures are TPROC-H style:
// measured as TPC-H clause 5.4 defines them, never audited.
type TPCH struct {
	Dialect             string                 `json:"dialect"`
	Scale               string                 `json:"scale"`
	Test                string                 `json:"test"`
	Streams             int                    `json:"streams"`
	Seed                int64                  `json:"seed"`
	Validation          bool                   `json:"validation_params,omitempty"`
	QueryTimeoutSeconds float64                `json:"query_timeout_seconds,omitempty"`
	Power               *tpch.PowerResult      `json:"power,omitempty"`
	Throughput          *tpch.ThroughputResult `json:"throughput,omitempty"`
	QphH                *float64               `json:"qphh_at_size,omitempty"`
	QphHAbsent          string                 `json:"qphh_absent,omitempty"`
	Notes               []string               `json:"notes,omitempty"`
	Interrupted         bool                   `json:"interrupted,omitempty"`
	Monitor             Monitor                `json:"monitor"`
}

// Headline is the run's figures, each labelled TPROC-H, or why it has
// none.
func (s TPCH) Headline() string {
	var parts []string
	if p := s.Power; p != nil {
		if p.Power != nil {
			parts = append(parts, fmt.Sprintf("Power@Size %.1f", *p.Power))
		} else {
			parts = append(parts, "no Power@Size ("+firstReason(p.Absent)+")")
		}
	}
	if t := s.Throughput; t != nil {
		if t.Throughput != nil {
			parts = append(parts, fmt.Sprintf("Throughput@Size %.1f (%d streams)", *t.Throughput, len(t.Streams)))
		} else {
			parts = append(parts, "no Throughput@Size ("+firstReason(t.Absent)+")")
		}
	}
	if s.QphH != nil {
		parts = append(parts, fmt.Sprintf("QphH@Size %.1f", *s.QphH))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("TPROC-H SF %s: nothing measured", s.Scale)
	}
	return fmt.Sprintf("TPROC-H SF %s %s: %s", s.Scale, s.TestName(), strings.Join(parts, ", "))
}

// TestName names the tests the run ran: "power test", "throughput
// test", or "performance test" for both (clause 5.3.2).
func (s TPCH) TestName() string {
	switch s.Test {
	case "power", "throughput":
		return s.Test + " test"
	case "both":
		return "performance test"
	}
	return s.Test
}

// firstReason is the first thing an absent figure's reason names.
func firstReason(absent string) string {
	r := strings.TrimPrefix(absent, "not computed: ")
	if i := strings.IndexAny(r, ",("); i > 0 {
		r = strings.TrimSpace(r[:i])
	}
	return r
}

// Sampling is what the samplers saw during the tests.
func (s TPCH) Sampling() *Monitor { return &s.Monitor }
