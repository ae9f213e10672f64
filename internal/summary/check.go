package summary

import "github.com/oltplab/oltplab/internal/tpcc"

// Check is what a consistency check (kind check) stores as its summary:
// each condition of TPC-C clause 3.3.2 with its verdict.
type Check struct {
	// AfterBuild: the database was still in its initial population, so
	// the conditions that hold only then were evaluated too.
	AfterBuild bool               `json:"after_build"`
	Passed     bool               `json:"passed"`
	Conditions []tpcc.CheckResult `json:"conditions"`
	Seconds    float64            `json:"seconds"`
}

// Headline is the check's verdict.
func (s Check) Headline() string {
	if s.Passed {
		return "all conditions passed"
	}
	return "CONDITIONS FAILED"
}

// Sampling: a check samples nothing.
func (s Check) Sampling() *Monitor { return nil }
