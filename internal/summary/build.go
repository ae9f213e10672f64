package summary

import (
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// Build is what a schema build (kind build) stores as its summary: the
// stored form of load.Result.
type Build struct {
	Dialect       string         `json:"dialect"`
	Warehouses    int            `json:"warehouses"`
	Workers       int            `json:"workers"` // load connections actually used
	Seed          uint64         `json:"seed"`
	LoadConstants tpcc.Constants `json:"load_constants"`
	Procedures    bool           `json:"procedures_installed"`
	BuiltAt       time.Time      `json:"built_at"`

	// Rows is the number of rows loaded per table name.
	Rows      map[string]int64 `json:"rows"`
	TotalRows int64            `json:"total_rows"`

	LoadSeconds       float64 `json:"load_seconds"`
	IndexSeconds      float64 `json:"index_seconds"`
	ProceduresSeconds float64 `json:"procedures_seconds"`
	AnalyzeSeconds    float64 `json:"analyze_seconds"`
	TotalSeconds      float64 `json:"total_seconds"`
	// RowsPerSec is TotalRows over LoadSeconds.
	RowsPerSec float64 `json:"rows_per_sec"`
}

// Headline is the build's size and time.
func (s Build) Headline() string {
	return fmt.Sprintf("%d warehouse(s), %d rows in %.1f s", s.Warehouses, s.TotalRows, s.TotalSeconds)
}

// Sampling: a build samples nothing.
func (s Build) Sampling() *Monitor { return nil }
